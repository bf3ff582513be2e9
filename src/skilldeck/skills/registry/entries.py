"""What the registry reports: one entry per candidate skill, shadowing, refreshes.

Plain data with ``to_dict()`` for ``--json``; :mod:`.registry` builds them with
:func:`candidate_entry` and :func:`invalid_entry` from its precedence pass and its
view of availability.

The three records are plain classes with ``__slots__`` rather than frozen
``@dataclass``es, with what the dataclass gave them: keyword or positional
construction, immutability (``FrozenInstanceError``), equality and hashing by value,
the same ``repr``, ``__match_args__``, pickling. Generating a frozen dataclass's
methods costs about a millisecond per class at every import, and this module is on
the path of every ``skills list --json`` (``python -m bench discovery``, figure
``cli_list_json_warm``; ``python -m bench compare discovery``).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.settings import FrozenRecord
from skilldeck.skills.model.diagnostics import Diagnostic, errors_of, warnings_of
from skilldeck.skills.model.skill import Skill, SkillSource

if TYPE_CHECKING:
    from skilldeck.skills.discovery import InvalidSkill
    from skilldeck.skills.registry.availability import Availability
    from skilldeck.skills.registry.precedence import Resolution

__all__ = [
    "EntryStatus",
    "RefreshResult",
    "Shadowing",
    "SkillEntry",
    "active_row",
    "candidate_entry",
    "invalid_entry",
]


class EntryStatus(StrEnum):
    ACTIVE = "active"
    SHADOWED = "shadowed"
    DISABLED = "disabled"
    INVALID = "invalid"
    UNAVAILABLE = "unavailable"


class SkillEntry(FrozenRecord):
    """One row of ``skills list --all``: a candidate skill and what became of it."""

    __slots__ = (
        "diagnostics",
        "enabled",
        "folder",
        "name",
        "reason",
        "shadowed_by",
        "skill",
        "skill_md",
        "source",
        "status",
    )
    __match_args__ = (
        "name",
        "status",
        "source",
        "folder",
        "skill_md",
        "skill",
        "shadowed_by",
        "reason",
        "diagnostics",
        "enabled",
    )

    name: str
    status: EntryStatus
    source: SkillSource
    folder: Path
    skill_md: Path | None
    skill: Skill | None
    #: folder of the skill that wins over this one (shadowed entries only)
    shadowed_by: Path | None
    reason: str | None
    diagnostics: tuple[Diagnostic, ...]
    #: the registry's view of the name (``SkillRegistry.is_enabled``); None for an
    #: entry built elsewhere, which counts a skill as enabled
    enabled: bool | None

    def __init__(
        self,
        name: str,
        status: EntryStatus,
        source: SkillSource,
        folder: Path,
        skill_md: Path | None,
        skill: Skill | None = None,
        shadowed_by: Path | None = None,
        reason: str | None = None,
        diagnostics: tuple[Diagnostic, ...] = (),
        enabled: bool | None = None,
    ) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "name", name)
        setattr_(self, "status", status)
        setattr_(self, "source", source)
        setattr_(self, "folder", folder)
        setattr_(self, "skill_md", skill_md)
        setattr_(self, "skill", skill)
        setattr_(self, "shadowed_by", shadowed_by)
        setattr_(self, "reason", reason)
        setattr_(self, "diagnostics", diagnostics)
        setattr_(self, "enabled", enabled)

    @property
    def errors(self) -> list[Diagnostic]:
        return errors_of(self.diagnostics)

    @property
    def warnings(self) -> list[Diagnostic]:
        return warnings_of(self.diagnostics)

    def to_dict(self) -> dict[str, Any]:
        skill = self.skill
        return {
            "name": self.name,
            "description": skill.description if skill else None,
            "path": str(self.folder),
            "skill_md": str(self.skill_md) if self.skill_md else None,
            "source": str(self.source),
            "kind": str(skill.kind) if skill else None,
            "enabled": self.enabled if self.enabled is not None else skill is not None,
            "version": skill.version if skill else None,
            "status": str(self.status),
            "shadowed_by": str(self.shadowed_by) if self.shadowed_by else None,
            "reason": self.reason,
            "errors": [_problem(d) for d in self.errors],
            "warnings": [_problem(d) for d in self.warnings],
        }


def _problem(d: Diagnostic) -> dict[str, Any]:
    return {"code": d.code, "message": d.message, "line": d.line}


def candidate_entry(skill: Skill, resolution: Resolution, view: Availability) -> SkillEntry:
    """The entry of one candidate: shadowed (and by what), or its name's winner,
    active, disabled or unavailable (and why) in the registry's ``view``."""
    winner = resolution.winners[skill.name]
    enabled = view.is_enabled(skill)
    shadowed_by, reason = None, None
    if skill is not winner:
        status, shadowed_by = EntryStatus.SHADOWED, winner.folder
        reason = resolution.why_hidden(winner, skill)
    else:
        reason = view.why_unavailable(skill)
        status = EntryStatus.ACTIVE
        if not enabled:
            status = EntryStatus.DISABLED
        elif reason is not None:
            status = EntryStatus.UNAVAILABLE
    return SkillEntry(
        skill.name,
        status,
        skill.source,
        skill.folder,
        skill.skill_md,
        skill,
        shadowed_by=shadowed_by,
        reason=reason,
        diagnostics=tuple(skill.diagnostics),
        enabled=enabled,
    )


def invalid_entry(bad: InvalidSkill) -> SkillEntry:
    """The entry of a skill that failed to load, with its diagnostics."""
    return SkillEntry(
        bad.name,
        EntryStatus.INVALID,
        bad.source,
        bad.folder,
        bad.skill_md,
        diagnostics=tuple(bad.diagnostics),
        enabled=False,
    )


def active_row(skill: Skill) -> dict[str, Any]:
    """``SkillEntry.to_dict()`` of an *active* skill (the winner of its name, enabled
    and available), built straight from the skill: no entry, no Path and no
    Diagnostic objects, so ``skills list --json`` over thousands of snapshot skills
    costs little more than the JSON encoding."""
    errors: list[dict[str, Any]] = []
    warnings: list[dict[str, Any]] = []
    for code, _rule, message, severity, line, _path in skill.diagnostic_rows():
        problem = {"code": code, "message": message, "line": line}
        (errors if severity == "error" else warnings).append(problem)
    return {
        "name": skill.name,
        "description": skill.description,
        "path": skill.folder_str,
        "skill_md": skill.skill_md_str,
        "source": str(skill.source),
        "kind": str(skill.kind),
        "enabled": True,
        "version": skill.version,
        "status": "active",
        "shadowed_by": None,
        "reason": None,
        "errors": errors,
        "warnings": warnings,
    }


class Shadowing(FrozenRecord):
    """``winner`` hides ``hidden`` (same name); ``reason`` says why in plain words."""

    __slots__ = ("hidden", "name", "reason", "winner")
    __match_args__ = ("name", "winner", "hidden", "reason")

    name: str
    winner: Skill
    hidden: Skill
    reason: str

    def __init__(self, name: str, winner: Skill, hidden: Skill, reason: str) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "winner", winner)
        object.__setattr__(self, "hidden", hidden)
        object.__setattr__(self, "reason", reason)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "winner": {"path": str(self.winner.folder), "source": str(self.winner.source)},
            "hidden": {"path": str(self.hidden.folder), "source": str(self.hidden.source)},
            "reason": self.reason,
        }


class RefreshResult(FrozenRecord):
    """The skill names a refresh added, changed and removed."""

    __slots__ = ("added", "changed", "removed")
    __match_args__ = ("added", "changed", "removed")

    added: list[str]
    changed: list[str]
    removed: list[str]

    def __init__(self, added: list[str], changed: list[str], removed: list[str]) -> None:
        object.__setattr__(self, "added", added)
        object.__setattr__(self, "changed", changed)
        object.__setattr__(self, "removed", removed)

    @property
    def any(self) -> bool:
        return bool(self.added or self.changed or self.removed)
