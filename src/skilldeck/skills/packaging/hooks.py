"""Where other install features plug into the one install flow.

Every install — a local folder or ``.skill``, a git repository, a URL, a skills
index, ``skills update`` and ``skills pin`` — ends in
:func:`skilldeck.skills.packaging.package.install`. That function calls what this
module lists, so a feature added here runs for every source kind and every update:

* :data:`OPENERS` — a file suffix → a function that turns such a file into a plain
  ``.skill`` (zip) in a work dir before it is unpacked (encrypted packs decrypt here);
* :data:`STAGED_CHECKS` — checks on a staged skill folder (unpacked, manifest and
  signature checked, SKILL.md validated) *before* it is moved into place: raise a
  :class:`~skilldeck.errors.SkilldeckError` to refuse the install (nothing is
  written), or append to :attr:`StagedSkill.warnings` to warn.

The caller's wishes travel as one frozen :class:`InstallOptions`, so a new option
(an identity file, ``allow_risk``) reaches every check without a new parameter in
each function on the way. Nothing here may import a layer above ``skills/``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from skilldeck.skills.execution import build_at_install
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.packaging.lockfile import Origin, Scope
from skilldeck.skills.packaging.skillpack import is_encrypted, open_skillpack
from skilldeck.skills.scanning.verdicts import install_check

__all__ = [
    "OPENERS",
    "STAGED_CHECKS",
    "InstallOptions",
    "Opener",
    "StagedCheck",
    "StagedSkill",
    "opener_for",
]


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


#: refuse by raising a SkilldeckError; warn by appending to ``staged.warnings``
StagedCheck = Callable[[StagedSkill, InstallOptions], None]
#: (the file given, the options, a fresh work dir) → a plain ``.skill`` to unpack
Opener = Callable[[Path, InstallOptions, Path], Path]

#: run in order on every staged skill before it is committed
#: (the content scanner; then a skill's own Python environment, built before first use)
STAGED_CHECKS: tuple[StagedCheck, ...] = (install_check, build_at_install)
#: lower-case file suffix (with the dot) → its opener
OPENERS: Mapping[str, Opener] = {".skillpack": open_skillpack, ".age": open_skillpack}


def opener_for(path: Path) -> Opener | None:
    """The opener of the file ``path``: by its suffix, else by its content — an
    age-encrypted file renamed ``.skill`` (or given any name) is still opened as a
    pack, not misread as a broken zip."""
    opener = OPENERS.get(path.suffix.lower())
    if opener is None and is_encrypted(path):
        return open_skillpack
    return opener
