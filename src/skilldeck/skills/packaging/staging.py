"""What one install carries through the flow: the caller's options and a staged skill.

Kept apart from :mod:`.hooks` (which lists the checks and openers) because those
checks live in other packages — the content scanner, the encrypted-pack opener — and
name these types; with the types here, nothing they import leads back to the list
of checks (no import cycle, not even one for type checking).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from skilldeck.skills.model.skill import Skill
from skilldeck.skills.packaging.lockfile import Origin, Scope

__all__ = ["InstallOptions", "StagedSkill"]


@dataclass(frozen=True)
class InstallOptions:
    """What the caller asked of one install (the same for every skill of a source)."""

    scope: Scope = "workspace"
    #: an ed25519 public key: the package must carry a valid signature by it
    verify_key: Path | None = None
    #: replace an installed skill of the same name (the old copy is kept as a backup)
    force: bool = False
    #: an age identity file for encrypted packs (used by an opener, if any)
    identity: Path | None = None
    #: install despite high-severity findings of a content check
    allow_risk: bool = False
    #: where a remote skill came from, recorded in the lock (None: a local install)
    origin: Origin | None = None


@dataclass
class StagedSkill:
    """A skill unpacked into a staging dir and validated, not yet in place."""

    #: the staged copy: read it, never move it (the flow renames it into place)
    folder: Path
    #: relative posix path → sha256 of every file that will be installed
    files: dict[str, str]
    skill: Skill
    manifest: bytes | None = None
    signature: bytes | None = None
    #: key id of the signature verified against ``InstallOptions.verify_key``; a check
    #: that verifies a signature itself sets it (it is recorded in the lock)
    signed_by: str | None = None
    #: messages shown with the install's result; a check may append
    warnings: list[str] = field(default_factory=list)
