"""Glob patterns and a confined, symlink-safe directory walk for Glob and Grep.

The walk uses ``os.fwalk`` with ``follow_symlinks=False``: every directory is opened
relative to its parent's descriptor, so a directory swapped for a symlink mid-walk
is not followed out of the workspace. Symlinked directories are never descended
(that also rules out loops); a symlinked *file* is reported only when its target
lies inside the allowed roots.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from skilldeck.tools.base import ToolContext
from skilldeck.tools.paths import allowed_roots, is_inside

#: Directories no search descends into (unless the search starts inside one).
NOISE_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
)
_GLOB_CHARS = frozenset("*?[{")


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """A glob as a regex over ``/``-separated relative paths.

    ``*`` and ``?`` stay within one path segment, ``**`` spans segments (``**/``
    also matches zero directories), ``[abc]``/``[!abc]`` are classes and
    ``{a,b}`` alternatives (nesting allowed), as in ripgrep and minimatch.
    """
    out: list[str] = []
    i, depth, n = 0, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if pattern.startswith("/", i):
                    out.append("(?:.*/)?")
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern.startswith("[!", i) else i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                body = "^" + body[1:] if body.startswith("!") else body
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                i = end
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    out.append(")" * depth)
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def literal_prefix(pattern: str) -> tuple[str, str]:
    """Split ``src/app/**/*.ts`` into (``src/app``, ``**/*.ts``) to start the walk lower."""
    parts = pattern.split("/")
    literal: list[str] = []
    while len(parts) > 1 and not (_GLOB_CHARS & set(parts[0])):
        literal.append(parts.pop(0))
    return "/".join(literal), "/".join(parts)


@dataclass(frozen=True)
class Entry:
    """One regular file found by the walk (``st`` is the target's stat for symlinks)."""

    path: Path
    rel: str
    name: str
    st: os.stat_result
    dir_fd: int
    is_link: bool


def walk_files(
    base: Path, ctx: ToolContext, *, skip_hidden: bool = False, prune: frozenset[str] = NOISE_DIRS
) -> Iterator[Entry]:
    """Regular files under ``base`` (a confined directory), depth first, sorted by name.

    ``dir_fd`` of an entry is only valid until the iteration moves on.
    """
    roots = allowed_roots(ctx)
    for dirpath, dirnames, filenames, dirfd in os.fwalk(base, follow_symlinks=False):
        dirnames[:] = sorted(
            d for d in dirnames if d not in prune and not (skip_hidden and d.startswith("."))
        )
        rel_dir = os.path.relpath(dirpath, base)
        for name in sorted(filenames):
            if skip_hidden and name.startswith("."):
                continue
            entry = _entry(Path(dirpath), rel_dir, name, dirfd, roots)
            if entry is not None:
                yield entry


def _entry(dirpath: Path, rel_dir: str, name: str, dirfd: int, roots: list[Path]) -> Entry | None:
    rel = name if rel_dir == "." else f"{rel_dir}/{name}"
    try:
        st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except OSError:
        return None
    is_link = stat.S_ISLNK(st.st_mode)
    if is_link:
        target = Path(os.path.realpath(dirpath / name))
        if not any(is_inside(target, r) for r in roots):
            return None
        try:
            st = os.stat(target)
        except OSError:
            return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return Entry(path=dirpath / name, rel=rel, name=name, st=st, dir_fd=dirfd, is_link=is_link)


def pattern_prunes(pattern: str) -> frozenset[str]:
    """Noise directories to skip, minus any the pattern names explicitly."""
    named = set(re.split(r"[/{},]", pattern))
    return frozenset(d for d in NOISE_DIRS if d not in named)
