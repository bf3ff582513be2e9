"""Issue 16: a sub-agent's skills are preloaded by the one load operation
(``tools.skill_tool.load_in_context``) in the child's own session, so a body's
`` !`cmd` `` dynamic context goes through the child's gate exactly as the Skill tool's
does: expanded when a rule allows the command, refused — and reported — otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.agent.builder import build_agent
from skilldeck.agent.events import SubagentEndEvent
from skilldeck.agent.store import SessionStore
from skilldeck.config import Settings, load_settings
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.skills.registry import SkillRegistry

pytestmark = pytest.mark.anyio

TASK = {
    "tool_calls": [
        {
            "name": "Task",
            "input": {
                "description": "stamp",
                "prompt": "stamp it",
                "subagent_type": "general-purpose",
                "skills": ["stamper"],
            },
        }
    ]
}


def setup(tmp_path: Path, home: Path, allowed: str) -> tuple[Settings, SkillRegistry]:
    skill = tmp_path / "skills" / "stamper"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: stamper\ndescription: Stamps the reply.\n{allowed}---\n"
        "The stamp is: !`echo SENTINEL`\n",
        encoding="utf-8",
    )
    work = tmp_path / "work"
    work.mkdir()
    settings = load_settings(workspace=work, home=home)
    registry = SkillRegistry.discover(settings, roots=[tmp_path / "skills"], no_defaults=True)
    return settings, registry


def child_bodies(settings: Settings, parent_id: str) -> list[str]:
    """The skill bodies stored in the children of ``parent_id``."""
    with SessionStore.open(settings) as store:
        children = [s for s in store.list(limit=50) if s.parent_id == parent_id]
        return [
            str(m.content)
            for child in children
            for m in store.load_messages(child.id)
            if getattr(m, "meta", None) == "skill-body"
        ]


async def test_a_child_skill_s_dynamic_context_runs_through_the_child_gate(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    """The skill grants the command and a rule allows it: the child's stored body holds
    the command's output, not the raw !`…` (as ``run --skill`` and the Skill tool)."""
    settings, registry = setup(tmp_path, skilldeck_home, "allowed-tools: Bash(echo:*)\n")
    model = ScriptedModel.from_lines([TASK, {"text": "stamped"}, {"text": "all done"}])
    with build_agent(
        settings, model=model, registry=registry, allow=["Bash(echo:*)"], json_events=True
    ) as agent:
        result = await agent.run("delegate")
    ends = [e for e in result.events if isinstance(e, SubagentEndEvent)]
    assert [e.status for e in ends] == ["completed"], ends
    bodies = child_bodies(settings, result.session_id)
    assert len(bodies) == 1
    assert "The stamp is: SENTINEL" in bodies[0] and "!`echo" not in bodies[0]


@pytest.mark.parametrize(
    ("allowed", "deny", "why"),
    [
        # nothing allows the command: the skill declares no tools, so the child holds
        # the parent's (skills.undeclared_tools = "parent") and Bash still asks
        ("", [], "Bash needs approval"),
        ("allowed-tools: Bash(echo:*)\n", ["Bash(echo:*)"], "echo SENTINEL"),  # parent's deny
    ],
)
async def test_without_a_rule_the_spawn_reports_the_refusal(
    tmp_path: Path, skilldeck_home: Path, allowed: str, deny: list[str], why: str
) -> None:
    """The child's own gate (its skills' policy under the parent's rules) refuses the
    command: the child never starts and the Task result says which skill and why."""
    settings, registry = setup(tmp_path, skilldeck_home, allowed)
    model = ScriptedModel.from_lines([TASK, {"text": "could not"}])
    with build_agent(
        settings, model=model, registry=registry, deny=deny, json_events=True
    ) as agent:
        result = await agent.run("delegate")
    ends = [e for e in result.events if isinstance(e, SubagentEndEvent)]
    assert [e.status for e in ends] == ["error"], ends
    task_result = next(
        e for e in result.events if getattr(e, "name", None) == "Task" and hasattr(e, "is_error")
    )
    assert task_result.is_error
    text = str(task_result.content)
    assert "failed (error)" in text and "Skill 'stamper' was not loaded" in text
    assert "echo SENTINEL" in text and why in text
    assert not child_bodies(settings, result.session_id)  # the child never started
