"""Which files of a skill the scanner reads, and how (no rules: cheap to import).

Every regular file under the folder, sorted, symlinks never followed (install
refuses the ones that leave the folder anyway), build junk (``node_modules``,
``.git``, ``__pycache__``, virtualenvs) skipped as pack and install skip it, at most
:data:`MAX_FILES`; text only (a NUL byte in the first 8 KiB means binary), the first
:data:`MAX_FILE_BYTES` of each. The quarantine's stat signature walks the same
files, so importing this module must not compile the rules.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from skilldeck._safefs import open_regular, walk
from skilldeck.errors import ResourceAccessError

__all__ = ["MAX_FILES", "MAX_FILE_BYTES", "SKIP_DIRS", "read_text", "skill_files", "skill_folders"]

MAX_FILES = 2000
MAX_FILE_BYTES = 2 * 1024 * 1024
SKIP_DIRS = frozenset(
    {"node_modules", ".git", "__pycache__", ".venv", "venv", "__MACOSX", ".mypy_cache"}
)


def skill_files(folder: Path, skipped: list[str] | None = None) -> Iterator[tuple[str, Path]]:
    """``(relative posix path, path)`` of every regular file the scanner reads, sorted."""
    base = os.fspath(folder)
    count = 0
    for here, dirnames, filenames in walk(base, max_depth=32):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            full = os.path.join(here, name)
            rel = os.path.relpath(full, base).replace(os.sep, "/")
            try:
                mode = os.lstat(full).st_mode
            except OSError:
                continue
            if not stat.S_ISREG(mode):
                if skipped is not None and stat.S_ISLNK(mode):
                    skipped.append(f"{rel}: a symlink, not followed")
                continue
            count += 1
            if count > MAX_FILES:
                if skipped is not None:
                    skipped.append(f"more than {MAX_FILES} files; the rest were not scanned")
                return
            yield rel, Path(full)


def read_text(path: Path, rel: str, skipped: list[str] | None = None) -> str | None:
    """The file's text (first :data:`MAX_FILE_BYTES`), or None for binary/unreadable."""
    try:
        with open_regular(path) as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except (OSError, ResourceAccessError) as e:
        if skipped is not None:
            skipped.append(f"{rel}: unreadable ({getattr(e, 'strerror', None) or e})")
        return None
    if b"\0" in data[:8192]:
        return None
    if len(data) > MAX_FILE_BYTES:
        data = data[:MAX_FILE_BYTES]
        if skipped is not None:
            skipped.append(f"{rel}: only the first {MAX_FILE_BYTES // 1024 // 1024} MiB scanned")
    return data.decode("utf-8", errors="replace")


def skill_folders(top: Path) -> list[Path]:
    """The topmost folders holding a SKILL.md under ``top`` (``top`` itself if it is one)."""
    if (top / "SKILL.md").is_file() or (top / "skill.md").is_file():
        return [top]
    found: list[Path] = []
    for here, dirnames, filenames in walk(top, max_depth=12):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        if "SKILL.md" in filenames or "skill.md" in filenames:
            found.append(Path(here))
            dirnames[:] = []  # nested skills belong to their parent's scan
    return sorted(found)
