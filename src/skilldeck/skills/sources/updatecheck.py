"""``skills check``: what each installed remote skill's source offers now.

What "out of date" means per source kind, from the lock entry's origin:

* git — the requested ref (a branch's tip, a tag, HEAD) now names another commit
  (one ``git ls-remote``; nothing is downloaded);
* index — the index lists another skill digest for the name (one index download);
* url — the skill's content hash differs (the file is downloaded once and each
  skill in it — its folder, for an archive of several — hashed);
* local — not checked: reinstall from the path with ``--force``.

:func:`check_updates` changes nothing; it asks each source and ref once however many
skills came from it. A *pinned* git skill whose tag now names another commit is
``moved`` (a moved tag, a classic supply-chain trick); a pinned URL or index skill is
not asked at all. Applying what it finds is :mod:`skilldeck.skills.sources.updates`.
"""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import httpx2

from skilldeck.config import Settings
from skilldeck.errors import NotASkillSourceError, PackageError, SkilldeckError, SourceError
from skilldeck.skills.packaging.lockfile import (
    LockEntry,
    Scope,
    hash_tree,
    installed,
    skills_root,
    tree_digest,
    verify_entry,
)
from skilldeck.skills.packaging.unpack import extract_archive
from skilldeck.skills.sources.gitsource import remote_commit
from skilldeck.skills.sources.httpsource import open_client
from skilldeck.skills.sources.index import read_index
from skilldeck.skills.sources.installer import fetch_options
from skilldeck.skills.sources.resolve import Candidate, Opened, open_source
from skilldeck.skills.sources.spec import FetchOptions, SourceSpec

__all__ = [
    "State",
    "UpdateStatus",
    "check_entries",
    "check_updates",
    "entry_candidate",
    "selected_entries",
]

State = Literal["up-to-date", "outdated", "moved", "pinned", "local", "missing", "error"]


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


def check_updates(
    settings: Settings,
    *,
    scope: Scope | None = None,
    names: Sequence[str] = (),
    fetch: FetchOptions | None = None,
) -> list[UpdateStatus]:
    """What each installed skill's source offers now. Changes nothing."""
    entries = selected_entries(settings, scope, names)
    return check_entries(settings, entries, fetch_options(settings, fetch))


def check_entries(
    settings: Settings, entries: Sequence[tuple[Scope, LockEntry]], options: FetchOptions
) -> list[UpdateStatus]:
    """:func:`check_updates` for lock ``entries`` already read (``update`` reads the
    lock once for both the check and the fetch). Only these skills' files are hashed,
    to tell whether they were edited after install (or deleted)."""
    with (
        tempfile.TemporaryDirectory(prefix="skilldeck-check-", ignore_cleanup_errors=True) as tmp,
        open_client(options) as client,
    ):
        # one question per source and ref, however many skills
        asked = _Asked(options, client, Path(tmp))
        out = []
        for sc, entry in entries:
            problems = [p.kind for p in verify_entry(settings, sc, entry)]
            modified = any(kind != "missing-skill" for kind in problems)
            gone = skills_root(settings, sc) / entry.name if "missing-skill" in problems else None
            out.append(_status(sc, entry, modified, asked, gone=gone))
        return out


class _Asked:
    """The answers of one check, per (kind, source, ref): many skills installed from
    one repository, index or archive cost one ``ls-remote``, one index download or
    one download of the archive (then a digest per skill folder in it)."""

    def __init__(self, options: FetchOptions, client: httpx2.Client, workdir: Path) -> None:
        self.options = options
        self.client = client
        self.workdir = workdir
        self._answers: dict[tuple[str, str, str | None], object] = {}

    def available(self, entry: LockEntry, scope: Scope) -> str:
        key = (entry.kind, entry.source, entry.ref if entry.kind == "git" else None)
        if key not in self._answers:
            try:
                self._answers[key] = self._ask(entry)
            except SkilldeckError as e:
                self._answers[key] = e
        answer = self._answers[key]
        if isinstance(answer, SkilldeckError):
            raise answer
        if isinstance(answer, _Download):  # a URL: its file, once; a digest per skill
            return answer.digest(entry, scope)
        if isinstance(answer, dict):  # an index: name → digest
            name = entry.subpath or entry.name
            if name not in answer:
                raise SourceError(f"{entry.source} no longer lists skill {entry.name!r}.")
            return str(answer[name])
        return str(answer)

    def _ask(self, entry: LockEntry) -> object:
        """What the source offers: a commit (git), ``{name: digest}`` (index), the
        downloaded file (url)."""
        if entry.kind == "git":
            return remote_commit(entry.source, entry.ref, self.options)
        if entry.kind == "index":
            listed = read_index(self.client, entry.source, self.options)
            return {skill.name: skill.digest for skill in listed}
        workdir = Path(tempfile.mkdtemp(dir=self.workdir))
        spec = SourceSpec("url", entry.source)
        return _Download(open_source(spec, workdir, self.options, self.client), workdir)


@dataclass
class _Download:
    """A URL's file, downloaded once per check, and the content digest of each skill
    it holds (by its folder inside an archive of several; "" for the one skill)."""

    opened: Opened
    workdir: Path
    digests: dict[str, str | SkilldeckError] = field(default_factory=dict)

    def digest(self, entry: LockEntry, scope: Scope) -> str:
        member = entry_candidate(entry, self.opened.candidates(), scope).subpath
        if member not in self.digests:
            try:
                self.digests[member] = self._digest(member)
            except SkilldeckError as e:
                self.digests[member] = e
        found = self.digests[member]
        if isinstance(found, SkilldeckError):
            raise found
        return found

    def _digest(self, member: str) -> str:
        [got] = self.opened.materialize(self.opened.candidates()[:1])  # the one file
        if got.path.is_dir():  # a raw SKILL.md, saved in its folder
            return tree_digest(hash_tree(got.path))
        with tempfile.TemporaryDirectory(dir=self.workdir) as tmp:
            url = self.opened.spec.location  # messages name it, not the temp file
            return tree_digest(
                extract_archive(got.path, Path(tmp), member or None, label=url).files
            )


def entry_candidate(entry: LockEntry, found: list[Candidate], scope: Scope) -> Candidate:
    """The skill of its source (``found``) that ``entry`` was installed from: the one
    in its folder (``subpath``). A URL installed with no folder held one skill; when
    it now holds several, the one of the entry's name is it (if just one is)."""
    subpath = entry.subpath or ""
    if entry.kind == "url" and not subpath:
        named = [c for c in found if c.name == entry.name]
        if len(found) == 1 or len(named) == 1:
            return found[0] if len(found) == 1 else named[0]
        scoped = " --scope user" if scope == "user" else ""
        raise NotASkillSourceError(
            f"{entry.source} now holds {len(found)} skills ({', '.join(c.name for c in found)})"
            f", {len(named) or 'none'} named {entry.name!r}; reinstall the one you mean with "
            f"`skilldeck skills install {shlex.quote(entry.source)} --skill NAME{scoped} --force`."
        )
    for candidate in found:
        if candidate.subpath == subpath:
            return candidate
    raise NotASkillSourceError(
        f"{entry.source} no longer holds skill {entry.name!r} at {subpath or 'its top'}; "
        "reinstall it from its new place."
    )


def selected_entries(
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
    scope: Scope,
    entry: LockEntry,
    modified: bool,
    asked: _Asked,
    *,
    gone: Path | None = None,
) -> UpdateStatus:
    base = UpdateStatus(
        entry.name, scope, entry.kind, entry.source, entry.ref, entry.pinned,
        entry.commit or entry.digest, None, "local", modified,
    )  # fmt: skip
    if gone is not None:  # whatever the source offers, the first thing is to restore it
        return replace(base, state="missing", message=_how_to_restore(gone, scope, entry))
    if entry.kind == "local":
        return replace(
            base,
            message="installed from a local path (not checked); reinstall it with "
            f"`{entry.reinstall_command(scope)}`",
        )
    if entry.pinned and entry.kind != "git":
        return replace(
            base,
            state="pinned",
            message=(
                "held at its installed content; `skilldeck skills install "
                f"{entry.source} --force` takes the source's current content and drops the pin"
            ),
        )
    try:
        available = asked.available(entry, scope)
    except SkilldeckError as e:
        return replace(base, state="error", message=str(e))
    if available == base.installed:
        return replace(base, available=available, state="up-to-date")
    moved = entry.pinned and entry.kind == "git"
    return replace(base, available=available, state="moved" if moved else "outdated")


def _how_to_restore(folder: Path, scope: Scope, entry: LockEntry) -> str:
    """A deleted skill folder, and the commands that restore or forget it."""
    scoped = " --scope user" if scope == "user" else ""
    if entry.kind == "local":
        restore = f"reinstall it with `{entry.reinstall_command(scope)}`"
    else:
        restore = f"restore it with `skilldeck skills update --force {entry.name}{scoped}`"
    forget = f"forget it with `skilldeck skills uninstall {entry.name}{scoped}`"
    return f"{folder} was deleted; {restore}, or {forget}"
