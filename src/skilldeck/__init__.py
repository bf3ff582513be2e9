"""skilldeck: a Python runtime for Agent Skills.

The public names are listed in ``__all__`` and pinned by ``tests/unit/test_public_api.py``:
adding one is a deliberate API decision. They are resolved lazily (PEP 562) so that
``import skilldeck`` — and with it the CLI — stays fast; everything else lives in
subpackages and may change.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: public name → module that defines it
_EXPORTS: dict[str, str] = {
    "Settings": "skilldeck.config",
    "load_settings": "skilldeck.config",
    "SkilldeckError": "skilldeck.errors",
    "Skill": "skilldeck.skills.model.skill",
    "SkillMetadata": "skilldeck.skills.model.spec",
    "Diagnostic": "skilldeck.skills.model.diagnostics",
    "load_skill": "skilldeck.skills.format.validate",
    "validate_path": "skilldeck.skills.format.validate",
    "SkillRegistry": "skilldeck.skills.registry.registry",
    "render_available_skills": "skilldeck.skills.execution.disclosure",
    "render_level2": "skilldeck.skills.execution.disclosure",
    "SkillMatcher": "skilldeck.skills.routing.match",
    "validate_skill_set": "skilldeck.skills.policy.policy",
    "compose": "skilldeck.skills.policy.policy",
    "select": "skilldeck.skills.policy.select",
    "CodeSkill": "skilldeck.skills.code.codeskill",
    "SkillContext": "skilldeck.skills.code.codeskill",
    "SkillResult": "skilldeck.skills.code.codeskill",
    "Tool": "skilldeck.tools.base",
    "ToolResult": "skilldeck.tools.base",
    "ToolContext": "skilldeck.tools.base",
    "ToolRegistry": "skilldeck.tools.base",
    "ScriptedModel": "skilldeck.llm.scripted",
    "make_model": "skilldeck.llm.factory",
    "Agent": "skilldeck.agent.loop",
    "build_agent": "skilldeck.agent.builder",
    "SubagentManager": "skilldeck.agent.subagents.subagents",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skilldeck' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
