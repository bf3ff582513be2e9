"""What the registry reports: one entry per candidate skill, shadowing, refreshes.

Plain data with ``to_dict()`` for ``--json``; :mod:`.registry` builds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from skilldeck.skills.model.diagnostics import Diagnostic
from skilldeck.skills.model.skill import Skill, SkillSource

__all__ = ["EntryStatus", "RefreshResult", "Shadowing", "SkillEntry", "active_row"]


class EntryStatus(StrEnum):
    ACTIVE = "active"
    SHADOWED = "shadowed"
    DISABLED = "disabled"
    INVALID = "invalid"
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True, slots=True)
class SkillEntry:
    """One row of ``skills list --all``: a candidate skill and what became of it."""

    name: str
    status: EntryStatus
    source: SkillSource
    folder: Path
    skill_md: Path | None
    skill: Skill | None = None
    #: folder of the skill that wins over this one (shadowed entries only)
    shadowed_by: Path | None = None
    reason: str | None = None
    diagnostics: tuple[Diagnostic, ...] = ()
    #: the registry's view of the name (``SkillRegistry.is_enabled``); None for an
    #: entry built elsewhere, which falls back on what the skill object says
    enabled: bool | None = None

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_error]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if not d.is_error]

    def to_dict(self) -> dict[str, Any]:
        skill = self.skill
        return {
            "name": self.name,
            "description": skill.description if skill else None,
            "path": str(self.folder),
            "skill_md": str(self.skill_md) if self.skill_md else None,
            "source": str(self.source),
            "kind": str(skill.kind) if skill else None,
            "enabled": self.enabled if self.enabled is not None else bool(skill and skill.enabled),
            "version": skill.version if skill else None,
            "status": str(self.status),
            "shadowed_by": str(self.shadowed_by) if self.shadowed_by else None,
            "reason": self.reason,
            "errors": [_problem(d) for d in self.errors],
            "warnings": [_problem(d) for d in self.warnings],
        }


def _problem(d: Diagnostic) -> dict[str, Any]:
    return {"code": d.code, "message": d.message, "line": d.line}


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


@dataclass(frozen=True, slots=True)
class Shadowing:
    """``winner`` hides ``hidden`` (same name); ``reason`` says why in plain words."""

    name: str
    winner: Skill
    hidden: Skill
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "winner": {"path": str(self.winner.folder), "source": str(self.winner.source)},
            "hidden": {"path": str(self.hidden.folder), "source": str(self.hidden.source)},
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class RefreshResult:
    added: list[str]
    changed: list[str]
    removed: list[str]

    @property
    def any(self) -> bool:
        return bool(self.added or self.changed or self.removed)
