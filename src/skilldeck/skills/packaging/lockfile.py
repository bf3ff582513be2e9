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

The one walk over a skill folder that pack, install and verify share (so all three
agree on which files count) is :mod:`.filetree`; its names are re-exported here.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from skilldeck._atomic import atomic_write_text
from skilldeck.config import WORKSPACE_DIRNAME, Settings
from skilldeck.errors import PackageError
from skilldeck.skills.model.spec import unsafe_name_reason
from skilldeck.skills.packaging.filetree import (
    EXCLUDED_DIRS,
    EXCLUDED_FILES,
    EXCLUDED_SUFFIXES,
    MANIFEST_NAME,
    MAX_DEPTH,
    PACKAGE_META_FILES,
    SIGNATURE_NAME,
    collect_files,
    hash_tree,
    is_excluded,
    open_file,
    sha256_file,
    tree_digest,
)
from skilldeck.skills.packaging.lockschema import (
    entry_fields,
    reinstall_command,
    skills_table,
    without_entry,
)

try:  # POSIX advisory locks; on other platforms installs are simply not serialised
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: the folder walk's names (``filetree.py``) are re-exported where callers found them
__all__ = [
    "EXCLUDED_DIRS",
    "EXCLUDED_FILES",
    "EXCLUDED_SUFFIXES",
    "LOCK_FILENAME",
    "LOCK_FORMAT",
    "MANIFEST_NAME",
    "MAX_DEPTH",
    "PACKAGE_META_FILES",
    "SCOPES",
    "SIGNATURE_NAME",
    "LockEntry",
    "LockFile",
    "Origin",
    "ProblemKind",
    "Scope",
    "SourceKind",
    "VerifyProblem",
    "collect_files",
    "drop_entry",
    "guarded",
    "hash_tree",
    "installed",
    "is_excluded",
    "is_modified",
    "lock_path",
    "locked",
    "open_file",
    "recorded_names",
    "sha256_file",
    "skills_root",
    "tree_digest",
    "verify",
    "verify_entry",
]

Scope = Literal["workspace", "user"]
SCOPES: tuple[Scope, ...] = ("workspace", "user")
LOCK_FILENAME = "skills.lock"
LOCK_FORMAT = 1


def skills_root(settings: Settings, scope: Scope) -> Path:
    """Where ``scope`` installs go: ``./.skilldeck/skills`` or ``$SKILLDECK_HOME/skills``."""
    if scope == "workspace":
        return settings.workspace / WORKSPACE_DIRNAME / "skills"
    if scope == "user":
        return settings.home / "skills"
    raise PackageError(f"Unknown install scope {scope!r}; use 'workspace' or 'user'.")


def lock_path(settings: Settings, scope: Scope) -> Path:
    return skills_root(settings, scope).parent / LOCK_FILENAME


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

    def reinstall_command(self, scope: Scope) -> str:
        """``skilldeck skills install …`` that installs this skill again as it was
        (its source, git ref and folder inside the source), over what is there."""
        return reinstall_command(self.to_dict(), user=scope == "user")

    @classmethod
    def from_dict(cls, name: str, data: object, *, path: Path | None = None) -> LockEntry:
        """An entry as stored, each field checked (:mod:`.lockschema`: a malformed one is
        a :class:`PackageError` naming ``path``, the entry and the field); fields a
        newer skilldeck added are ignored."""
        return cls(name=name, **entry_fields(path or Path(LOCK_FILENAME), name, data))

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
        """The lock at ``path`` (empty when there is none); a malformed one is a
        :class:`PackageError` naming the entry and field (:mod:`.lockschema`)."""
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError) as e:
            raise PackageError(f"{path}: unreadable lock file ({e}). Fix or remove it.") from e
        entries = {
            name: LockEntry.from_dict(name, data, path=path)
            for name, data in skills_table(path, raw).items()
        }
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
    with guarded(path):
        yield LockFile.read(path)


@contextlib.contextmanager
def guarded(path: Path) -> Iterator[None]:
    """Hold the exclusive advisory lock of the lock file at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    guard = path.with_name(f".{path.name}.guard")
    with guard.open("a", encoding="utf-8") as fh:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def recorded_names(path: Path) -> set[str]:
    """The skills the lock at ``path`` has an entry for, well-formed or not (what
    ``uninstall`` needs: an entry it cannot read must not keep it from removing the
    skill). A file that is not a table of entries is still an error."""
    try:
        text = path.read_text(encoding="utf-8")
        raw = json.loads(text)
    except FileNotFoundError:
        return set()
    except (OSError, ValueError) as e:
        raise PackageError(f"{path}: unreadable lock file ({e}). Fix or remove it.") from e
    return set(skills_table(path, raw))


def drop_entry(path: Path, name: str) -> None:
    """Take the entry of ``name`` out of the lock at ``path`` (the caller holds
    :func:`guarded`), leaving every other entry byte for byte as it was — even one
    this skilldeck cannot read."""
    text = path.read_text(encoding="utf-8")
    atomic_write_text(path, without_entry(path, text, name))


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
        problems.extend(verify_entry(settings, sc, entry))
    return problems


def verify_entry(settings: Settings, scope: Scope, entry: LockEntry) -> list[VerifyProblem]:
    """Re-hash one installed skill against its lock ``entry`` (what ``skills check``,
    ``update`` and ``pin`` ask of the skills they name, without hashing the others)."""
    reason = unsafe_name_reason(entry.name)
    if reason is not None:  # a hand-edited lock file must not aim verify elsewhere
        message = f"lock entry {entry.name!r} is not a usable skill name ({reason})"
        return [VerifyProblem(entry.name, scope, "unsafe", None, message)]
    return _verify_entry(skills_root(settings, scope) / entry.name, scope, entry)


def is_modified(settings: Settings, scope: Scope, entry: LockEntry) -> bool:
    """Whether the installed files of ``entry`` no longer match the lock (edited,
    added or removed files, or an unsafe entry); a skill folder that is gone is not
    "modified": there are no edits to lose."""
    return any(p.kind != "missing-skill" for p in verify_entry(settings, scope, entry))


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
