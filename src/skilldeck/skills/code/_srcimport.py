"""A code skill's Python, read once, hashed, and imported from that copy only.

Why not ``importlib.util.spec_from_file_location``: the standard loaders read
bytecode. ``SourceFileLoader`` takes ``__pycache__/x.cpython-311.pyc`` — and an
*unchecked-hash* ``.pyc`` is used without looking at the source at all, so a clean
``skill.py`` can run different code; ``SourcelessFileLoader`` imports a ``.pyc``
that has no source; ``ExtensionFileLoader`` loads native ``.so`` files. None of that
is visible to a reviewer, to the audit, or to a hash of the ``.py`` files.

So a code skill is taken as a :class:`SourceSnapshot`: the bytes of every ``.py``
file under its folder (regular files only, never through a symlink), read once. Its
:attr:`~SourceSnapshot.digest` is what trust is recorded against, and
:func:`import_snapshot` executes *those same bytes* (compiled from source, never
cached), so what was hashed is what runs — no window between check and use. A
folder holding bytecode with no source beside it is refused outright
(:func:`snapshot_code` raises); cached bytecode next to its source is ignored,
provably, because this loader never opens a ``.pyc``. Modules of the skill resolve
only inside the snapshot: ``from . import helpers`` and ``from .scripts import x``
work, a ``.so``, a ``.pyc`` or a symlinked module does not.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import os
import stat
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from skilldeck.errors import SkillExecutionError

__all__ = ["SourceSnapshot", "import_snapshot", "snapshot_code"]

#: what a code skill folder may hold before it is refused (a hostile folder must not
#: make skilldeck read gigabytes to decide whether to trust it)
MAX_FILES = 2000
MAX_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 64
_BYTECODE = (".pyc", ".pyo")
_SKIP_DIRS = frozenset({".git", ".hg", ".svn"})


@dataclass(frozen=True)
class SourceSnapshot:
    """Every ``.py`` file of a skill folder: POSIX relative path → bytes."""

    folder: Path
    files: dict[str, bytes] = field(repr=False)
    #: bytecode files that are ignored (cached, their source is present)
    ignored: tuple[str, ...] = ()

    @property
    def digest(self) -> str:
        """SHA-256 over ``path NUL length NUL bytes`` for each file, sorted by path:
        adding, removing, renaming or editing any ``.py`` file changes it."""
        h = hashlib.sha256(b"skilldeck-code-skill-v1\0")
        for rel in sorted(self.files):
            data = self.files[rel]
            h.update(rel.encode("utf-8") + b"\0" + str(len(data)).encode() + b"\0" + data)
        return h.hexdigest()


def _refuse(folder: Path, what: str) -> SkillExecutionError:
    return SkillExecutionError(f"Code skill folder {folder} was refused: {what}")


def _read_regular(path: str) -> bytes:
    """The bytes of a regular file, opened without following a symlink and without
    blocking on a FIFO planted where a module was expected."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _has_source(rel_dir: str, name: str, sources: set[str]) -> bool:
    """Whether bytecode ``rel_dir/name`` is a cache of a ``.py`` that exists:
    ``pkg/__pycache__/mod.cpython-311.pyc`` ↔ ``pkg/mod.py``."""
    parent, _, last = rel_dir.rpartition("/")
    if last != "__pycache__":
        return False  # a legacy sourceless .pyc next to the modules
    stem = name.split(".", 1)[0]
    return f"{parent}/{stem}.py".lstrip("/") in sources


def snapshot_code(folder: Path) -> SourceSnapshot:
    """Read every ``.py`` under ``folder`` (iteratively, bounded); refuse symlinked
    modules, sourceless bytecode, and folders too large or deep to be a skill."""
    root = folder.resolve()
    files: dict[str, bytes] = {}
    bytecode: list[tuple[str, str]] = []
    total = 0
    stack: list[tuple[str, int]] = [("", 0)]
    while stack:
        rel_dir, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _refuse(root, f"it is nested deeper than {MAX_DEPTH} folders.")
        try:
            with os.scandir(root / rel_dir) as listing:  # closed even when reading fails
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as e:
            raise _refuse(root, f"cannot list {rel_dir or '.'} ({e.strerror}).") from e
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}".lstrip("/")
            if entry.is_symlink():
                if entry.name.endswith((".py", *_BYTECODE)):
                    raise _refuse(root, f"{rel} is a symlink; copy the module into the folder.")
                continue
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in _SKIP_DIRS:
                    stack.append((rel, depth + 1))
            elif entry.name.endswith(_BYTECODE):
                bytecode.append((rel_dir, entry.name))
            elif entry.name.endswith(".py"):
                try:
                    files[rel] = data = _read_regular(entry.path)
                except OSError as e:
                    raise _refuse(root, f"cannot read {rel} ({e}).") from e
                total += len(data)
                if len(files) > MAX_FILES or total > MAX_BYTES:
                    raise _refuse(
                        root, f"more than {MAX_FILES} .py files or {MAX_BYTES} bytes of code."
                    )
    sources = set(files)
    sourceless = [f"{d}/{n}".lstrip("/") for d, n in bytecode if not _has_source(d, n, sources)]
    if sourceless:
        raise _refuse(
            root,
            f"it holds Python bytecode with no source ({', '.join(sorted(sourceless)[:5])}). "
            "skilldeck runs skills from source only; delete the .pyc files (and any "
            "__pycache__ folder) or ship the .py sources.",
        )
    ignored = tuple(sorted(f"{d}/{n}".lstrip("/") for d, n in bytecode))
    return SourceSnapshot(root, files, ignored)


class _SnapshotLoader(importlib.abc.Loader):
    """Executes source bytes from a snapshot; never reads or writes bytecode."""

    def __init__(self, source: bytes | None, origin: str) -> None:
        self.source, self.origin = source, origin

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module object

    def exec_module(self, module: ModuleType) -> None:
        if self.source is None:
            return  # a folder without __init__.py: an empty package
        code = compile(self.source, self.origin, "exec", dont_inherit=True)
        exec(code, module.__dict__)  # this *is* the import of the skill


class _SnapshotFinder(importlib.abc.MetaPathFinder):
    """Resolves ``<package>`` and ``<package>.a.b`` inside registered snapshots only."""

    def __init__(self) -> None:
        self.packages: dict[str, SourceSnapshot] = {}
        self.lock = threading.Lock()

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        head, _, rest = fullname.partition(".")
        snap = self.packages.get(head)
        if snap is None:
            return None
        if not rest:
            return self._spec(fullname, snap, "skill.py", package=True)
        rel = rest.replace(".", "/")
        if f"{rel}.py" in snap.files:
            return self._spec(fullname, snap, f"{rel}.py", package=False)
        if f"{rel}/__init__.py" in snap.files:
            return self._spec(fullname, snap, f"{rel}/__init__.py", package=True)
        if any(name.startswith(f"{rel}/") for name in snap.files):
            spec = importlib.machinery.ModuleSpec(fullname, _SnapshotLoader(None, rel))
            spec.submodule_search_locations = []
            return spec
        raise ModuleNotFoundError(
            f"No module named {fullname!r}: code skills import only .py files of their "
            f"own folder ({snap.folder}); bytecode, native modules and symlinks are not "
            "loaded.",
            name=fullname,
        )

    @staticmethod
    def _spec(
        fullname: str, snap: SourceSnapshot, rel: str, *, package: bool
    ) -> importlib.machinery.ModuleSpec:
        origin = str(snap.folder / rel)
        loader = _SnapshotLoader(snap.files[rel], origin)
        spec = importlib.machinery.ModuleSpec(fullname, loader, origin=origin, is_package=package)
        if package:
            spec.submodule_search_locations = []  # nothing for the path-based finders
        spec.has_location = True
        return spec


_FINDER = _SnapshotFinder()


def import_snapshot(snapshot: SourceSnapshot, package: str) -> ModuleType:
    """Import ``skill.py`` of ``snapshot`` as module ``package`` (a valid identifier,
    unique per content), its siblings as ``package.x``; from the snapshot's bytes."""
    if "skill.py" not in snapshot.files:
        raise SkillExecutionError(f"{snapshot.folder} has no skill.py.")
    with _FINDER.lock:
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)
        _FINDER.packages[package] = snapshot
    if package in sys.modules:
        return sys.modules[package]
    try:
        return importlib.import_module(package)
    except Exception as e:
        for name in [n for n in sys.modules if n == package or n.startswith(f"{package}.")]:
            sys.modules.pop(name, None)
        raise SkillExecutionError(
            f"Importing {snapshot.folder / 'skill.py'} failed: {type(e).__name__}: {e}. "
            "Fix the skill's code."
        ) from e
