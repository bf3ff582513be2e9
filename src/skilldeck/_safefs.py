"""Reading a file inside a folder without being redirected out of it.

Resolving a path and checking it is inside a folder is not enough: between the check
and the open, a component can be swapped for a symlink, and a hard link inside the
folder can share its inode with a file outside. :func:`read_confined` therefore walks
from the (resolved) base one component at a time with ``openat(..., O_NOFOLLOW)``,
opens the file itself with ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO cannot hang the read),
and refuses anything that is not a regular file with a single link. The tools layer
has the same discipline for the workspace (``tools/paths.py``); this one serves the
skills layer (level-3 resources, MCP resources), which may not import tools.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

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
        for part in parts[:-1]:
            fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))
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
