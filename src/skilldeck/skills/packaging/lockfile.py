"""``skills.lock``: what ``skilldeck skills install`` put where, and whether it still matches.

Each install scope has one lock file next to its skills root —
``./.skilldeck/skills.lock`` for the workspace, ``$SKILLDECK_HOME/skills.lock`` for the
user — recording per skill its version, source, install time, signer (when verified)
and the sha256 of every file; a skill fetched from a remote source (git, URL, skills
index: :mod:`skilldeck.skills.sources`) also records the source kind, the ref asked
for, the commit it resolved to, its folder inside the source and whether it is
pinned. Those fields are written only when set, so a lock of local installs reads
and writes exactly as before, and unknown fields of a newer lock are ignored.
``verify`` re-hashes the installed folders and reports
modified, missing and added files, so a skill edited behind the user's back (or by a
compromised dependency) is noticed. The file is JSON, written atomically, and guarded
by an advisory lock so two concurrent installs cannot lose each other's entry.

This module also owns the one walk over a skill folder (:func:`collect_files`) that
pack, install and verify share, so all three agree on which files count.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from skilldeck._atomic import atomic_write_text
from skilldeck._safefs import file_kind, open_regular
from skilldeck.config import WORKSPACE_DIRNAME, Settings
from skilldeck.errors import PackageError, ResourceAccessError
from skilldeck.skills.model.spec import unsafe_name_reason

try:  # POSIX advisory locks; on other platforms installs are simply not serialised
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

Scope = Literal["workspace", "user"]
SCOPES: tuple[Scope, ...] = ("workspace", "user")
LOCK_FILENAME = "skills.lock"
LOCK_FORMAT = 1
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


def skills_root(settings: Settings, scope: Scope) -> Path:
    """Where ``scope`` installs go: ``./.skilldeck/skills`` or ``$SKILLDECK_HOME/skills``."""
    if scope == "workspace":
        return settings.workspace / WORKSPACE_DIRNAME / "skills"
    if scope == "user":
        return settings.home / "skills"
    raise PackageError(f"Unknown install scope {scope!r}; use 'workspace' or 'user'.")


def lock_path(settings: Settings, scope: Scope) -> Path:
    return skills_root(settings, scope).parent / LOCK_FILENAME


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


# ---- the lock file ------------------------------------------------------------------


SourceKind = Literal["local", "git", "url", "index"]


@dataclass(frozen=True)
class Origin:
    """Where a remote skill came from: what ``skills check`` and ``update`` re-fetch."""

    kind: SourceKind
    #: the source as it can be fetched again (a git URL, an https URL, an index URL)
    source: str
    #: the ref asked for (tag, branch, sha); None: the default branch
    ref: str | None = None
    #: the commit the ref resolved to (git sources)
    commit: str | None = None
    #: the skill's folder inside the source ("" or None: its top)
    subpath: str | None = None
    #: set by ``skills pin``: ``update`` keeps this ref
    pinned: bool = False


#: the remote fields of a lock entry and their "not set" values (not written when unset)
_ORIGIN_DEFAULTS: dict[str, Any] = {
    "kind": "local",
    "ref": None,
    "commit": None,
    "subpath": None,
    "pinned": False,
}


@dataclass
class LockEntry:
    name: str
    version: str | None
    source: str
    installed_at: str
    #: sha256 over the sorted ``path\0sha256\n`` lines: the skill's content hash
    digest: str
    files: dict[str, str]
    #: key id of the signature verified at install time (None: not verified)
    signed_by: str | None = None
    kind: SourceKind = "local"
    ref: str | None = None
    commit: str | None = None
    subpath: str | None = None
    pinned: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def origin(self) -> Origin:
        return Origin(self.kind, self.source, self.ref, self.commit, self.subpath, self.pinned)

    @classmethod
    def from_dict(cls, name: str, data: dict[str, Any]) -> LockEntry:
        """An entry as stored; fields a newer skilldeck added are ignored."""
        known = {f for f in cls.__dataclass_fields__ if f != "name"}
        return cls(name=name, **{k: v for k, v in data.items() if k in known})

    def stored(self) -> dict[str, Any]:
        """What the lock file holds for this entry: remote fields only when set."""
        out = {k: v for k, v in self.to_dict().items() if k != "name"}
        for key, unset in _ORIGIN_DEFAULTS.items():
            if out.get(key) == unset:
                del out[key]
        return out


@dataclass
class LockFile:
    path: Path
    skills: dict[str, LockEntry] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> LockFile:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError) as e:
            raise PackageError(f"{path}: unreadable lock file ({e}). Fix or remove it.") from e
        try:
            entries = {
                name: LockEntry.from_dict(name, dict(data))
                for name, data in dict(raw.get("skills", {})).items()
            }
        except (TypeError, AttributeError, ValueError) as e:
            raise PackageError(f"{path}: malformed lock file ({e}). Fix or remove it.") from e
        return cls(path, entries)

    def write(self) -> None:
        data = {
            "format": LOCK_FORMAT,
            "skills": {name: entry.stored() for name, entry in sorted(self.skills.items())},
        }
        atomic_write_text(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")


@contextlib.contextmanager
def locked(path: Path) -> Iterator[LockFile]:
    """Read-modify-write the lock file at ``path`` under an exclusive advisory lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    guard = path.with_name(f".{path.name}.guard")
    with guard.open("a", encoding="utf-8") as fh:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield LockFile.read(path)
        finally:
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


# ---- verify ---------------------------------------------------------------------------

ProblemKind = Literal["missing-skill", "modified", "missing", "added", "unsafe"]


@dataclass(frozen=True)
class VerifyProblem:
    """One way an installed skill differs from what its lock entry recorded."""

    name: str
    scope: Scope
    kind: ProblemKind
    path: str | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def installed(settings: Settings, *, scope: Scope | None = None) -> list[tuple[Scope, LockEntry]]:
    """Every lock entry of ``scope`` (both scopes when None), sorted by scope then name."""
    out: list[tuple[Scope, LockEntry]] = []
    for sc in (scope,) if scope else SCOPES:
        lock = LockFile.read(lock_path(settings, sc))
        out.extend((sc, entry) for _, entry in sorted(lock.skills.items()))
    return out


def verify(settings: Settings, *, scope: Scope | None = None) -> list[VerifyProblem]:
    """Re-hash every installed skill of ``scope`` (both when None) against the lock."""
    problems: list[VerifyProblem] = []
    for sc, entry in installed(settings, scope=scope):
        reason = unsafe_name_reason(entry.name)
        if reason is not None:  # a hand-edited lock file must not aim verify elsewhere
            message = f"lock entry {entry.name!r} is not a usable skill name ({reason})"
            problems.append(VerifyProblem(entry.name, sc, "unsafe", None, message))
            continue
        problems.extend(_verify_entry(skills_root(settings, sc) / entry.name, sc, entry))
    return problems


def _verify_entry(folder: Path, scope: Scope, entry: LockEntry) -> list[VerifyProblem]:
    def problem(kind: ProblemKind, rel: str | None, message: str) -> VerifyProblem:
        return VerifyProblem(entry.name, scope, kind, rel, message)

    if not folder.is_dir():
        return [
            problem("missing-skill", None, f"{folder} is gone (installed {entry.installed_at})")
        ]
    skipped: list[str] = []
    junk: list[str] = []
    try:
        actual = hash_tree(folder, skipped, junk)
    except (PackageError, OSError) as e:
        return [problem("unsafe", None, str(e))]
    out = [problem("unsafe", None, message) for message in skipped]
    out += [
        problem(
            "added",
            rel,
            f"{rel} is not part of the installed skill (install never writes bytecode, "
            "build junk or package metadata; Python may load a .pyc instead of its "
            f"source): delete it from {folder}",
        )
        for rel in junk
    ]
    for rel in sorted(entry.files.keys() | actual.keys()):
        want, have = entry.files.get(rel), actual.get(rel)
        if want == have:
            continue
        if have is None:
            out.append(problem("missing", rel, f"{rel} was deleted"))
        elif want is None:
            out.append(problem("added", rel, f"{rel} was added after install"))
        else:
            out.append(problem("modified", rel, f"{rel} was modified (sha256 {have[:12]}…)"))
    return out
