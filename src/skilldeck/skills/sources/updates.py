"""``skills check`` / ``update`` / ``pin``: keep installed remote skills current.

What "out of date" means per source kind, from the lock entry's origin:

* git — the requested ref (a branch's tip, a tag, HEAD) now names another commit
  (one ``git ls-remote``; nothing is downloaded);
* index — the index lists another skill digest for the name (one index download);
* url — the file's content hash differs (the file is downloaded and hashed);
* local — not checked: reinstall from the path with ``--force``.

:func:`check_updates` changes nothing. :func:`update` re-fetches, verifies and
replaces through the one install flow (atomic rename, previous copy kept under
``backups/``). A skill whose files no longer match the lock (edited after install)
is refused unless ``force``: an update must never silently lose the user's edits.
A skill whose signature was verified at install is updated only to a package signed
by the same key (the key id in the lock).
A *pinned* skill (:func:`pin`) keeps its ref; if a pinned tag now names another
commit — a moved tag, a classic supply-chain trick — ``check`` says ``moved`` and
``update`` refuses it unless ``force``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

import httpx2

from skilldeck.config import Settings
from skilldeck.errors import (
    LocallyModifiedError,
    NotASkillSourceError,
    PackageError,
    SkilldeckError,
    SourceError,
)
from skilldeck.skills.packaging import hooks
from skilldeck.skills.packaging.hooks import InstallOptions, StagedCheck, StagedSkill
from skilldeck.skills.packaging.lockfile import (
    LockEntry,
    Origin,
    Scope,
    hash_tree,
    installed,
    lock_path,
    locked,
    skills_root,
    tree_digest,
    verify,
)
from skilldeck.skills.packaging.package import InstalledSkill, install
from skilldeck.skills.packaging.signing import check_embedded
from skilldeck.skills.packaging.unpack import extract_archive
from skilldeck.skills.sources.gitsource import remote_commit
from skilldeck.skills.sources.httpsource import open_client
from skilldeck.skills.sources.index import read_index
from skilldeck.skills.sources.installer import fetch_options, materialize_one
from skilldeck.skills.sources.resolve import Candidate, open_source
from skilldeck.skills.sources.spec import FetchOptions, SourceSpec

__all__ = ["UpdateResult", "UpdateStatus", "check_updates", "pin", "update"]

State = Literal["up-to-date", "outdated", "moved", "pinned", "local", "error"]


@dataclass(frozen=True)
class UpdateStatus:
    name: str
    scope: Scope
    kind: str
    source: str
    ref: str | None
    pinned: bool
    #: the installed commit (git) or content digest (index, url)
    installed: str | None
    #: what the source offers now (None: not checked, or it failed)
    available: str | None
    state: State
    #: the installed files no longer match the lock (edited after install)
    modified: bool
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class UpdateResult:
    name: str
    scope: Scope
    #: "updated", "up-to-date", or "refused" (``message`` says why)
    outcome: str
    message: str = ""
    installed: InstalledSkill | None = None

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if k != "installed"}
        data["installed"] = self.installed.to_dict() if self.installed else None
        return data


def check_updates(
    settings: Settings,
    *,
    scope: Scope | None = None,
    names: Sequence[str] = (),
    fetch: FetchOptions | None = None,
) -> list[UpdateStatus]:
    """What each installed skill's source offers now. Changes nothing."""
    options = fetch_options(settings, fetch)
    modified = {
        (p.scope, p.name) for p in verify(settings, scope=scope) if p.kind != "missing-skill"
    }
    out: list[UpdateStatus] = []
    asked = _Asked(options)  # one question per source and ref, however many skills
    with open_client(options) as client:
        for sc, entry in _selected(settings, scope, names):
            out.append(_status(sc, entry, (sc, entry.name) in modified, asked, client))
    return out


class _Asked:
    """The answers of one check, per (kind, source, ref): many skills installed from
    one repository or index cost one ``ls-remote`` or one index download."""

    def __init__(self, options: FetchOptions) -> None:
        self.options = options
        self._answers: dict[tuple[str, str, str | None], object] = {}

    def available(self, entry: LockEntry, client: httpx2.Client) -> str:
        key = (entry.kind, entry.source, entry.ref if entry.kind == "git" else None)
        if key not in self._answers:
            try:
                self._answers[key] = _ask(entry, self.options, client)
            except SkilldeckError as e:
                self._answers[key] = e
        answer = self._answers[key]
        if isinstance(answer, SkilldeckError):
            raise answer
        if isinstance(answer, dict):  # an index: name → digest
            name = entry.subpath or entry.name
            if name not in answer:
                raise SourceError(f"{entry.source} no longer lists skill {entry.name!r}.")
            return str(answer[name])
        return str(answer)


def _selected(
    settings: Settings, scope: Scope | None, names: Sequence[str]
) -> list[tuple[Scope, LockEntry]]:
    entries = installed(settings, scope=scope)
    if names:
        known = {e.name for _, e in entries}
        if missing := [n for n in names if n not in known]:
            raise PackageError(
                f"No installed skill named {', '.join(map(repr, missing))} in skills.lock; "
                "see `skilldeck skills check`."
            )
        entries = [(s, e) for s, e in entries if e.name in names]
    return entries


def _status(
    scope: Scope, entry: LockEntry, modified: bool, asked: _Asked, client: httpx2.Client
) -> UpdateStatus:
    base = UpdateStatus(
        entry.name, scope, entry.kind, entry.source, entry.ref, entry.pinned,
        entry.commit or entry.digest, None, "local", modified,
    )  # fmt: skip
    if entry.kind == "local":
        return replace(base, message="installed from a local path; not checked")
    if entry.pinned and entry.kind != "git":
        return replace(
            base,
            state="pinned",
            message="held at its installed content (`skills install SOURCE --force` moves it)",
        )
    try:
        available = asked.available(entry, client)
    except SkilldeckError as e:
        return replace(base, state="error", message=str(e))
    if available == base.installed:
        return replace(base, available=available, state="up-to-date")
    moved = entry.pinned and entry.kind == "git"
    return replace(base, available=available, state="moved" if moved else "outdated")


def _ask(entry: LockEntry, options: FetchOptions, client: httpx2.Client) -> object:
    """What the source offers: a commit (git), ``{name: digest}`` (index), a digest (url)."""
    if entry.kind == "git":
        return remote_commit(entry.source, entry.ref, options)
    if entry.kind == "index":
        return {listed.name: listed.digest for listed in read_index(client, entry.source, options)}
    with tempfile.TemporaryDirectory(prefix="skilldeck-check-", ignore_cleanup_errors=True) as tmp:
        spec = SourceSpec("url", entry.source)
        got = materialize_one(spec, None, Path(tmp), options, client)
        if got.path.is_dir():
            return tree_digest(hash_tree(got.path))
        return _archive_digest(got.path)


def _archive_digest(path: Path) -> str:
    """The content hash a ``.skill``/``.zip`` would install as (unpacked in a temp dir)."""
    with tempfile.TemporaryDirectory(prefix="skilldeck-check-", ignore_cleanup_errors=True) as tmp:
        return tree_digest(extract_archive(path, Path(tmp)).files)


def update(
    settings: Settings,
    *,
    names: Sequence[str] = (),
    all_skills: bool = False,
    scope: Scope | None = None,
    force: bool = False,
    fetch: FetchOptions | None = None,
    allow_risk: bool = False,
) -> list[UpdateResult]:
    """Bring ``names`` (or every installed skill with ``all_skills``) up to date.

    Each skill is handled on its own: one refusal (local edits, a moved pinned tag,
    an unreachable host, high-severity scanner findings unless ``allow_risk``) does
    not stop the others; its result says why.
    """
    if not names and not all_skills:
        raise PackageError("Name the skills to update, or pass --all (see `skills check`).")
    options = fetch_options(settings, fetch)
    statuses = check_updates(settings, scope=scope, names=names, fetch=options)
    results: dict[tuple[Scope, str], UpdateResult] = {}
    groups: dict[tuple[str, str, str | None], list[tuple[Scope, LockEntry]]] = {}
    for status in statuses:
        verdict = _verdict(status, force=force)
        if verdict is not None:
            results[(status.scope, status.name)] = verdict
            continue
        entry = _entry(settings, status.scope, status.name)
        groups.setdefault((entry.kind, entry.source, entry.ref), []).append((status.scope, entry))
    for group in groups.values():  # one fetch per source and ref
        try:
            done = _fetch_and_install(settings, group, options, allow_risk=allow_risk)
        except SkilldeckError as e:
            done = [e] * len(group)
        for (sc, entry), outcome in zip(group, done, strict=True):
            results[(sc, entry.name)] = (
                UpdateResult(entry.name, sc, "refused", str(outcome))
                if isinstance(outcome, SkilldeckError)
                else UpdateResult(entry.name, sc, "updated", installed=outcome)
            )
    return [results[(s.scope, s.name)] for s in statuses]


def _verdict(status: UpdateStatus, *, force: bool) -> UpdateResult | None:
    """The result of a skill that is not to be fetched; None when it is."""

    def refused(message: str) -> UpdateResult:
        return UpdateResult(status.name, status.scope, "refused", message)

    if status.state == "local":
        return refused(
            "installed from a local path; reinstall it with `skills install PATH --force`"
        )
    if status.state == "error":
        return refused(status.message)
    if status.state == "up-to-date":
        return UpdateResult(status.name, status.scope, "up-to-date")
    if status.state == "pinned":
        return UpdateResult(status.name, status.scope, "up-to-date", status.message)
    if status.modified and not force:
        return refused(str(_edited(status.name, status.scope)))
    if status.state == "moved" and not force:
        return refused(
            f"pinned ref {status.ref!r} now names another commit ({status.installed} → "
            f"{status.available}): a moved tag. Check the source; --force takes it."
        )
    return None


def pin(
    settings: Settings,
    name: str,
    ref: str,
    *,
    scope: Scope | None = None,
    force: bool = False,
    fetch: FetchOptions | None = None,
    allow_risk: bool = False,
) -> InstalledSkill:
    """Install ``ref`` (tag, branch or sha) of a git-installed skill and keep it there.

    A skill from a URL or an index has no refs: pinning it holds the content it has
    (``ref`` is ``installed`` or a prefix of its content digest, at least 12 characters),
    so ``check`` and ``update`` leave it alone without asking the source."""
    options = fetch_options(settings, fetch)
    matches = _selected(settings, scope, [name])
    if len(matches) > 1:
        raise PackageError(f"{name!r} is installed in both scopes; pass --scope.")
    sc, entry = matches[0]
    if entry.kind == "local":
        raise PackageError(
            f"{name!r} was installed from a local path, which has nothing to pin; "
            "reinstall it from a git repository, a URL or an index."
        )
    if entry.kind != "git":
        return _hold_content(settings, sc, entry, ref)
    if not force and any(
        p.name == name for p in verify(settings, scope=sc) if p.kind != "missing-skill"
    ):
        raise _edited(name, sc)
    [outcome] = _fetch_and_install(
        settings, [(sc, entry)], options, ref=ref, pinned=True, allow_risk=allow_risk
    )
    if isinstance(outcome, SkilldeckError):
        raise outcome
    return outcome


def _hold_content(settings: Settings, scope: Scope, entry: LockEntry, ref: str) -> InstalledSkill:
    """Pin a URL or index skill to the content it has: mark its lock entry pinned."""
    if ref != "installed" and not (len(ref) >= 12 and entry.digest.startswith(ref)):
        raise PackageError(
            f"{entry.name!r} was installed from a {entry.kind} source, which has no tags or "
            f"branches: pin it to its installed content with `skilldeck skills pin "
            f"{entry.name} installed` (or a prefix of its digest, {entry.digest[:12]})."
        )
    with locked(lock_path(settings, scope)) as lock:
        lock.skills[entry.name] = replace(lock.skills[entry.name], pinned=True)
        lock.write()
    return InstalledSkill(
        entry.name,
        entry.version,
        scope,
        skills_root(settings, scope) / entry.name,
        entry.source,
        len(entry.files),
        entry.digest,
        signed_by=entry.signed_by,
    )


def _edited(name: str, scope: Scope) -> LocallyModifiedError:
    return LocallyModifiedError(
        f"{name!r} ({scope}) was edited after install (its files no longer match "
        "skills.lock; see `skilldeck skills verify`). Updating would lose the edits: "
        "keep a copy and pass --force (the current copy is kept under backups/)."
    )


def _entry(settings: Settings, scope: Scope, name: str) -> LockEntry:
    return next(e for s, e in installed(settings, scope=scope) if e.name == name)


def _fetch_and_install(
    settings: Settings,
    group: list[tuple[Scope, LockEntry]],
    options: FetchOptions,
    *,
    ref: str | None = None,
    pinned: bool | None = None,
    allow_risk: bool = False,
) -> list[InstalledSkill | SkilldeckError]:
    """Fetch the group's one source once (at ``ref``, else the entries' own ref), then
    install each skill over its current copy; one skill's refusal is its own result.
    A failure to fetch at all raises."""
    first = group[0][1]
    ref = ref if ref is not None else first.ref
    spec = SourceSpec(first.kind, first.source, ref)
    with (
        tempfile.TemporaryDirectory(prefix="skilldeck-update-", ignore_cleanup_errors=True) as tmp,
        open_client(options) as client,
    ):
        opened = open_source(spec, Path(tmp), options, client)
        found = opened.candidates()
        wanted = [_candidate_of(entry, found) for _, entry in group]
        unique = list(dict.fromkeys(c for c in wanted if not isinstance(c, SkilldeckError)))
        fetched = {item.candidate: item for item in opened.materialize(unique)}
        out: list[InstalledSkill | SkilldeckError] = []
        for (sc, entry), candidate in zip(group, wanted, strict=True):
            if isinstance(candidate, SkilldeckError):
                out.append(candidate)
                continue
            item = fetched[candidate]
            origin = item.origin or Origin(entry.kind, entry.source)
            keep = entry.pinned if pinned is None else pinned
            try:
                out.append(
                    install(
                        item.path,
                        scope=sc,
                        force=True,
                        settings=settings,
                        allow_risk=allow_risk,
                        origin=replace(origin, ref=ref, pinned=keep),
                        checks=(*hooks.STAGED_CHECKS, *_signer_kept(entry.signed_by)),
                    )
                )
            except SkilldeckError as e:
                out.append(e)
    return out


def _candidate_of(entry: LockEntry, found: list[Candidate]) -> Candidate | SkilldeckError:
    """The source's skill that ``entry`` was installed from (a URL holds just one)."""
    if entry.kind == "url":
        return found[0]
    subpath = entry.subpath or ""
    for candidate in found:
        if candidate.subpath == subpath:
            return candidate
    return NotASkillSourceError(
        f"{entry.source} no longer holds skill {entry.name!r} at {subpath or 'its top'}; "
        "reinstall it from its new place."
    )


def _signer_kept(expected: str | None) -> tuple[StagedCheck, ...]:
    """An update of a skill whose signature was verified at install must be signed by
    the same key (the key the lock recorded): an update must not drop verification."""
    if expected is None:
        return ()

    def same_signer(staged: StagedSkill, options: InstallOptions) -> None:
        if staged.manifest is None or staged.signature is None:
            raise PackageError(
                f"{staged.skill.name!r} was installed with a signature verified by key "
                f"{expected}, but the update is not signed; refused."
            )
        signer = check_embedded(staged.manifest, staged.signature)
        if signer != expected:
            raise PackageError(
                f"{staged.skill.name!r} was installed signed by key {expected}; the update "
                f"is signed by key {signer}; refused (reinstall with --verify to change keys)."
            )
        staged.signed_by = signer

    return (same_signer,)
