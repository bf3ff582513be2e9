"""The loop guard, replaying the real transcripts of issue 17 with the scripted model.

Each script is the calls a real small model (Qwen2.5-Coder 1.5B / 0.5B behind a
llama.cpp server) made, unchanged: every run used to end at ``max_turns`` (or
``completed`` with nothing done). Now each finishes, or stops as ``stuck``, within a
few turns — the turn limit here is 40, so reaching it would show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skilldeck.agent.builder import build_agent
from skilldeck.agent.events import LoopDetectedEvent, ToolCallRecoveredEvent, ToolResultEvent
from skilldeck.agent.loop import Agent
from skilldeck.agent.loopguard import LoopGuard
from skilldeck.agent.recorder import RunResult
from skilldeck.agent.store import SessionStore
from skilldeck.config import Settings, load_settings
from skilldeck.llm.messages import ToolCall
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.tools.base import ToolResult

pytestmark = pytest.mark.anyio

MAX_TURNS = 40
NOTES = "Turn the changes since v1.2 into release notes."


def call(name: str, **input: Any) -> dict[str, Any]:
    return {"name": name, "input": input}


def turns(*lines: dict[str, Any]) -> list[dict[str, Any]]:
    return list(lines)


def repeat(n: int, line: dict[str, Any]) -> list[dict[str, Any]]:
    return [line] * n


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    for name, allowed in (("release-notes", ""), ("summarize", "allowed-tools: Read Glob\n")):
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: The {name} skill.\n{allowed}---\n"
            f"# {name}\nFollow the {name} steps.\n",
            encoding="utf-8",
        )
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def agent(
    work: Path, lines: list[dict[str, Any]], *, name: str = "scripted:replay", **conf: Any
) -> Agent:
    settings = load_settings(workspace=work, **conf)
    return build_agent(
        settings,
        model=ScriptedModel.from_lines(lines, name=name),
        cwd=work,
        max_turns=MAX_TURNS,
        roots=[work.parent / "skills"],
        permission_mode="acceptEdits",
        session_store=SessionStore(work.parent / "sessions.db"),
    )


def results(result: RunResult) -> list[ToolResultEvent]:
    return [e for e in result.events if isinstance(e, ToolResultEvent) and not e.is_sub_agent]


def loops(result: RunResult) -> list[LoopDetectedEvent]:
    return [e for e in result.events if isinstance(e, LoopDetectedEvent)]


def model_turns(result: RunResult) -> int:
    return sum(1 for e in result.events if e.type == "model_call" and not e.is_sub_agent)


def assert_stuck_early(result: RunResult, tool: str) -> None:
    assert result.status == "stuck", (result.status, result.reason)
    assert model_turns(result) <= 6
    assert f"repeated {tool}" in (result.reason or "")
    assert loops(result)[-1].stop and loops(result)[-1].tool == tool


async def test_23_taskoutput_calls_after_a_write_stop_as_stuck(work: Path) -> None:
    lines = turns(
        {"text": "Writing.", "tool_calls": [call("Write", file_path="notes.md", content="x")]},
        *repeat(23, {"tool_calls": [call("TaskOutput", task_id="write_task")]}),
        {"text": "Done."},
    )
    result = await agent(work, lines).run("Write notes.md")
    assert_stuck_early(result, "TaskOutput")
    first = results(result)[1].content
    assert "No background task was started" in first
    assert "return their result directly" in first
    assert "A foreground Task returns its result directly" in results(result)[2].content
    # the session is stored stuck, and resumable
    store = SessionStore(work.parent / "sessions.db")
    assert store.get(result.session_id).status == "stuck"


async def test_taskoutput_for_a_finished_foreground_subagent(work: Path) -> None:
    child = "Count the lines of notes.md"
    lines = turns(
        {"for": child, "text": "notes.md has 3 lines."},
        {"tool_calls": [call("Task", description="count", prompt=child)]},
        *repeat(6, {"tool_calls": [call("TaskOutput", task_id="sub-agent-1234")]}),
        {"text": "It has 3 lines."},
    )
    result = await agent(work, lines).run("How long is notes.md?")
    assert_stuck_early(result, "TaskOutput")
    task = results(result)[0]
    assert not task.is_error and "notes.md has 3 lines." in task.content
    assert "foreground Task" in results(result)[1].content
    assert "Foreground tasks, already returned by Task: task_1 (completed)." in (
        results(result)[1].content
    )


async def test_taskoutput_on_a_foreground_task_id_says_it_already_returned(work: Path) -> None:
    child = "Count the lines of notes.md"
    lines = turns(
        {"for": child, "text": "notes.md has 3 lines."},
        {"tool_calls": [call("Task", description="count", prompt=child)]},
        {"tool_calls": [call("TaskOutput", task_id="task_1")]},
        {"text": "It has 3 lines."},
    )
    result = await agent(work, lines).run("How long is notes.md?")
    assert result.status == "completed"
    assert "task_1 ran in the foreground and ended completed" in results(result)[1].content


async def test_the_same_skill_loaded_7_times_is_loaded_once(work: Path) -> None:
    lines = turns(
        *repeat(7, {"tool_calls": [call("Skill", skill="release-notes")]}),
        {"text": "Here are the notes."},
    )
    result = await agent(work, lines).run(NOTES)
    assert_stuck_early(result, "Skill")
    contents = [r.content for r in results(result)]
    assert contents[0].startswith("Loaded skill release-notes")
    assert sum("Follow the release-notes steps." in c for c in contents) == 1
    assert contents[1].startswith("Skill release-notes is already loaded: it was loaded at turn 1")


async def test_a_spawn_with_a_misspelt_skill_retried_8_times(work: Path) -> None:
    spawn = call("Task", description="notes", prompt="Summarise the log", skills=["summary"])
    lines = turns(*repeat(8, {"tool_calls": [spawn]}), {"text": "Done."})
    result = await agent(work, lines).run(NOTES)
    assert_stuck_early(result, "Task")
    first = results(result)[0].content
    assert "the closest skill names: summarize" in first
    assert 'Call Task again with skills=["summarize"]' in first


async def test_a_skill_name_as_subagent_type_retried_8_times(work: Path) -> None:
    spawn = call("Task", description="notes", prompt="Summarise the log", subagent_type="summarize")
    lines = turns(*repeat(8, {"tool_calls": [spawn]}), {"text": "Done."})
    result = await agent(work, lines).run(NOTES)
    assert_stuck_early(result, "Task")
    first = results(result)[0].content
    assert "`summarize` is a skill, not an agent type" in first
    assert 'subagent_type="general-purpose" with skills=["summarize"]' in first


async def test_the_same_write_4_times_is_flagged_and_the_run_finishes(work: Path) -> None:
    write = call("Write", file_path="hello.py", content="print('hi')\n")
    lines = turns(*repeat(4, {"tool_calls": [write]}), {"text": "hello.py is written."})
    result = await agent(work, lines).run("Write hello.py")
    assert result.status == "completed" and model_turns(result) == 5
    assert [e.count for e in loops(result)] == [2, 3]  # "updated" twice, then thrice
    assert "[skilldeck: this exact call — Write" in results(result)[2].content


async def test_a_0_5b_model_writing_its_tool_call_as_text(work: Path) -> None:
    written = '{ "name": "write", "arguments": {"file_path": "hi.txt", "content": "hi"} }'
    lines = turns({"text": written}, {"text": "Done."})
    result = await agent(work, lines, name="openai-compat:qwen2.5-0.5b-instruct").run("hi.txt")
    assert result.status == "completed" and result.text == "Done."
    assert (work / "hi.txt").read_text(encoding="utf-8") == "hi"
    recovered = [e for e in result.events if isinstance(e, ToolCallRecoveredEvent)]
    assert [(e.name, e.text) for e in recovered] == [("Write", written)]


async def test_text_calls_are_recovered_only_where_configured(work: Path) -> None:
    written = '{"name": "Write", "arguments": {"file_path": "hi.txt", "content": "hi"}}'
    lines = turns({"text": written}, {"text": "Done."})
    off = await agent(work, lines, name="openai-compat:q", agent={"text_tool_calls": "off"}).run(
        "hi"
    )
    assert off.status == "completed" and off.text == written  # the old behaviour
    scripted = await agent(work, lines).run("hi")  # auto: not for this provider
    assert scripted.text == written and not (work / "hi.txt").exists()
    on = await agent(work, lines, agent={"text_tool_calls": "on"}).run("hi")
    assert on.text == "Done." and (work / "hi.txt").exists()


async def test_thresholds_come_from_the_settings(work: Path) -> None:
    lines = turns(*repeat(9, {"tool_calls": [call("Glob", pattern="*.md")]}), {"text": "x"})
    conf = {"agent": {"repeat_warn_after": 3, "repeat_stop_after": 6}}
    result = await agent(work, lines, **conf).run("find")
    assert result.status == "stuck" and model_turns(result) == 6
    assert [e.count for e in loops(result)] == [3, 4, 5, 6]


async def test_a_stuck_session_resumes(work: Path) -> None:
    lines = turns(
        *repeat(4, {"tool_calls": [call("Glob", pattern="*.md")]}),
        {"text": "No markdown files."},
    )
    first = agent(work, lines)
    stuck = await first.run("find")
    assert stuck.status == "stuck"
    again = await agent(work, lines).resume(stuck.session_id)
    assert (again.status, again.text) == ("completed", "No markdown files.")


def test_polls_and_different_results_are_no_loop() -> None:
    guard = LoopGuard(warn_after=2, stop_after=3)
    call_ = ToolCall(id="1", name="TaskOutput", input={"task_id": "task_1", "block": False})
    running = ToolResult("Task task_1 is still running (x).", data={"poll": True})
    assert all(guard.observe(call_, running, turn=i) is None for i in range(5))
    read = ToolCall(id="2", name="Read", input={"file_path": "a"})
    assert guard.observe(read, ToolResult("one"), 1) is None
    assert guard.observe(read, ToolResult("two"), 2) is None  # the file changed
    repeat_ = guard.observe(read, ToolResult("two"), 3)
    assert repeat_ is not None and (repeat_.count, repeat_.first_turn, repeat_.stop) == (
        2,
        2,
        False,
    )


def test_settings_defaults() -> None:
    a = Settings().agent
    assert (a.repeat_warn_after, a.repeat_stop_after, a.text_tool_calls) == (2, 4, "auto")


def test_identical_calls_in_one_turn_count_once() -> None:
    guard = LoopGuard(warn_after=2, stop_after=3)
    glob = ToolCall(id="1", name="Glob", input={"pattern": "*"})
    assert guard.observe(glob, ToolResult("a"), 1) is None
    assert guard.observe(glob, ToolResult("a"), 1) is None  # same turn: not seen yet
    again = guard.observe(glob, ToolResult("a"), 2)
    assert again is not None and again.count == 2


async def test_taskoutput_is_offered_only_while_a_background_task_exists(work: Path) -> None:
    """``TaskOutput`` is held all along (a forged call is still answered) but offered
    only from the turn after a background task was started."""
    child = "Count the lines of notes.md"
    spawn = call("Task", description="count", prompt=child, run_in_background=True)
    lines = turns(
        {"for": child, "text": "notes.md has 3 lines."},
        {"tool_calls": [call("Glob", pattern="*")]},
        {"tool_calls": [spawn]},
        {"tool_calls": [call("TaskOutput", task_id="task_1")]},
        {"text": "It has 3 lines."},
    )
    built = agent(work, lines)
    model = built.model
    assert isinstance(model, ScriptedModel)
    assert "TaskOutput" in {spec.name for spec in built.specs}
    result = await built.run("How long is notes.md?")
    assert result.status == "completed"
    shown = [r.tool_names for r in model.requests if "Count the lines" not in str(r.messages[1])]
    assert ["TaskOutput" in names for names in shown] == [False, False, True, True]
    assert "Task" in shown[0] and "notes.md has 3 lines." in results(result)[2].content


async def test_a_forged_taskoutput_call_is_still_answered_with_the_ids(work: Path) -> None:
    lines = turns(
        {"tool_calls": [call("TaskOutput", task_id="write_task")]},
        {"text": "done"},
    )
    built = agent(work, lines)
    result = await built.run("write it")
    (answer,) = results(result)
    assert answer.is_error and "write_task" in answer.content
    assert "TaskOutput" not in built.model.requests[0].tool_names  # type: ignore[attr-defined]
