"""Glob patterns and a confined, symlink-safe directory walk for Glob and Grep.

The walk is iterative and opens every directory relative to its parent's descriptor
with ``O_NOFOLLOW``, so a directory swapped for a symlink mid-walk is not followed
out of the workspace. Symlinked directories are never descended
(that also rules out loops); a symlinked *file* is reported only when its target
lies inside the allowed roots.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from skilldeck.errors import ToolError
from skilldeck.skills.rules import GlobMatcher, compile_matcher
from skilldeck.tools.base import ToolContext
from skilldeck.tools.fs._guard import Budget
from skilldeck.tools.fs.paths import allowed_roots, is_inside

#: Directories no search descends into (unless the search starts inside one).
NOISE_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
)
_GLOB_CHARS = frozenset("*?[{")


def compile_glob(pattern: str) -> GlobMatcher:
    """A glob over ``/``-separated relative paths (``.match(rel)`` → bool).

    ``*`` and ``?`` stay within one path segment, ``**`` spans segments (``**/``
    also matches zero directories), ``[abc]``/``[!abc]`` are classes and
    ``{a,b}`` alternatives (nesting allowed), as in ripgrep and minimatch. The
    matcher cannot backtrack catastrophically (see :mod:`skilldeck.skills.rules.globmatch`);
    a pattern whose braces expand too far raises ToolError.
    """
    try:
        return compile_matcher(pattern)
    except ValueError as e:
        raise ToolError(f"Glob pattern {pattern!r} is too complex: {e}.") from e


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


#: directories deeper than this below the search base are not entered (one descriptor
#: is held per level; the walk says so in its note)
MAX_DEPTH = 256
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class WalkStats:
    """What a walk left out, for the tool's closing note."""

    too_deep: int = 0
    unreadable: int = 0


@dataclass
class _Frame:
    fd: int
    path: Path
    rel: str
    subdirs: list[str]


def walk_files(
    base: Path,
    ctx: ToolContext,
    *,
    skip_hidden: bool = False,
    prune: frozenset[str] = NOISE_DIRS,
    visible: Callable[[Path], bool] | None = None,
    budget: Budget | None = None,
    stats: WalkStats | None = None,
) -> Iterator[Entry]:
    """Regular files under ``base`` (a confined directory), depth first, sorted by name.

    Iterative (a 10,000-level tree cannot exhaust the stack), every directory opened
    relative to its parent's descriptor with ``O_NOFOLLOW``. ``visible`` is asked
    about every directory before it is entered and every file before it is yielded
    (a denied folder is never read); the walk stops when ``budget`` expires.
    ``dir_fd`` of an entry is only valid until the iteration moves on.
    """
    roots = allowed_roots(ctx)
    stats = stats or WalkStats()
    try:
        top = os.open(base, _DIR_FLAGS)
    except OSError:
        stats.unreadable += 1
        return
    stack = [_Frame(top, base, "", [])]
    try:
        yield from _walk_frame(stack[0], roots, skip_hidden, prune, visible, stats)
        while stack and not (budget is not None and budget.expired()):
            frame = stack[-1]
            if not frame.subdirs:
                os.close(stack.pop().fd)
                continue
            child = _open_child(frame, frame.subdirs.pop(), len(stack), visible, stats)
            if child is not None:
                stack.append(child)
                yield from _walk_frame(child, roots, skip_hidden, prune, visible, stats)
    finally:
        for frame in stack:
            os.close(frame.fd)


def _open_child(
    parent: _Frame, name: str, depth: int, visible: Callable[[Path], bool] | None, stats: WalkStats
) -> _Frame | None:
    path = parent.path / name
    if depth > MAX_DEPTH:
        stats.too_deep += 1
        return None
    if visible is not None and not visible(path):
        return None
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent.fd)
    except OSError:  # vanished, swapped for a symlink, or unreadable
        stats.unreadable += 1
        return None
    rel = name if not parent.rel else f"{parent.rel}/{name}"
    return _Frame(fd, path, rel, [])


def _walk_frame(
    frame: _Frame,
    roots: list[Path],
    skip_hidden: bool,
    prune: frozenset[str],
    visible: Callable[[Path], bool] | None,
    stats: WalkStats,
) -> Iterator[Entry]:
    """Yield the files of one directory and remember its subdirectories."""
    files: list[str] = []
    try:
        with os.scandir(frame.fd) as it:
            for item in it:
                if skip_hidden and item.name.startswith("."):
                    continue
                if item.is_dir(follow_symlinks=False):
                    if item.name not in prune:
                        frame.subdirs.append(item.name)
                else:
                    files.append(item.name)
    except OSError:
        stats.unreadable += 1
        return
    frame.subdirs.sort(reverse=True)  # popped from the end: by name
    rel_dir = frame.rel or "."
    for name in sorted(files):
        entry = _entry(frame.path, rel_dir, name, frame.fd, roots)
        if entry is not None and (visible is None or visible(entry.path)):
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
