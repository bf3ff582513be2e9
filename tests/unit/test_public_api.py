"""The public surface is pinned: changing it means changing this list on purpose."""

from __future__ import annotations

import subprocess
import sys

import skilldeck

EXPECTED = {
    "__version__",
    "Settings",
    "load_settings",
    "SkilldeckError",
    "Skill",
    "SkillMetadata",
    "Diagnostic",
    "load_skill",
    "validate_path",
    "SkillRegistry",
    "render_available_skills",
    "render_level2",
    "SkillMatcher",
    "validate_skill_set",
    "compose",
    "select",
    "CodeSkill",
    "SkillContext",
    "SkillResult",
    "Tool",
    "ToolResult",
    "ToolContext",
    "ToolRegistry",
    "ScriptedModel",
    "make_model",
    "Agent",
    "build_agent",
    "SubagentManager",
}


def test_all_is_pinned() -> None:
    assert set(skilldeck.__all__) == EXPECTED


def test_every_public_name_resolves() -> None:
    for name in skilldeck.__all__:
        assert getattr(skilldeck, name) is not None, name


def test_import_is_light() -> None:
    heavy = "('pydantic', 'typer', 'openai')"
    code = f"import sys, skilldeck; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
