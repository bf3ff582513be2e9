"""Reading a file inside a folder without being redirected out of it.

Resolving a path and checking it is inside a folder is not enough: between the check
and the open, a component can be swapped for a symlink, and a hard link inside the
folder can share its inode with a file outside. :func:`read_confined` therefore walks
from the (resolved) base one component at a time with ``openat(..., O_NOFOLLOW)``,
opens the file itself with ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO cannot hang the read),
and refuses anything that is not a regular file with a single link. The tools layer
has the same discipline for the workspace (``tools/fs/paths.py``); this one serves the
skills layer (level-3 resources, MCP resources), which may not import tools.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from skilldeck.errors import ResourceAccessError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def read_confined(base: Path, target: Path, *, max_bytes: int = 16 * 1024 * 1024) -> bytes:
    """The bytes of ``target`` (already resolved, inside resolved ``base``).

    Raises ResourceAccessError when a component is (now) a link, the file is not a
    regular file, has other hard links, or is larger than ``max_bytes``.
    """
    base = Path(os.path.realpath(base))
    try:
        parts = Path(target).relative_to(base).parts
    except ValueError:
        raise ResourceAccessError(f"{target} is not inside {base}.") from None
    if not parts:
        raise ResourceAccessError(f"{target} is a folder, not a file.")
    fds: list[int] = []
    try:
        fds.append(os.open(base, _DIR_FLAGS))
        for part in parts[:-1]:  # one folder held at a time: a deep path costs no fds
            fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))
            os.close(fds.pop(-2))
        fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=fds[-1])
        fds.append(fd)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ResourceAccessError(f"{target} is not a regular file.")
        if info.st_nlink > 1:
            raise ResourceAccessError(
                f"{target} has {info.st_nlink} hard links; a hard-linked file may be a file "
                "outside the folder, so it is not read."
            )
        if info.st_size > max_bytes:
            raise ResourceAccessError(f"{target} is larger than {max_bytes:,} bytes.")
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(max_bytes + 1)[:max_bytes]
    except ResourceAccessError:
        raise
    except FileNotFoundError:
        raise ResourceAccessError(f"{target} does not exist.") from None
    except OSError as e:  # ELOOP / ENOTDIR: a component became a link or a file
        raise ResourceAccessError(
            f"{target} could not be opened safely ({e.strerror}); it may have been replaced "
            "by a link."
        ) from e
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def open_regular(path: Path | str) -> BinaryIO:
    """``path`` opened for reading, refused unless it is a regular file.

    The open itself is ``O_NONBLOCK``, so a FIFO (or a path swapped for one after a
    check) cannot hang the caller, and the kind is read from the open descriptor
    (``fstat``), not from an earlier ``stat`` of the name. Raises ResourceAccessError
    naming the file and its kind; OSError for the usual reasons (missing, denied).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ResourceAccessError(f"{path} is {file_kind(mode)}, not a regular file.")
        os.set_blocking(fd, True)
        return open(fd, "rb")  # the builtin: a test may stand in for os.fdopen
    except BaseException:
        os.close(fd)
        raise


def file_kind(mode: int) -> str:
    """What a mode's file type is, in words (for messages naming skipped files)."""
    kinds = (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISLNK, "a symlink"),
        (stat.S_ISREG, "a regular file"),
    )
    return next((word for test, word in kinds if test(mode)), "a special file")


def walk(
    top: Path | str, *, max_depth: int | None = None
) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top)`` (top-down, links to folders listed but not entered, unreadable
    folders skipped) without recursion: Python 3.11's ``os.walk`` recurses once per
    level, so a planted tree ~1,000 folders deep raises RecursionError. Callers may
    prune or sort ``dirnames`` in place, as with ``os.walk``; ``max_depth`` stops
    descending below that many levels under ``top``."""
    pending: list[tuple[str, int]] = [(os.fspath(top), 0)]
    while pending:
        path, depth = pending.pop()
        try:
            with os.scandir(path) as it:
                entries = list(it)
        except OSError:
            continue
        dirnames: list[str] = []
        filenames: list[str] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirnames if is_dir else filenames).append(entry.name)
        yield path, dirnames, filenames
        if max_depth is not None and depth >= max_depth:
            continue
        for name in reversed(dirnames):
            child = os.path.join(path, name)
            if not os.path.islink(child):
                pending.append((child, depth + 1))
