"""Issue 16: per-agent gating (``requires-tools``) is computed per call and never
written on the registry's shared skills; machine gating stays the registry's view."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from skilldeck.agent.startup import skills_block
from skilldeck.config import Settings
from skilldeck.skills.execution import machine_gating, render_available_skills, unavailable_for
from skilldeck.skills.model.skill import Skill, SkillKind, SkillSource
from skilldeck.skills.model.spec import SkillMetadata
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.skill_tool import SkillTool


def add_skill(root: Path, name: str, **meta: Any) -> Skill:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    head = f"---\nname: {name}\ndescription: {name}\n---\n"
    (folder / "SKILL.md").write_text(head + textwrap.dedent("Body."), encoding="utf-8")
    return Skill(
        metadata=SkillMetadata(name=name, description=f"The {name} skill", **meta),
        folder=folder,
        skill_md=folder / "SKILL.md",
        body_offset=len(head.encode()),
        kind=SkillKind.PROMPT,
        source=SkillSource.ROOT,
        root=root,
    )


@pytest.fixture
def registry(tmp_path: Path) -> SkillRegistry:
    ws = tmp_path / "ws"
    ws.mkdir()
    reg = SkillRegistry(Settings(workspace=ws, sandbox={"mode": "off"}))
    root = tmp_path / "skills"
    reg.register(add_skill(root, "shell-work", requires_tools=["Bash"]))
    reg.register(add_skill(root, "reading"))
    reg.register(add_skill(root, "needs-bin", requires_bins=["definitely-not-a-program-xyz"]))
    return reg


def names(block: str) -> set[str]:
    return {n for n in ("shell-work", "reading", "needs-bin") if f"<name>{n}</name>" in block}


def test_parent_and_child_keep_their_own_level1_block(registry: SkillRegistry) -> None:
    """A parent with Bash and a child without it, over one registry, interleaved: each
    one's block and listing stay its own (the child used to hide Bash skills from the
    parent by writing unavailable_reason on the shared skills)."""
    parent = SkillTool(registry, available_tools={"Bash", "Read", "Skill"})
    child = SkillTool(registry, available_tools={"Read", "Skill"})
    for _ in range(3):
        assert names(parent.describe()) == {"shell-work", "reading"}
        assert [s.name for s in child.invocable()] == ["reading"]
        assert names(child.describe()) == {"reading"}
        assert [s.name for s in parent.invocable()] == ["reading", "shell-work"]
        # the registry-wide view (system prompt's block) is never narrowed by either
        assert names(render_available_skills(registry.usable())) == {"shell-work", "reading"}
    for skill in registry.list():  # nothing of either agent's (or the registry's) view
        assert not {"enabled", "unavailable_reason", "available"} & set(dir(skill))


def test_two_tool_sets_over_one_registry_never_change_each_other(
    registry: SkillRegistry,
) -> None:
    with_bash = SkillTool(registry, available_tools={"Bash", "Skill"})
    without = SkillTool(registry, available_tools={"Skill"})
    before = {s.name: registry.why_unavailable(s) for s in registry.list()}
    without.lookup("reading")
    with pytest.raises(Exception, match="Bash"):
        without.lookup("shell-work")
    assert with_bash.lookup("shell-work").name == "shell-work"
    assert {s.name: registry.why_unavailable(s) for s in registry.list()} == before
    assert registry.why_unavailable(registry.get("shell-work"), tools={"Skill"})
    assert registry.why_unavailable(registry.get("shell-work"), tools={"Bash"}) is None
    assert registry.why_unavailable(registry.get("shell-work")) is None  # tools unknown


def test_machine_gating_is_the_registrys_view_for_every_agent(registry: SkillRegistry) -> None:
    skill = registry.get("needs-bin")
    machine = registry.why_unavailable(skill)
    assert machine and "definitely-not-a-program-xyz" in machine
    assert not registry.is_available(skill)
    for tools in ({"Bash"}, set(), None):
        reason = registry.why_unavailable(skill, tools=tools)
        assert reason is not None and "definitely-not-a-program-xyz" in reason
    assert "needs-bin" not in [s.name for s in registry.usable(tools={"Bash"})]


def test_unavailable_for_joins_tools_then_machine(tmp_path: Path) -> None:
    skill = add_skill(
        tmp_path, "both", requires_tools=["WebFetch"], requires_bins=["definitely-not-xyz"]
    )
    machine = machine_gating([skill])[skill]
    reason = unavailable_for(skill, {"Read"}, machine)
    assert reason is not None and reason.index("WebFetch") < reason.index("definitely-not-xyz")
    assert "WebFetch" not in machine  # the machine-level answer holds no agent's tools


def test_system_prompt_blocks_of_parent_and_child_interleaved(registry: SkillRegistry) -> None:
    """The system prompt's level-1 block (agent/startup.skills_block) of each agent
    follows its own tools, whatever the other agent's Skill tool did in between."""
    parent_tools, child_tools = {"Bash", "Read", "Skill"}, {"Read", "Skill"}
    child_tool = SkillTool(registry, available_tools=child_tools)
    parent_tool = SkillTool(registry, available_tools=parent_tools)
    for _ in range(2):
        child_tool.describe()
        assert names(skills_block(registry, "t", budget=8000, tools=parent_tools)) == {
            "shell-work",
            "reading",
        }
        parent_tool.describe()
        assert names(skills_block(registry, "t", budget=8000, tools=child_tools)) == {"reading"}
