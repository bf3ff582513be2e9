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

The caller's wishes travel as one frozen :class:`~.staging.InstallOptions`, so a new option
(an identity file, ``allow_risk``) reaches every check without a new parameter in
each function on the way. Nothing here may import a layer above ``skills/``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from skilldeck.skills.execution import build_at_install
from skilldeck.skills.packaging.skillpack import is_encrypted, open_skillpack
from skilldeck.skills.packaging.staging import InstallOptions, StagedSkill
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
