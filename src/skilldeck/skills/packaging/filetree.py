"""The one walk over a skill folder that pack, install and verify share, so all three
agree on which files count: build junk and OS litter left out (and reported by
verify), package metadata files skipped at the top, symlinks followed only to regular
files inside the folder, depth and file-count limits, FIFOs and devices refused —
and the sha256 of each file and of the whole tree.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import BinaryIO

from skilldeck._safefs import file_kind, open_regular
from skilldeck.errors import PackageError, ResourceAccessError

__all__ = [
    "EXCLUDED_DIRS",
    "EXCLUDED_FILES",
    "EXCLUDED_SUFFIXES",
    "MANIFEST_NAME",
    "MAX_DEPTH",
    "PACKAGE_META_FILES",
    "SIGNATURE_NAME",
    "collect_files",
    "hash_tree",
    "is_excluded",
    "open_file",
    "sha256_file",
    "tree_digest",
]

#: Files and folders that are never part of a skill: build junk and OS litter. Pack and
#: install leave them out; verify reports every one it finds in an installed skill
#: (``added``): Python may load a planted ``.pyc`` instead of its source, so "scripts
#: that run create ``__pycache__``" is no reason to look away.
EXCLUDED_DIRS = frozenset({"__pycache__", "node_modules", ".git", "__MACOSX"})
EXCLUDED_FILES = frozenset({".DS_Store"})
EXCLUDED_SUFFIXES = (".pyc", ".pyo")
#: Written by ``pack`` inside ``<name>/``; regenerated on every pack, never installed.
MANIFEST_NAME = ".skill-manifest.json"
SIGNATURE_NAME = ".skill-signature"
PACKAGE_META_FILES = frozenset({MANIFEST_NAME, SIGNATURE_NAME})
_CHUNK = 1024 * 1024
#: folders a skill may nest inside itself; deeper trees are refused, not walked
MAX_DEPTH = 64


def is_excluded(rel_parts: tuple[str, ...]) -> bool:
    """Whether a relative path is build junk that pack, install and verify all skip."""
    if any(part in EXCLUDED_DIRS for part in rel_parts[:-1]):
        return True
    name = rel_parts[-1]
    return name in EXCLUDED_DIRS or name in EXCLUDED_FILES or name.endswith(EXCLUDED_SUFFIXES)


def sha256_file(path: Path) -> str:
    """The sha256 of a regular file; a FIFO or device is refused, never waited on."""
    digest = hashlib.sha256()
    with open_file(path) as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def open_file(path: Path) -> BinaryIO:
    """``path`` opened for reading if it is a regular file (``O_NONBLOCK``, checked on
    the descriptor), else PackageError naming it: what pack, install and verify read."""
    try:
        return open_regular(path)
    except ResourceAccessError as e:
        raise PackageError(f"{e} Packages hold regular files only; remove it.") from e


def tree_digest(files: dict[str, str]) -> str:
    """One sha256 for a whole skill: over the sorted ``path\\0hash`` lines."""
    lines = "".join(f"{rel}\0{files[rel]}\n" for rel in sorted(files))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def collect_files(
    folder: Path,
    *,
    max_files: int | None = None,
    max_bytes: int | None = None,
    skipped: list[str] | None = None,
    junk: list[str] | None = None,
) -> dict[str, Path]:
    """Every file of the skill in ``folder`` as ``{relative posix path: real path}``.

    Skips :data:`EXCLUDED_DIRS` / files and the package metadata files at the top.
    A symlink to a file inside the folder counts as that file's content; a symlink that
    leaves the folder, or any symlinked directory, is refused — a package must carry
    its own content and never point into the packer's (or installer's) machine.
    FIFOs, sockets and devices are not content: they are left out (reading one would
    hang or never end), each with a message appended to ``skipped``. Given ``junk``
    (verify), what pack and install leave out is walked too and its relative paths
    appended there. The walk is iterative (a deep tree cannot exhaust the stack) and
    refuses folders nested more than :data:`MAX_DEPTH` levels.
    """
    base = folder.resolve()
    found: dict[str, Path] = {}
    total = 0
    pending: list[tuple[Path, tuple[str, ...], bool]] = [(base, (), False)]
    while pending:  # os.walk's order: a folder's files, then its folders, depth first
        here, rel_dir, in_junk = pending.pop()
        if len(rel_dir) > MAX_DEPTH:
            raise PackageError(
                f"{here} is nested more than {MAX_DEPTH} folders deep inside {folder}; "
                "refused. Flatten the skill's folders."
            )
        subdirs: list[tuple[Path, tuple[str, ...], bool]] = []
        for entry in _listing(here):
            rel = (*rel_dir, entry.name)
            if in_junk or _is_junk(entry, rel):
                if junk is not None and entry.is_dir(follow_symlinks=False):
                    subdirs.append((Path(entry.path), rel, True))
                elif junk is not None:
                    junk.append("/".join(rel))
                continue
            if _is_real_dir(entry, here):
                subdirs.append((Path(entry.path), rel, False))
                continue
            real = _checked_target(Path(entry.path), base, skipped)
            if real is None:
                continue
            found["/".join(rel)] = real
            total += real.stat().st_size
            _check_limits(len(found), total, max_files, max_bytes, where=folder)
        pending.extend(reversed(subdirs))
    return found


def _is_junk(entry: os.DirEntry[str], rel: tuple[str, ...]) -> bool:
    """Build junk, OS litter or package metadata: never part of an installed skill."""
    if entry.name in EXCLUDED_DIRS and entry.is_dir():
        return True
    return is_excluded(rel) or (len(rel) == 1 and entry.name in PACKAGE_META_FILES)


def _listing(here: Path) -> list[os.DirEntry[str]]:
    with os.scandir(here) as it:
        return sorted(it, key=lambda e: e.name)


def _is_real_dir(entry: os.DirEntry[str], here: Path) -> bool:
    """A real folder; a symlink to a folder is refused outright."""
    if entry.is_symlink():
        if entry.is_dir():
            raise PackageError(
                f"{here / entry.name} is a symlinked directory; packages hold real folders "
                "only. Replace the link with a copy of the folder."
            )
        return False
    return entry.is_dir(follow_symlinks=False)


def _checked_target(full: Path, base: Path, skipped: list[str] | None) -> Path | None:
    """The file whose bytes ``full`` stands for, None for a special file (skipped)."""
    mode = full.lstat().st_mode
    if not stat.S_ISLNK(mode):
        if stat.S_ISREG(mode):
            return full
        if skipped is not None:
            skipped.append(f"{full} is {file_kind(mode)}, not a regular file; left out.")
        return None
    target = full.resolve()
    if target != base and base not in target.parents:
        raise PackageError(
            f"{full} is a symlink pointing outside the skill folder (to {target}); refused."
        )
    if not target.is_file():
        raise PackageError(f"{full} is a symlink to {target}, which is not a regular file.")
    return target


def _check_limits(
    count: int, total: int, max_files: int | None, max_bytes: int | None, *, where: Path
) -> None:
    if max_files is not None and count > max_files:
        raise PackageError(f"{where} holds more than {max_files:,} files; refused.")
    if max_bytes is not None and total > max_bytes:
        raise PackageError(
            f"{where} holds more than {max_bytes // (1024 * 1024)} MiB of files; refused."
        )


def hash_tree(
    folder: Path, skipped: list[str] | None = None, junk: list[str] | None = None
) -> dict[str, str]:
    files = collect_files(folder, skipped=skipped, junk=junk)
    return {rel: sha256_file(path) for rel, path in files.items()}
