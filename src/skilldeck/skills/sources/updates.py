"""``skills update`` / ``pin``: bring installed remote skills up to date, or hold them.

:func:`update` reads the lock once, asks
:func:`~skilldeck.skills.sources.updatecheck.check_entries` what each source offers,
then re-fetches (once per source and ref), verifies and replaces through the one
install flow (atomic rename, previous copy kept under ``backups/``).
A skill whose files no longer match the lock (edited after install) is refused unless
``force``: an update must never silently lose the user's edits. A skill whose
signature was verified at install is updated only to a package signed by the same
key (the key id in the lock). A *pinned* skill (:func:`pin`) keeps its ref; if a
pinned tag now names another commit — a moved tag — ``update`` refuses it unless
``force``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from skilldeck.config import Settings
from skilldeck.errors import (
    LocallyModifiedError,
    PackageError,
    SkilldeckError,
)
from skilldeck.skills.packaging import hooks
from skilldeck.skills.packaging.hooks import InstallOptions, StagedCheck, StagedSkill
from skilldeck.skills.packaging.lockfile import (
    LockEntry,
    Origin,
    Scope,
    is_modified,
    lock_path,
    locked,
    skills_root,
)
from skilldeck.skills.packaging.package import InstalledSkill, install
from skilldeck.skills.packaging.signing import check_embedded
from skilldeck.skills.sources.httpsource import open_client
from skilldeck.skills.sources.installer import fetch_options
from skilldeck.skills.sources.resolve import Candidate, open_source
from skilldeck.skills.sources.spec import FetchOptions, SourceSpec
from skilldeck.skills.sources.updatecheck import (
    UpdateStatus,
    check_entries,
    entry_candidate,
    selected_entries,
)

__all__ = ["UpdateResult", "pin", "update"]


@dataclass(frozen=True)
class UpdateResult:
    name: str
    scope: Scope
    #: "updated", "up-to-date", "pinned" (kept where it was pinned; ``message`` says
    #: how to move or drop the pin) or "refused" (``message`` says why)
    outcome: str
    message: str = ""
    installed: InstalledSkill | None = None

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if k != "installed"}
        data["installed"] = self.installed.to_dict() if self.installed else None
        return data


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
    entries = selected_entries(settings, scope, names)
    statuses = check_entries(settings, entries, options)
    results: dict[tuple[Scope, str], UpdateResult] = {}
    groups: dict[tuple[str, str, str | None], list[tuple[Scope, LockEntry]]] = {}
    for (sc, entry), status in zip(entries, statuses, strict=True):
        verdict = _verdict(status, force=force)
        if verdict is not None:
            results[(sc, entry.name)] = verdict
            continue
        groups.setdefault((entry.kind, entry.source, entry.ref), []).append((sc, entry))
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

    if status.state == "missing" and (status.kind == "local" or not force):
        return refused(status.message)  # deleted: --force restores it (nothing to lose)
    if status.state == "local":  # the message says how to reinstall it
        return refused(status.message)
    if status.state == "error":
        return refused(status.message)
    if status.state == "pinned":  # a URL or index skill held at its content
        return UpdateResult(status.name, status.scope, "pinned", status.message)
    if status.state == "up-to-date" and status.pinned:  # a git skill at its pinned ref
        return UpdateResult(status.name, status.scope, "pinned", _at_pin(status))
    if status.state == "up-to-date":
        return UpdateResult(status.name, status.scope, "up-to-date")
    if status.modified and not force:
        return refused(str(_edited(status.name, status.scope)))
    if status.state == "moved" and not force:
        return refused(
            f"pinned ref {status.ref!r} now names another commit ({status.installed} → "
            f"{status.available}): a moved tag. Check the source; --force takes it."
        )
    return None


def _at_pin(status: UpdateStatus) -> str:
    """Why a pinned git skill stays where it is, and how to move or drop the pin."""
    return (
        f"pinned to {status.ref}; `skilldeck skills pin {status.name} REF` moves the pin, "
        f"`skilldeck skills install {status.source} --force` drops it"
    )


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
    matches = selected_entries(settings, scope, [name])
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
    if not force and is_modified(settings, sc, entry):
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
        wanted = [_candidate_of(entry, found, sc) for sc, entry in group]
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


def _candidate_of(
    entry: LockEntry, found: list[Candidate], scope: Scope
) -> Candidate | SkilldeckError:
    """The source's skill that ``entry`` was installed from (see :func:`entry_candidate`)."""
    try:
        return entry_candidate(entry, found, scope)
    except SkilldeckError as e:
        return e


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
