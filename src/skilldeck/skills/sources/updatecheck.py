"""``skills check``: what each installed remote skill's source offers now.

What "out of date" means per source kind, from the lock entry's origin:

* git — the requested ref (a branch's tip, a tag, HEAD) now names another commit
  (one ``git ls-remote``; nothing is downloaded);
* index — the index lists another skill digest for the name (one index download);
* url — the file's content hash differs (the file is downloaded and hashed);
* local — not checked: reinstall from the path with ``--force``.

:func:`check_updates` changes nothing; it asks each source and ref once however many
skills came from it. A *pinned* git skill whose tag now names another commit is
``moved`` (a moved tag, a classic supply-chain trick); a pinned URL or index skill is
not asked at all. Applying what it finds is :mod:`skilldeck.skills.sources.updates`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

import httpx2

from skilldeck.config import Settings
from skilldeck.errors import PackageError, SkilldeckError, SourceError
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
from skilldeck.skills.sources.resolve import open_source
from skilldeck.skills.sources.spec import FetchOptions, SourceSpec

__all__ = ["State", "UpdateStatus", "check_entries", "check_updates", "selected_entries"]

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
    asked = _Asked(options)  # one question per source and ref, however many skills
    with open_client(options) as client:
        out = []
        for sc, entry in entries:
            problems = [p.kind for p in verify_entry(settings, sc, entry)]
            modified = any(kind != "missing-skill" for kind in problems)
            gone = skills_root(settings, sc) / entry.name if "missing-skill" in problems else None
            out.append(_status(sc, entry, modified, asked, client, gone=gone))
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
    client: httpx2.Client,
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
        available = asked.available(entry, client)
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


def _ask(entry: LockEntry, options: FetchOptions, client: httpx2.Client) -> object:
    """What the source offers: a commit (git), ``{name: digest}`` (index), a digest (url)."""
    if entry.kind == "git":
        return remote_commit(entry.source, entry.ref, options)
    if entry.kind == "index":
        return {listed.name: listed.digest for listed in read_index(client, entry.source, options)}
    with tempfile.TemporaryDirectory(prefix="skilldeck-check-", ignore_cleanup_errors=True) as tmp:
        opened = open_source(SourceSpec("url", entry.source), Path(tmp), options, client)
        # one download: a skill, or an archive whose folder ``subpath`` holds this one
        [got] = opened.materialize(opened.candidates()[:1])
        if got.path.is_dir():
            return tree_digest(hash_tree(got.path))
        return _archive_digest(got.path, entry.subpath)


def _archive_digest(path: Path, member: str | None = None) -> str:
    """The content hash a ``.skill``/``.zip`` would install as (unpacked in a temp dir;
    ``member``: the folder of one skill in an archive of several)."""
    with tempfile.TemporaryDirectory(prefix="skilldeck-check-", ignore_cleanup_errors=True) as tmp:
        return tree_digest(extract_archive(path, Path(tmp), member or None).files)
