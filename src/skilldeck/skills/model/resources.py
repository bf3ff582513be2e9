"""Level 3 of a skill: the files of its folder, listed and read with path confinement.

A skill's resources are whatever its folder holds besides SKILL.md (scripts,
references, templates). A model names them by relative path, so every path is
resolved (symlinks included) and refused when it leaves the folder; a listing skips
caches and links that point out, and stops at :data:`MAX_LISTED_RESOURCES` so a
vendored dependency tree cannot flood the model's context. ``Skill`` exposes these
as ``resolve_resource``, ``list_resources`` and ``read_resource``.
"""

from __future__ import annotations

import os
from pathlib import Path

from skilldeck._safefs import read_confined
from skilldeck._safefs import walk as safe_walk
from skilldeck.errors import ResourceAccessError

__all__ = ["MAX_LISTED_RESOURCES", "list_resources", "read_resource", "resolve_resource"]

#: Upper bound on files listed as level-3 resources, so a skill folder holding a
#: vendored dependency tree cannot flood the model's context.
MAX_LISTED_RESOURCES = 200
_SKIP_DIRS = frozenset({"__pycache__", ".git", "node_modules", ".venv", ".DS_Store"})


def resolve_resource(folder: Path, skill_name: str, relative: str) -> Path:
    """Resolve ``relative`` inside ``folder`` or raise ResourceAccessError.

    Symlinks are resolved before the check, so a link pointing outside is refused.
    """
    if not relative or os.path.isabs(relative) or "\x00" in relative:
        raise ResourceAccessError(
            f"Resource path {relative!r} of skill {skill_name!r} must be a relative path "
            "inside the skill folder."
        )
    base = folder.resolve()
    target = (base / relative).resolve()
    if target != base and base not in target.parents:
        raise ResourceAccessError(
            f"Resource path {relative!r} escapes the folder of skill {skill_name!r} "
            f"({base}); only files inside it can be read."
        )
    return target


def list_resources(folder: Path) -> list[str]:
    """Files under ``folder`` other than SKILL.md, as sorted relative paths."""
    base = folder.resolve()
    found: list[str] = []
    for dirpath, dirnames, filenames in safe_walk(base):  # iterative: deep trees
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            full = Path(dirpath) / name
            rel = full.relative_to(base).as_posix()
            if rel.lower() == "skill.md" or name.endswith(".pyc"):
                continue
            if full.is_symlink() and not _inside(full.resolve(), base):
                continue
            found.append(rel)
            if len(found) >= MAX_LISTED_RESOURCES:
                return found
    return found


def read_resource(folder: Path, skill_name: str, relative: str) -> str:
    """One file of the skill at ``folder``, read without following links out of it."""
    shown = relative if len(relative) <= 80 else relative[:60] + "…"
    try:
        target = resolve_resource(folder, skill_name, relative)
        found = target.is_file()
        data = read_confined(folder, target) if found else b""
    except OSError as e:  # a name too long, a loop: the system's word for it, with the path
        raise ResourceAccessError(
            f"Skill {skill_name!r}: cannot read {shown!r} ({e.strerror or e})."
        ) from e
    if not found:
        raise ResourceAccessError(
            f"Skill {skill_name!r} has no file {shown!r}. "
            f"Available: {', '.join(list_resources(folder)[:20]) or 'none'}."
        )
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n")


def _inside(path: Path, base: Path) -> bool:
    return path == base or base in path.parents
