"""Finding skills on disk: roots and precedence (``roots``), the iterative walk
(``walk``), one root's scan (``discover``), the snapshot files (``cache``), a loaded
snapshot (``snapshot``), its warm path (``warm``), records into skills (``records``)
and the parallel cold scan (``_parallel``, ``_forked``) — the only home of marshal
data and positional rows. What leaves the package is ``results``' shapes: a
``Skill`` or an ``InvalidSkill`` per SKILL.md, per root; the snapshot's records,
rows and files are not exported (tests reach ``cache``, ``snapshot`` and
``records`` as modules).

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.skills.discovery.discover import scan_root
    from skilldeck.skills.discovery.results import DiscoveryResult, InvalidSkill, RootScan
    from skilldeck.skills.discovery.roots import Root, bundled_root, resolve_roots
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
}

__all__ = [
    "DANGLING_SYMLINK",
    "MAX_DEPTH",
    "RESOURCE_DIRS",
    "ROOT_NOT_FOUND",
    "SKILL_FILENAMES",
    "SKIP_DIRS",
    "SYMLINK_LOOP",
    "TOO_DEEP",
    "UNREADABLE_DIR",
    "DiscoveryResult",
    "InvalidSkill",
    "Root",
    "RootScan",
    "Tree",
    "bundled_root",
    "diagnostic",
    "link_state",
    "resolve_roots",
    "scan_root",
    "walk_tree",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
