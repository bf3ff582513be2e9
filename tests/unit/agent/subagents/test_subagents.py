from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.agent.builder import build
from skilldeck.agent.events import Event, SubagentEndEvent, SubagentStartEvent
from skilldeck.agent.store import SessionStore
from skilldeck.agent.subagents import SubagentManager, check_contract, discover_agents
from skilldeck.agent.subagents.task_tools import task_tools
from skilldeck.config import Settings, load_settings
from skilldeck.errors import PolicyError
from skilldeck.llm.messages import Model
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import ToolContext, ToolRegistry
from skilldeck.tools.builtin import builtin_tools

pytestmark = pytest.mark.anyio


def write_skill(root: Path, name: str, frontmatter: str, body: str = "Do the thing.") -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {name} does things\n{frontmatter}---\n{body}\n",
        encoding="utf-8",
    )


@pytest.fixture
def env(tmp_path: Path, skilldeck_home: Path) -> tuple[Settings, SkillRegistry, Path]:
    roots = tmp_path / "skills"
    write_skill(roots, "reader", "allowed-tools: Read Glob\n")
    write_skill(roots, "writer", "allowed-tools: Write\nconflicts: [reader]\n")
    write_skill(
        roots,
        "reporter",
        "allowed-tools: Read\noutput-contract:\n  type: object\n  required: [ok]\n",
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("alpha\n", encoding="utf-8")
    settings = load_settings(workspace=work, home=skilldeck_home)
    registry = SkillRegistry.discover(settings, roots=[roots], no_defaults=True)
    return settings, registry, work


def manager(settings: Settings, registry: SkillRegistry, model: Model) -> SubagentManager:
    return SubagentManager(
        settings=settings,
        parent_tools=ToolRegistry(builtin_tools()),
        catalog=discover_agents(settings),
        registry=registry,
        model_factory=lambda _name: model,
        store=SessionStore.open(settings),
        agent_factory=build,
    )


async def test_child_tools_follow_type_and_skills(
    env: tuple[Settings, SkillRegistry, Path],
) -> None:
    settings, registry, _ = env
    mgr = manager(settings, registry, ScriptedModel.from_lines([{"text": "done"}]))
    assert mgr.plan("explore", [])[3] == ["Glob", "Grep", "Read"]
    assert mgr.plan("explore", ["reader"])[3] == ["Glob", "Read"]
    general = mgr.plan("general-purpose", [])[3]
    assert "Task" not in general and "Bash" in general
    with pytest.raises(PolicyError) as info:
        mgr.plan("general-purpose", ["reader", "writer"])
    assert [d.code for d in info.value.diagnostics] == ["SD303"]
    with pytest.raises(PolicyError):
        mgr.plan("general-purpose", ["missing-skill"])


async def test_forged_call_refused_and_result_format(
    env: tuple[Settings, SkillRegistry, Path],
) -> None:
    settings, registry, work = env
    model = ScriptedModel.from_lines(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "touch pwned"}}]},
            {"tool_calls": [{"name": "Read", "input": {"file_path": "notes.txt"}}]},
            {"text": "notes say alpha"},
        ]
    )
    events: list[Event] = []
    outcome = await manager(settings, registry, model).spawn(
        "read the notes", skills=["reader"], subagent_type="general-purpose", emit=events.append
    )
    assert outcome.render() == "Sub-agent (general-purpose) finished:\n\nnotes say alpha"
    assert not (work / "pwned").exists()
    bash_result = model.requests[1].messages[-1]
    assert "not allowed by the active skills" in bash_result.content  # type: ignore[union-attr]
    assert isinstance(events[0], SubagentStartEvent) and isinstance(events[-1], SubagentEndEvent)
    assert any(e.is_sub_agent and e.task_id == outcome.task_id for e in events[1:-1])


async def test_turn_limit_message(env: tuple[Settings, SkillRegistry, Path]) -> None:
    settings, registry, _ = env
    lines = [
        {"text": f"step {i}", "tool_calls": [{"name": "Glob", "input": {"pattern": f"*{i}"}}]}
        for i in range(10)
    ]
    outcome = await manager(settings, registry, ScriptedModel.from_lines(lines)).spawn(
        "explore", subagent_type="explore"
    )
    assert outcome.render().startswith(
        "Sub-agent (explore) did not finish: it reached its turn limit (5)."
    )
    assert "Last output: step 4" in outcome.render()
    assert not outcome.ok  # a child that ran out of turns did not do its task


async def test_output_contract_retry_then_success(
    env: tuple[Settings, SkillRegistry, Path],
) -> None:
    settings, registry, _ = env
    model = ScriptedModel.from_lines([{"text": "not json"}, {"text": '{"ok": true}'}])
    outcome = await manager(settings, registry, model).spawn("report", skills=["reporter"])
    assert outcome.status == "completed" and outcome.text == '{"ok": true}'
    retry_prompt = model.requests[1].messages[-1]
    assert "output contract" in retry_prompt.content  # type: ignore[union-attr]


async def test_output_contract_failure_after_one_retry(
    env: tuple[Settings, SkillRegistry, Path],
) -> None:
    settings, registry, _ = env
    model = ScriptedModel.from_lines([{"text": "{}"}, {"text": '{"nope": 1}'}])
    outcome = await manager(settings, registry, model).spawn("report", skills=["reporter"])
    assert outcome.status == "contract_failed" and not outcome.ok
    assert "'ok' is a required property" in outcome.text


async def test_background_tasks_and_task_output(env: tuple[Settings, SkillRegistry, Path]) -> None:
    settings, registry, work = env
    model = ScriptedModel.from_lines(
        [{"for": "first", "text": "one"}, {"for": "second", "text": "two"}]
    )
    mgr = manager(settings, registry, model)
    task, output = task_tools(mgr)
    ctx = ToolContext(session_id="p", workspace=work, settings=settings)
    started = [
        await task.call(
            {
                "description": d,
                "prompt": f"{d} job",
                "run_in_background": True,
                "subagent_type": "explore",
            },
            ctx,
        )
        for d in ("first", "second")
    ]
    ids = [r.data["task_id"] for r in started]
    texts = [(await output.call({"task_id": i}, ctx)).content for i in ids]
    assert texts == ["Sub-agent (explore) finished:\n\none", "Sub-agent (explore) finished:\n\ntwo"]
    unknown = await output.call({"task_id": "task_nope"}, ctx)
    assert unknown.is_error


async def test_spawn_rejection_is_a_tool_error(env: tuple[Settings, SkillRegistry, Path]) -> None:
    settings, registry, work = env
    task, _ = task_tools(manager(settings, registry, ScriptedModel.from_lines([])))
    ctx = ToolContext(session_id="p", workspace=work, settings=settings)
    result = await task.call(
        {"description": "x", "prompt": "y", "skills": ["reader", "writer"]}, ctx
    )
    assert result.is_error and "SD303" in result.content


def test_check_contract() -> None:
    schema = {"type": "object", "required": ["a"]}
    assert check_contract('```json\n{"a": 1}\n```', {"s": schema}) == []
    assert check_contract("[]", {"s": schema})[0].startswith("s: (root)")
