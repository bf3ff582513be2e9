"""The session database's files on disk: private (``0600``) whatever the umask, never
through a symlink — the database, its SQLite companions and the chat history — and
whether the process that wrote a session is still alive."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

__all__ = ["COMPANIONS", "PRIVATE_MODE", "make_private", "private_file", "process_alive"]

PRIVATE_MODE = 0o600
#: files SQLite keeps beside the database (WAL mode)
COMPANIONS = ("-wal", "-shm", "-journal")


def private_file(path: Path) -> Path:
    """Make sure ``path`` exists as a regular file readable by its owner only (0600):
    created with that mode whatever the umask, or set back to it when it exists. Not
    followed when it is a symlink (OSError). For the session store and chat history.

    An existing file is never opened here: closing *any* descriptor of a SQLite
    database drops every POSIX lock the process holds on it, so opening and closing the
    file while another connection of this process (a service runs many) is reading or
    writing would let a second process write under it and damage the database."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), PRIVATE_MODE)
        except FileExistsError:  # created meanwhile by another process: check it below
            info = os.lstat(path)
        else:
            try:  # umask-independent
                os.fchmod(fd, PRIVATE_MODE)
            finally:
                os.close(fd)
            return path
    if stat.S_ISLNK(info.st_mode):
        raise OSError(errno.ELOOP, "refusing to follow a symlink", str(path))
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    if stat.S_IMODE(info.st_mode) != PRIVATE_MODE:
        with contextlib.suppress(PermissionError):  # repairs an existing 0644 file (ours)
            os.chmod(path, PRIVATE_MODE)
    return path


def make_private(path: Path) -> None:
    if not path.is_symlink():
        os.chmod(path, PRIVATE_MODE)


def process_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process on this machine (for "is it still running?")."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
