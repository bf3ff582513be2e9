"""Which code skills may run inside skilldeck's process: trust by content, not name.

A code skill runs **in process** only when one of these holds, and otherwise runs out
of process in the sandbox (``skills/code/codehost.py``):

* the SHA-256 of its folder's code (:attr:`SourceSnapshot.digest`: every ``.py``
  file with its relative path) is recorded in the user's trust file,
  ``$SKILLDECK_HOME/trusted-code-skills.json`` — written by
  ``skilldeck skills trust NAME`` after the user has reviewed the code. Changing,
  adding or renaming any ``.py`` file changes the digest, so an edited skill is no
  longer trusted. A skill's name carries no trust at all: a workspace skill called
  like a trusted one has another digest;
* it is a bundled skill of the installed package: its real folder is inside
  ``skilldeck/bundled/skills`` and that package folder is not inside the workspace
  (a checkout of skilldeck opened as a workspace is writable by the agent, so its
  bundled skills are treated like any other).

Nothing in a workspace can mark a skill trusted: the trust file lives in the user's
skilldeck home, and it is ignored (fail closed, with a warning) unless it is a
regular file owned by the current user that neither group nor others may write.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from skilldeck._atomic import atomic_write_text
from skilldeck.config import Settings
from skilldeck.errors import ConfigError
from skilldeck.skills.code._srcimport import SourceSnapshot
from skilldeck.skills.model.skill import Skill

__all__ = [
    "TRUST_FILENAME",
    "Placement",
    "TrustEntry",
    "TrustStore",
    "bundled_skills_dir",
    "placement",
    "trust_file",
]

log = logging.getLogger(__name__)

TRUST_FILENAME = "trusted-code-skills.json"
_VERSION = 1


def trust_file(settings: Settings) -> Path:
    """Where the user's code-skill trust is recorded."""
    return settings.home / TRUST_FILENAME


def bundled_skills_dir() -> Path:
    """The real folder of the skills shipped inside the installed package."""
    return (Path(__file__).resolve().parents[2] / "bundled" / "skills").resolve()


@dataclass(frozen=True)
class TrustEntry:
    """One trusted digest; name and folder are what the user trusted, for display."""

    sha256: str
    name: str
    folder: str
    trusted_at: float


class TrustStore:
    """The trust file: a JSON list of :class:`TrustEntry`, written atomically (0600)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _usable(self) -> bool:
        try:
            st = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
            log.warning(
                "ignoring %s: it must be a regular file owned by you and writable only by "
                "you (chmod 600 %s); no code skill is trusted meanwhile",
                self.path,
                self.path,
            )
            return False
        return True

    def entries(self) -> list[TrustEntry]:
        """What is trusted; empty (never an error) when the file is missing or unsafe."""
        if not self._usable():
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return [TrustEntry(**row) for row in data.get("trusted", [])]
        except (OSError, ValueError, TypeError, AttributeError) as e:
            log.warning("ignoring unreadable %s (%s); no code skill is trusted", self.path, e)
            return []

    def is_trusted(self, digest: str) -> bool:
        return any(e.sha256 == digest for e in self.entries())

    def _write(self, entries: list[TrustEntry]) -> None:
        if self.path.exists() and not self._usable():
            raise ConfigError(
                f"{self.path} is not a regular file owned by you with mode 0600; fix or "
                "remove it before trusting code skills."
            )
        rows = [asdict(e) for e in entries]
        atomic_write_text(self.path, json.dumps({"version": _VERSION, "trusted": rows}, indent=2))
        os.chmod(self.path, 0o600)

    def trust(self, name: str, snapshot: SourceSnapshot) -> TrustEntry:
        """Record ``snapshot``'s digest (replacing what was trusted for that folder)."""
        folder = str(snapshot.folder)
        entry = TrustEntry(snapshot.digest, name, folder, time.time())
        kept = [e for e in self.entries() if e.folder != folder and e.sha256 != entry.sha256]
        self._write([*kept, entry])
        return entry

    def revoke(self, name: str) -> list[TrustEntry]:
        """Forget every digest recorded under ``name``; returns what was removed."""
        entries = self.entries()
        gone = [e for e in entries if e.name == name]
        if gone:
            self._write([e for e in entries if e.name != name])
        return gone


@dataclass(frozen=True)
class Placement:
    """Where a code skill runs, and why (for logs and ``skills trust --list``)."""

    in_process: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _inside(path: Path, base: Path) -> bool:
    return path == base or base in path.parents


def is_packaged_bundled(skill: Skill, settings: Settings) -> bool:
    """A skill shipped inside the installed package, by real location, with the
    package folder out of the agent's reach (not inside the workspace)."""
    base = bundled_skills_dir()
    if not _inside(skill.folder.resolve(), base) or skill.folder.resolve() == base:
        return False
    return not _inside(base, settings.workspace.resolve())


def placement(skill: Skill, snapshot: SourceSnapshot, settings: Settings) -> Placement:
    """In process for a packaged bundled skill or a trusted digest; else out of process."""
    if is_packaged_bundled(skill, settings):
        return Placement(True, "bundled with skilldeck")
    if TrustStore(trust_file(settings)).is_trusted(snapshot.digest):
        return Placement(True, f"trusted by content (sha256 {snapshot.digest[:12]}…)")
    return Placement(
        False,
        f"not trusted (sha256 {snapshot.digest[:12]}…): runs out of process in the sandbox; "
        f"`skilldeck skills trust {skill.name}` after review runs it in process",
    )
