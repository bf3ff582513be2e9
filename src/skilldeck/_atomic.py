"""Atomic file writes: temp file in the same folder, fsync, rename.

A crash at any point leaves either the old file or the new one, never half of one.
Used for config, lock files, installs' metadata and (not fsynced) the snapshot cache.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically. ``durable=False`` skips the fsync:
    for a cache, where losing the newest copy in a crash costs only a rebuild.

    A symlink is replaced, never written through: a link planted in a workspace
    (``.skilldeck/config.toml -> ~/.bashrc``) must not redirect the write. A FIFO, a
    device or a socket is refused with an OSError, since renaming over it would
    destroy it (``skills pack -o /dev/null`` did)."""
    _refuse_special_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _refuse_special_file(path: Path) -> None:
    """An OSError when ``path`` is a folder, a FIFO, a device or a socket."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", str(path))
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        raise OSError(errno.EINVAL, "not a regular file; refusing to replace it", str(path))


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))
