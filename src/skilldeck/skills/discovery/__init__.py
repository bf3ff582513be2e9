"""Finding skills on disk: roots and precedence (``roots``), the iterative walk
(``walk``), one root's scan (``discover``), the snapshot files (``cache``), a loaded
snapshot (``snapshot``), its warm path (``warm``), records into skills (``records``)
and the parallel cold scan (``_parallel``, ``_forked``) — the only home of marshal
data and positional rows. What leaves the package is ``results``' shapes: a
``Skill`` or an ``InvalidSkill`` per SKILL.md, per root.

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.skills.discovery.cache import (
        RACY_NS,
        load_snapshot,
        save_snapshot,
        snapshot_path,
    )
    from skilldeck.skills.discovery.discover import scan_root
    from skilldeck.skills.discovery.records import record_from_load, skill_from_record
    from skilldeck.skills.discovery.results import DiscoveryResult, InvalidSkill, RootScan
    from skilldeck.skills.discovery.roots import Root, bundled_root, resolve_roots
    from skilldeck.skills.discovery.snapshot import Record, RootSnapshot, Stored
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
    "DiscoveryResult": "results",
    "InvalidSkill": "results",
    "RootScan": "results",
    "Root": "roots",
    "bundled_root": "roots",
    "resolve_roots": "roots",
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
    "load_snapshot": "cache",
    "save_snapshot": "cache",
    "snapshot_path": "cache",
    "Record": "snapshot",
    "RootSnapshot": "snapshot",
    "Stored": "snapshot",
    "record_from_load": "records",
    "skill_from_record": "records",
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
