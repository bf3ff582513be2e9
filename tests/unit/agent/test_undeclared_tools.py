"""Skills that declare no ``allowed-tools`` (94% of the corpus): ``skills.undeclared_tools``
decides what ``--skill X`` and ``Task(skills=[X])`` hold, and a set that leaves a run or
a child without any tool is refused up front (SD311), never run to a hollow "Done"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skilldeck.agent.builder import build_agent
from skilldeck.agent.events import SubagentStartEvent, ToolResultEvent
from skilldeck.config import Settings, load_settings
from skilldeck.errors import PolicyError
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.skills.registry import SkillRegistry

pytestmark = pytest.mark.anyio

SKILLS = {
    "release-notes": "",  # like the corpus skill: no allowed-tools
    "careful": "forbidden-tools: Bash\n",
    "reader": "allowed-tools: Read Glob\n",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for name, extra in SKILLS.items():
        folder = tmp_path / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: The {name} skill.\n{extra}---\nSteps.\n",
            encoding="utf-8",
        )
    (tmp_path / "ws").mkdir()
    return tmp_path


def setup(root: Path, **skills: Any) -> tuple[Settings, SkillRegistry]:
    settings = load_settings(workspace=root / "ws", skills=skills or None)
    registry = SkillRegistry.discover(settings, roots=[root / "skills"], no_defaults=True)
    return settings, registry


def tools_of(root: Path, names: list[str], **skills: Any) -> set[str]:
    settings, registry = setup(root, **skills)
    model = ScriptedModel.from_lines([])
    with build_agent(settings, model=model, registry=registry, skills=names) as agent:
        return set(agent.tools.names())


def test_parent_is_the_default_and_keeps_the_run_s_tools_but_spawning(root: Path) -> None:
    assert Settings().skills.undeclared_tools == "parent"
    plain = tools_of(root, [])
    held = tools_of(root, ["release-notes"])
    assert {"Read", "Write", "Edit", "Bash"} <= held
    assert held == plain - {"Task", "TaskOutput", "Agent"}


def test_what_an_undeclared_skill_forbids_is_still_removed(root: Path) -> None:
    held = tools_of(root, ["careful"])
    assert "Bash" not in held and "Write" in held


def test_a_declaring_skill_decides_a_mixed_set(root: Path) -> None:
    assert tools_of(root, ["reader", "release-notes"]) == {"Read", "Glob"}


def test_none_refuses_a_run_with_no_tool_up_front(root: Path) -> None:
    with pytest.raises(PolicyError) as caught:
        tools_of(root, ["release-notes"], undeclared_tools="none")
    message = str(caught.value)
    assert [d.code for d in caught.value.diagnostics] == ["SD311"]
    assert "Skills release-notes leave this run no tool" in message
    assert 'skills.undeclared_tools = "parent"' in message and "add allowed-tools" in message


async def test_a_child_that_could_not_act_is_refused_not_reported_done(root: Path) -> None:
    settings, registry = setup(root, undeclared_tools="none")
    spawn = {
        "name": "Task",
        "input": {"description": "notes", "prompt": "Write notes", "skills": ["release-notes"]},
    }
    model = ScriptedModel.from_lines(
        [{"tool_calls": [spawn]}, {"for": "Write notes", "text": "Done"}, {"text": "ok"}]
    )
    with build_agent(settings, model=model, registry=registry) as agent:
        result = await agent.run("delegate")
    task = next(e for e in result.events if isinstance(e, ToolResultEvent))
    assert task.is_error and "SD311" in task.content and "release-notes" in task.content
    assert not any(isinstance(e, SubagentStartEvent) for e in result.events)  # never ran


async def test_a_child_that_got_stuck_is_no_success(root: Path) -> None:
    settings, registry = setup(root)
    spawn = {"name": "Task", "input": {"description": "look", "prompt": "Look around"}}
    glob = {"for": "Look around", "tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]}
    model = ScriptedModel.from_lines([{"tool_calls": [spawn]}, *[glob] * 6, {"text": "ok"}])
    with build_agent(settings, model=model, registry=registry) as agent:
        result = await agent.run("delegate")
    task = next(e for e in result.events if isinstance(e, ToolResultEvent) and e.name == "Task")
    assert task.is_error
    assert "did not finish: it was stopped as stuck" in task.content
    assert "Do not count its task as done" in task.content
