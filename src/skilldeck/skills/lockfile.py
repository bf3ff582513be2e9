"""``skills.lock``: what ``skilldeck skills install`` put where, and whether it still matches.

Each install scope has one lock file next to its skills root —
``./.skilldeck/skills.lock`` for the workspace, ``$SKILLDECK_HOME/skills.lock`` for the
user — recording per skill its version, source, install time, signer (when verified)
and the sha256 of every file. ``verify`` re-hashes the installed folders and reports
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
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from skilldeck._atomic import atomic_write_text
from skilldeck.config import WORKSPACE_DIRNAME, Settings
from skilldeck.errors import PackageError

try:  # POSIX advisory locks; on other platforms installs are simply not serialised
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

Scope = Literal["workspace", "user"]
SCOPES: tuple[Scope, ...] = ("workspace", "user")
LOCK_FILENAME = "skills.lock"
LOCK_FORMAT = 1
#: Files and folders that are never part of a skill: build junk and OS litter. Scripts
#: that run create ``__pycache__``, so verify must ignore them too.
EXCLUDED_DIRS = frozenset({"__pycache__", "node_modules", ".git", "__MACOSX"})
EXCLUDED_FILES = frozenset({".DS_Store"})
EXCLUDED_SUFFIXES = (".pyc", ".pyo")
#: Written by ``pack`` inside ``<name>/``; regenerated on every pack, never installed.
MANIFEST_NAME = ".skill-manifest.json"
SIGNATURE_NAME = ".skill-signature"
PACKAGE_META_FILES = frozenset({MANIFEST_NAME, SIGNATURE_NAME})
_CHUNK = 1024 * 1024


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
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def tree_digest(files: dict[str, str]) -> str:
    """One sha256 for a whole skill: over the sorted ``path\\0hash`` lines."""
    lines = "".join(f"{rel}\0{files[rel]}\n" for rel in sorted(files))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def collect_files(
    folder: Path, *, max_files: int | None = None, max_bytes: int | None = None
) -> dict[str, Path]:
    """Every file of the skill in ``folder`` as ``{relative posix path: real path}``.

    Skips :data:`EXCLUDED_DIRS` / files and the package metadata files at the top.
    A symlink to a file inside the folder counts as that file's content; a symlink that
    leaves the folder, or any symlinked directory, is refused — a package must carry
    its own content and never point into the packer's (or installer's) machine.
    """
    base = folder.resolve()
    found: dict[str, Path] = {}
    total = 0
    for dirpath, dirnames, filenames in os.walk(base):
        here = Path(dirpath)
        keep: list[str] = []
        for d in sorted(dirnames):
            if d in EXCLUDED_DIRS:
                continue
            if (here / d).is_symlink():
                raise PackageError(
                    f"{here / d} is a symlinked directory; packages hold real folders only. "
                    "Replace the link with a copy of the folder."
                )
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            full = here / name
            rel = full.relative_to(base)
            if is_excluded(rel.parts) or (len(rel.parts) == 1 and name in PACKAGE_META_FILES):
                continue
            real = _checked_target(full, base)
            found[rel.as_posix()] = real
            total += real.stat().st_size
            _check_limits(len(found), total, max_files, max_bytes, where=folder)
    return found


def _checked_target(full: Path, base: Path) -> Path:
    if not full.is_symlink():
        return full
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


def hash_tree(folder: Path) -> dict[str, str]:
    return {rel: sha256_file(path) for rel, path in collect_files(folder).items()}


# ---- the lock file ------------------------------------------------------------------


@dataclass
class LockEntry:
    name: str
    version: str | None
    source: str
    installed_at: str
    digest: str
    files: dict[str, str]
    #: key id of the signature verified at install time (None: not verified)
    signed_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
                name: LockEntry(**{**data, "name": name})
                for name, data in dict(raw.get("skills", {})).items()
            }
        except (TypeError, AttributeError) as e:
            raise PackageError(f"{path}: malformed lock file ({e}). Fix or remove it.") from e
        return cls(path, entries)

    def write(self) -> None:
        data = {
            "format": LOCK_FORMAT,
            "skills": {
                name: {k: v for k, v in entry.to_dict().items() if k != "name"}
                for name, entry in sorted(self.skills.items())
            },
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
        problems.extend(_verify_entry(skills_root(settings, sc) / entry.name, sc, entry))
    return problems


def _verify_entry(folder: Path, scope: Scope, entry: LockEntry) -> list[VerifyProblem]:
    def problem(kind: ProblemKind, rel: str | None, message: str) -> VerifyProblem:
        return VerifyProblem(entry.name, scope, kind, rel, message)

    if not folder.is_dir():
        return [
            problem("missing-skill", None, f"{folder} is gone (installed {entry.installed_at})")
        ]
    try:
        actual = hash_tree(folder)
    except (PackageError, OSError) as e:
        return [problem("unsafe", None, str(e))]
    out: list[VerifyProblem] = []
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
