"""The skills panel's data: the registry's skills, one skill with its problems, matches.

Plain JSON-ready dicts built from the session service's registry (the one its sessions
use), so the page shows exactly the skills an agent started here can load.
"""

from __future__ import annotations

from typing import Any

from skilldeck.skills.model import Skill
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.routing import SkillMatcher

__all__ = ["match_skills", "show_skill", "skill_rows"]

#: the longest description a list row carries (the detail view has all of it)
ROW_DESCRIPTION = 300


def skill_rows(registry: SkillRegistry) -> list[dict[str, Any]]:
    """Every skill (disabled ones marked), then every skill that failed to load."""
    rows = [
        {
            "name": s.name,
            "description": _short(s.description),
            "path": str(s.folder),
            "enabled": registry.is_enabled(s),
            "problems": len(s.diagnostics),
        }
        for s in registry.list(include_disabled=True)
    ]
    rows += [
        {
            "name": bad.name,
            "description": "Could not be loaded.",
            "path": str(bad.folder),
            "enabled": False,
            "problems": len(bad.diagnostics),
            "invalid": True,
        }
        for bad in registry.invalid
    ]
    return rows


def show_skill(registry: SkillRegistry, name: str) -> dict[str, Any]:
    """One skill in detail with its problems (raises SkillNotFoundError with close
    names); a skill that failed to load is shown with the problems that stopped it."""
    for bad in registry.invalid:
        if bad.name == name and name not in registry:
            return {
                "name": bad.name,
                "description": "",
                "path": str(bad.folder),
                "enabled": False,
                "invalid": True,
                "problems": [d.to_dict() for d in bad.diagnostics],
            }
    skill = registry.get(name, include_disabled=True)
    return _detail(registry, skill)


def _detail(registry: SkillRegistry, skill: Skill) -> dict[str, Any]:
    return {
        "name": skill.name,
        "description": skill.description,
        "version": skill.version,
        "path": str(skill.folder),
        "enabled": registry.is_enabled(skill),
        "available": registry.is_available(skill),
        "unavailable_reason": registry.why_unavailable(skill),
        "problems": [d.to_dict() for d in skill.diagnostics],
    }


def match_skills(registry: SkillRegistry, query: str, top: int = 10) -> list[dict[str, Any]]:
    """The ``top`` skills the matcher ranks best for ``query``."""
    matches = SkillMatcher.for_registry(registry).rank(query, k=top)
    return [
        {
            "name": m.name,
            "description": _short(m.skill.description),
            "path": str(m.skill.folder),
            "score": round(float(m.score), 4),
        }
        for m in matches
    ]


def _short(text: str) -> str:
    return text if len(text) <= ROW_DESCRIPTION else text[: ROW_DESCRIPTION - 1] + "…"
