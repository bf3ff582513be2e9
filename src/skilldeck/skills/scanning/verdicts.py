"""Scan verdicts: the install check, and quarantine for roots that are not trusted.

Install (:func:`install_check`, plugged into the install flow's ``STAGED_CHECKS``)
scans the staged folder and refuses high-severity findings unless ``allow_risk``.

Skills can also arrive without skilldeck: ``npx skills add`` and other tools write
into ``~/.claude/skills`` and ``~/.agents/skills`` (and a workspace's
``.claude/skills``, ``.agents/skills``); ``skills.dirs`` may point at a cloned
marketplace. Those roots are *not trusted* unless they hold a ``.skilldeck-trusted``
marker file; skilldeck's own roots (``$SKILLDECK_HOME/skills``,
``./.skilldeck/skills``: installs were scanned), ``--root`` folders given on the
command line and the bundled skills are. A skill in an untrusted root whose content
has a high-severity finding is *quarantined*: the registry holds it unavailable with
the reason (``skills list --all`` shows it) and it is never offered to the model.

Discovery stays fast: the registry asks this module on each refresh, and an answer
is kept per folder under a stat signature of its files (names, sizes, mtimes) in
memory and in ``<cache>/scan-verdicts.json``, which also maps content digests to
verdicts: a folder is read and hashed only when its files changed, and scanned only
when that content was never scanned before.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from skilldeck._atomic import atomic_write_text
from skilldeck.errors import RiskyContentError
from skilldeck.skills import scanning as _scanning
from skilldeck.skills.model.skill import Skill, SkillSource
from skilldeck.skills.scanning.files import SKIP_DIRS, skill_files

if TYPE_CHECKING:
    from skilldeck.config import Settings
    from skilldeck.skills.packaging.staging import InstallOptions, StagedSkill
    from skilldeck.skills.scanning.findings import Finding

__all__ = [
    "QUARANTINE_PREFIX",
    "TRUSTED_MARKER",
    "install_check",
    "quarantine_reason",
    "quarantined",
    "root_is_trusted",
]

TRUSTED_MARKER = ".skilldeck-trusted"
QUARANTINE_PREFIX = "quarantined by the content scanner"
_CACHE_NAME = "scan-verdicts.json"
_CACHE_FORMAT = 2
#: verdicts by folder, in this process: {folder: (stat signature, reason or "")}
_MEMO: dict[str, tuple[str, str]] = {}
#: verdicts by Skill object: a registry re-resolving the same discovery (register,
#: enable…) walks nothing; a new discovery makes new objects, checked by stat again
_BY_SKILL: weakref.WeakKeyDictionary[Skill, str] = weakref.WeakKeyDictionary()
_ALWAYS_TRUSTED = frozenset({SkillSource.REGISTERED, SkillSource.ROOT, SkillSource.BUNDLED})


class _RootLike(Protocol):
    @property
    def path(self) -> Path: ...
    @property
    def source(self) -> SkillSource: ...


class _ScanLike(Protocol):
    @property
    def root(self) -> _RootLike: ...
    @property
    def skills(self) -> list[Skill]: ...


# ---- install ------------------------------------------------------------------------


def install_check(staged: StagedSkill, options: InstallOptions) -> None:
    """Scan a staged skill: high findings refuse the install unless ``allow_risk``;
    every finding kept is shown as a warning with its code, file and line."""
    report = _scanning.scan_skill(staged.folder)
    high = report.high
    if high and not options.allow_risk:
        raise RiskyContentError(refusal(staged.skill.name, high), findings=high)
    for finding in report.findings:
        if finding.severity.value != "low":
            staged.warnings.append(
                f"{finding.code} ({finding.severity.value}) {finding.file}:{finding.line}: "
                f"{finding.message}"
            )


def refusal(name: str, high: Sequence[Finding], *, width: int = 80) -> str:
    """The scanner's refusal: a summary line, one line per finding (``width`` columns
    at most, the first five), and what to do — short lines a terminal shows whole."""
    count = f"{len(high)} high finding" + ("s" if len(high) != 1 else "")
    lines = [f"Skill {name!r} refused by the content scanner, {count}:"]
    for f in high[:5]:
        line = f"  {f.code} {f.file}:{f.line} {f.message}"
        lines.append(line if len(line) <= width else line[: width - 1] + "…")
    if len(high) > 5:
        lines.append(f"  … and {len(high) - 5} more")
    lines.append("Read them (`skilldeck skills scan PATH`), then pass --allow-risk")
    lines.append("to install anyway.")
    return "\n".join(lines)


# ---- quarantine ---------------------------------------------------------------------


def root_is_trusted(path: Path, source: SkillSource, settings: Settings) -> bool:
    """Whether skills under this discovery root skip the scanner (see module docs)."""
    if source in _ALWAYS_TRUSTED:
        return True
    own = {settings.home / "skills", settings.workspace / ".skilldeck" / "skills"}
    if path in own or os.path.realpath(path) in {os.path.realpath(p) for p in own}:
        return True
    return os.path.isfile(os.path.join(path, TRUSTED_MARKER))


def quarantined(scans: Sequence[_ScanLike], settings: Settings) -> dict[Skill, str]:
    """The quarantine reason of each skill of an untrusted root that has one.

    The registry calls this on each refresh and keeps the answer as its own view
    (after machine gating, whose reason comes first); nothing is written onto the
    skills."""
    found: dict[Skill, str] = {}
    untrusted = [s for s in scans if not root_is_trusted(s.root.path, s.root.source, settings)]
    if not untrusted or not any(scan.skills for scan in untrusted):
        return found
    cache: _VerdictCache | None = None
    for scan in untrusted:
        for skill in scan.skills:
            known = _BY_SKILL.get(skill)
            if known is None:
                cache = cache if cache is not None else _VerdictCache(settings.cache_dir)
                known = _BY_SKILL[skill] = quarantine_reason(skill.folder, cache) or ""
            if known:
                found[skill] = known
    if cache is not None:
        cache.save()
    return found


def quarantine_reason(folder: Path, cache: _VerdictCache | None = None) -> str | None:
    """Why the skill at ``folder`` is quarantined (its high findings), or None."""
    key = os.fspath(folder)
    signature = _stat_signature(folder)
    memo = _MEMO.get(key)
    if memo is not None and memo[0] == signature:
        return memo[1] or None
    cache = cache if cache is not None else _VerdictCache(None)
    reason = cache.lookup(key, signature)
    if reason is None:
        digest = _content_digest(folder)
        reason = cache.by_digest.get(digest)
        if reason is None:
            report = _scanning.scan_skill(folder)
            reason = f"{QUARANTINE_PREFIX}: {report.summary()}" if report.high else ""
            reason += "; see `skilldeck skills scan`" if reason else ""
            cache.by_digest[digest] = reason
        cache.by_path[key] = [signature, digest]
        cache.dirty = True
    _MEMO[key] = (signature, reason)
    return reason or None


def _files(folder: Path) -> Iterable[tuple[str, Path]]:
    return skill_files(folder)


def _stat_signature(folder: Path) -> str:
    """Names, sizes, mtimes and inodes of the files the scanner reads: one
    ``scandir`` per folder and one ``lstat`` per entry, nothing opened."""
    h = hashlib.sha256()
    pending = [os.fspath(folder)]
    while pending:
        here = pending.pop()
        try:
            with os.scandir(here) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.name not in SKIP_DIRS:
                    pending.append(entry.path)
            elif stat.S_ISREG(st.st_mode):
                h.update(
                    f"{entry.path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\n".encode(
                        errors="surrogateescape"
                    )
                )
    return h.hexdigest()[:32]


def _content_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for rel, path in _files(folder):
        try:
            with open(path, "rb") as fh:
                data = fh.read(8 << 20)
        except OSError:
            continue
        h.update(rel.encode(errors="surrogateescape") + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


class _VerdictCache:
    """``<cache>/scan-verdicts.json``: folder → [stat signature, digest]; digest →
    reason ("" for clean). Unreadable or foreign files are treated as empty."""

    def __init__(self, cache_dir: Path | None) -> None:
        self.path = cache_dir / _CACHE_NAME if cache_dir is not None else None
        self.by_path: dict[str, list[str]] = {}
        self.by_digest: dict[str, str] = {}
        self.dirty = False
        if self.path is not None:
            self._load(self.path)

    def _load(self, path: Path) -> None:
        try:
            doc: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(doc, dict) and doc.get("format") == _CACHE_FORMAT:
            by_path, by_digest = doc.get("folders"), doc.get("digests")
            if isinstance(by_path, dict) and isinstance(by_digest, dict):
                self.by_path, self.by_digest = by_path, by_digest

    def lookup(self, folder: str, signature: str) -> str | None:
        entry = self.by_path.get(folder)
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == signature:
            reason = self.by_digest.get(entry[1])
            return reason if isinstance(reason, str) else None
        return None

    def save(self) -> None:
        if not self.dirty or self.path is None:
            return
        doc = {"format": _CACHE_FORMAT, "folders": self.by_path, "digests": self.by_digest}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps(doc, sort_keys=True))
        except OSError:
            pass  # a cache that cannot be written costs a rescan, nothing more
        self.dirty = False
