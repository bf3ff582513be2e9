"""Finding skills on disk: roots and precedence, the iterative walk, the snapshot cache
and the parallel cold scan (the only home of marshal data and positional rows).

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.skills.discovery.cache import (
        RACY_NS,
        Record,
        RootSnapshot,
        Stored,
        load_snapshot,
        record_from_load,
        save_snapshot,
        skill_from_record,
        snapshot_path,
    )
    from skilldeck.skills.discovery.discover import (
        DiscoveryResult,
        InvalidSkill,
        Root,
        RootScan,
        bundled_root,
        resolve_roots,
        scan_root,
    )
    from skilldeck.skills.discovery.walk import (
        DANGLING_SYMLINK,
        MAX_DEPTH,
        RESOURCE_DIRS,
        ROOT_NOT_FOUND,
        SKILL_FILENAMES,
        SKIP_DIRS,
        SYMLINK_LOOP,
        TOO_DEEP,
        UNREADABLE_DIR,
        Tree,
        diagnostic,
        link_state,
        walk_tree,
    )

_HOME: dict[str, str] = {
    "DiscoveryResult": "discover",
    "InvalidSkill": "discover",
    "Root": "discover",
    "RootScan": "discover",
    "bundled_root": "discover",
    "resolve_roots": "discover",
    "scan_root": "discover",
    "walk_tree": "walk",  # defined there: skills validate need not import discover
    "DANGLING_SYMLINK": "walk",
    "MAX_DEPTH": "walk",
    "RESOURCE_DIRS": "walk",
    "ROOT_NOT_FOUND": "walk",
    "SKILL_FILENAMES": "walk",
    "SKIP_DIRS": "walk",
    "SYMLINK_LOOP": "walk",
    "TOO_DEEP": "walk",
    "UNREADABLE_DIR": "walk",
    "Tree": "walk",
    "diagnostic": "walk",
    "link_state": "walk",
    "RACY_NS": "cache",
    "Record": "cache",
    "RootSnapshot": "cache",
    "Stored": "cache",
    "load_snapshot": "cache",
    "record_from_load": "cache",
    "save_snapshot": "cache",
    "skill_from_record": "cache",
    "snapshot_path": "cache",
}

__all__ = [
    "DANGLING_SYMLINK",
    "MAX_DEPTH",
    "RACY_NS",
    "RESOURCE_DIRS",
    "ROOT_NOT_FOUND",
    "SKILL_FILENAMES",
    "SKIP_DIRS",
    "SYMLINK_LOOP",
    "TOO_DEEP",
    "UNREADABLE_DIR",
    "DiscoveryResult",
    "InvalidSkill",
    "Record",
    "Root",
    "RootScan",
    "RootSnapshot",
    "Stored",
    "Tree",
    "bundled_root",
    "diagnostic",
    "link_state",
    "load_snapshot",
    "record_from_load",
    "resolve_roots",
    "save_snapshot",
    "scan_root",
    "skill_from_record",
    "snapshot_path",
    "walk_tree",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
