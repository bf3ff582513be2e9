"""The agent loop: turns, concurrency, error results, limits, pause/resume, the gate."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from loop_fakes import (
    Big,
    Boom,
    Echo,
    RecordingApprover,
    Refuse,
    ScriptedGate,
    Sleep,
    call,
    make_agent,
    make_settings,
)

from skilldeck.agent.events import (
    AskUserEvent,
    DoneEvent,
    ModelCallEvent,
    PermissionRequestEvent,
    SkillHintEvent,
    TextDeltaEvent,
    ToolResultEvent,
)
from skilldeck.agent.permissions.gate import DENIED_BY_USER, Approval, GateDecision
from skilldeck.agent.recorder import Limits
from skilldeck.agent.store import SessionStore
from skilldeck.errors import SessionError
from skilldeck.llm.messages import AssistantMessage, ToolResultMessage, UserMessage
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.tools.ask import AskUserQuestionTool
from skilldeck.tools.todo import TodoWriteTool

pytestmark = pytest.mark.anyio

QUESTION = {
    "question": "Which colour?",
    "header": "Colour",
    "options": [
        {"label": "Red", "description": "warm"},
        {"label": "Blue", "description": "cool"},
    ],
}


def results(messages: list[Any]) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage)]


async def test_answer_without_tool_calls_completes_and_is_stored(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, [{"text": "Hello there."}], [])
    result = await agent.run("say hi")
    assert (result.status, result.text) == ("completed", "Hello there.")
    assert isinstance(result.events[-1], DoneEvent)
    stored = agent.store.load_messages(result.session_id)
    assert [m.role for m in stored] == ["system", "user", "assistant"]
    record = agent.store.get(result.session_id)
    assert (record.status, record.task, record.pending) == ("completed", "say hi", None)
    assert result.usage.input_tokens > 0
    assert agent.store.usage(result.session_id)[0].turn == 1


async def test_tool_calls_of_one_turn_run_concurrently_and_record_in_call_order(
    tmp_path: Path,
) -> None:
    sleep = Sleep()
    lines = [
        {
            "tool_calls": [
                call("Sleep", "a", seconds=0.3, label="slow"),
                call("Sleep", "b", seconds=0.05, label="fast"),
                call("Sleep", "c", seconds=0.2, label="mid"),
            ]
        },
        {"text": "done"},
    ]
    agent = make_agent(tmp_path, lines, [sleep])
    started = time.monotonic()
    result = await agent.run("sleep three times")
    elapsed = time.monotonic() - started
    assert result.status == "completed"
    assert elapsed < 0.5  # sequential would take 0.55 s
    assert [label for label, *_ in sleep.spans] == ["fast", "mid", "slow"]  # finished order
    stored = results(agent.store.load_messages(result.session_id))
    assert [m.tool_call_id for m in stored] == ["a", "b", "c"]
    events = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert [e.id for e in events] == ["a", "b", "c"]


async def test_failing_tools_become_error_results_and_the_run_goes_on(tmp_path: Path) -> None:
    echo = Echo()
    lines = [
        {
            "tool_calls": [
                call("Boom", "1"),
                call("Refuse", "2"),
                call("Echo", "3"),  # missing "text": invalid input
                call("Nope", "4"),
                call("Echo", "5", text="still works"),
            ]
        },
        {"text": "recovered"},
    ]
    agent = make_agent(tmp_path, lines, [Boom(), Refuse(), echo])
    result = await agent.run("break things")
    assert (result.status, result.text) == ("completed", "recovered")
    by_id = {m.tool_call_id: m for m in results(agent.store.load_messages(result.session_id))}
    assert by_id["1"].is_error and "RuntimeError: kaboom" in by_id["1"].content
    assert by_id["2"].is_error and by_id["2"].content == "file not found: nope.txt"
    assert by_id["3"].is_error and "Invalid input for Echo" in by_id["3"].content
    assert by_id["4"].is_error and "Unknown tool 'Nope'" in by_id["4"].content
    assert "Echo" in by_id["4"].content  # tells the model what exists
    assert not by_id["5"].is_error and by_id["5"].content == "echo: still works"
    # the model saw the errors on its second turn
    shown = agent.model.requests[1].messages  # type: ignore[attr-defined]
    assert sum(1 for m in results(shown) if m.is_error) == 4


async def test_max_turns_stops_the_run(tmp_path: Path) -> None:
    lines = [{"tool_calls": [call("Echo", f"c{i}", text=str(i))]} for i in range(5)]
    agent = make_agent(tmp_path, lines, [Echo()], max_turns=2)
    result = await agent.run("loop forever")
    assert result.status == "max_turns"
    assert "turn limit (2)" in (result.reason or "")
    assert sum(isinstance(e, ModelCallEvent) for e in result.events) == 2
    assert agent.store.get(result.session_id).status == "max_turns"
    # both turns' results were committed before stopping
    assert len(results(agent.store.load_messages(result.session_id))) == 2


async def test_max_turns_defaults_from_settings(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, max_turns=3)
    assert Limits.from_settings(settings).max_turns == 3
    assert Limits.from_settings(settings, max_turns=7).max_turns == 7


async def test_tool_call_cap_refuses_the_excess_and_stops_with_limit(tmp_path: Path) -> None:
    echo = Echo()
    lines = [
        {"tool_calls": [call("Echo", "a", text="1"), call("Echo", "b", text="2")]},
        {"text": "never reached"},
    ]
    limits = Limits(max_turns=10, max_tool_calls=1)
    agent = make_agent(tmp_path, lines, [echo], limits=limits)
    result = await agent.run("two calls")
    assert echo.calls == ["1"]
    assert result.status == "limit" and "max_tool_calls" in (result.reason or "")
    stored = results(agent.store.load_messages(result.session_id))
    assert stored[1].is_error and "limit of 1 tool calls" in stored[1].content


async def test_token_cap_stops_with_limit(tmp_path: Path) -> None:
    lines = [
        {
            "tool_calls": [call("Echo", "a", text="1")],
            "usage": {"input_tokens": 90, "output_tokens": 20},
        },
        {"text": "never"},
    ]
    agent = make_agent(tmp_path, lines, [Echo()], limits=Limits(max_turns=5, max_tokens=100))
    result = await agent.run("spend")
    assert result.status == "limit" and "max_tokens: used 110 of 100" in (result.reason or "")


async def test_model_error_ends_the_run_with_status_error(tmp_path: Path) -> None:
    lines = [{"tool_calls": [call("Echo", "a", text="x")]}]  # no second line
    agent = make_agent(tmp_path, lines, [Echo()])
    result = await agent.run("task")
    assert result.status == "error"
    assert "ran out of lines" in (result.reason or "")
    record = agent.store.get(result.session_id)
    assert record.status == "error"
    # the completed first turn is kept
    assert len(results(agent.store.load_messages(result.session_id))) == 1


async def test_a_bug_in_skilldeck_raises_and_marks_the_session(tmp_path: Path) -> None:
    class BrokenGate:
        async def check(self, call: Any, ctx: Any) -> GateDecision:
            raise KeyError("bug")

    lines = [{"tool_calls": [call("Echo", "a", text="x")]}, {"text": "done"}]
    agent = make_agent(tmp_path, lines, [Echo()], gate=BrokenGate())
    with pytest.raises(KeyError):
        await agent.run("task")
    (record,) = agent.store.list()
    assert record.status == "error"
    done = agent.store.events(record.id)[-1]
    assert isinstance(done, DoneEvent) and "KeyError" in (done.reason or "")


async def test_ask_user_pauses_and_resumes_from_a_fresh_agent(tmp_path: Path) -> None:
    lines = [
        {
            "text": "I need to know.",
            "tool_calls": [call("AskUserQuestion", "q1", questions=[QUESTION])],
        },
        {"text": "Blue it is."},
    ]
    agent = make_agent(tmp_path, lines, [AskUserQuestionTool()])
    paused = await agent.run("paint it")
    assert paused.status == "paused"
    assert any(
        isinstance(e, AskUserEvent) and e.questions[0]["question"] == "Which colour?"
        for e in paused.events
    )
    assert paused.pending is not None and paused.pending["kind"] == "ask_user"
    assert "q1" in paused.pending["waiting"]
    agent.store.close()

    # a new store handle and a new agent: nothing shared in memory
    other = make_agent(tmp_path, lines, [AskUserQuestionTool()])
    with pytest.raises(SessionError, match="--answer"):
        await other.resume(paused.session_id)
    done = await other.resume(paused.session_id, answer="Blue")
    assert (done.status, done.text) == ("completed", "Blue it is.")
    stored = other.store.load_messages(paused.session_id)
    answer = results(stored)[0]
    assert answer.tool_call_id == "q1" and not answer.is_error
    assert '"Which colour?"="Blue"' in answer.content
    assert other.store.get(paused.session_id).pending is None
    # the model was shown the answer
    seen = other.model.requests[-1].messages  # type: ignore[attr-defined]
    assert any(isinstance(m, ToolResultMessage) and "Blue" in m.content for m in seen)


async def test_pause_keeps_other_results_and_records_all_in_call_order(tmp_path: Path) -> None:
    lines = [
        {
            "tool_calls": [
                call("Echo", "e1", text="before"),
                call("AskUserQuestion", "q", questions=[QUESTION]),
                call("Echo", "e2", text="after"),
            ]
        },
        {"text": "ok"},
    ]
    echo = Echo()
    agent = make_agent(tmp_path, lines, [echo, AskUserQuestionTool()])
    paused = await agent.run("mixed")
    assert paused.status == "paused" and echo.calls == ["before", "after"]
    # while paused, no partial results are in the message log
    assert results(agent.store.load_messages(paused.session_id)) == []
    done = await agent.resume(paused.session_id, answer="Red")
    assert done.status == "completed"
    stored = results(agent.store.load_messages(paused.session_id))
    assert [m.tool_call_id for m in stored] == ["e1", "q", "e2"]
    assert echo.calls == ["before", "after"]  # not re-run on resume


async def test_resume_errors_are_clear(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, [{"text": "done"}], [])
    result = await agent.run("task")
    with pytest.raises(SessionError, match="completed"):
        await agent.resume(result.session_id)
    with pytest.raises(SessionError, match="No session"):
        await agent.resume("doesnotexist")


async def test_gate_deny_returns_the_message_and_never_runs_the_tool(tmp_path: Path) -> None:
    echo = Echo()
    gate = ScriptedGate({"Echo": GateDecision.deny("Echo is not allowed here.")})
    lines = [{"tool_calls": [call("Echo", "a", text="x")]}, {"text": "fine"}]
    agent = make_agent(tmp_path, lines, [echo], gate=gate)
    result = await agent.run("try")
    assert result.status == "completed" and echo.calls == []
    (denied,) = results(agent.store.load_messages(result.session_id))
    assert denied.is_error and denied.content == "Echo is not allowed here."


async def test_gate_ask_without_approver_pauses_then_approve_runs_it(tmp_path: Path) -> None:
    echo = Echo()
    gate = ScriptedGate({"Echo": GateDecision.ask({"preview": "x"}, reason="needs ok")})
    lines = [{"tool_calls": [call("Echo", "a", text="x")]}, {"text": "done"}]
    agent = make_agent(tmp_path, lines, [echo], gate=gate)
    paused = await agent.run("try")
    assert paused.status == "paused" and echo.calls == []
    assert paused.pending is not None and paused.pending["kind"] == "permission"
    assert any(isinstance(e, PermissionRequestEvent) and e.tool == "Echo" for e in paused.events)
    with pytest.raises(SessionError, match="--approve"):
        await agent.resume(paused.session_id, answer="yes")
    done = await agent.resume(paused.session_id, approve=True)
    assert done.status == "completed" and echo.calls == ["x"]
    (result,) = results(agent.store.load_messages(paused.session_id))
    assert result.content == "echo: x"


async def test_gate_ask_then_deny_gives_the_model_a_denial(tmp_path: Path) -> None:
    echo = Echo()
    gate = ScriptedGate({"Echo": GateDecision.ask()})
    lines = [{"tool_calls": [call("Echo", "a", text="x")]}, {"text": "ok, I will not"}]
    agent = make_agent(tmp_path, lines, [echo], gate=gate)
    paused = await agent.run("try")
    done = await agent.resume(paused.session_id, approve=False)
    assert done.status == "completed" and echo.calls == []
    (result,) = results(agent.store.load_messages(paused.session_id))
    assert result.is_error and result.content.startswith(DENIED_BY_USER)


@pytest.mark.parametrize(
    ("answer", "runs", "remembered"),
    [(Approval.ALLOW, True, False), (Approval.ALWAYS, True, True), (False, False, False)],
)
async def test_gate_ask_goes_to_the_interactive_approver(
    tmp_path: Path, answer: Any, runs: bool, remembered: bool
) -> None:
    echo = Echo()
    gate = ScriptedGate({"Echo": GateDecision.ask({"preview": "echo x"}, reason="r")})
    approver = RecordingApprover(answer)
    lines = [{"tool_calls": [call("Echo", "a", text="x")]}, {"text": "done"}]
    agent = make_agent(tmp_path, lines, [echo], gate=gate, approver=approver)
    result = await agent.run("try")
    assert result.status == "completed"
    (request,) = approver.requests
    assert request.call.name == "Echo" and request.payload["preview"] == "echo x"
    assert request.reason == "r" and request.session_id == result.session_id
    assert echo.calls == (["x"] if runs else [])
    assert gate.remembered == (["Echo"] if remembered else [])


async def test_async_approver_is_awaited(tmp_path: Path) -> None:
    async def approve(request: Any) -> Approval:
        return Approval.ALLOW

    echo = Echo()
    gate = ScriptedGate({"Echo": GateDecision.ask()})
    lines = [{"tool_calls": [call("Echo", "a", text="x")]}, {"text": "done"}]
    agent = make_agent(tmp_path, lines, [echo], gate=gate, approver=approve)
    assert (await agent.run("try")).status == "completed" and echo.calls == ["x"]


async def test_long_tool_output_is_truncated_for_the_model_and_stored_in_full(
    tmp_path: Path,
) -> None:
    settings = make_settings(tmp_path, tool_output_limit=1000)
    lines = [{"tool_calls": [call("Big", "b", size=5000)]}, {"text": "done"}]
    agent = make_agent(tmp_path, lines, [Big()], settings=settings)
    result = await agent.run("big")
    (stored,) = [
        m
        for m in agent.store.messages(result.session_id)
        if isinstance(m.message, ToolResultMessage)
    ]
    assert isinstance(stored.message, ToolResultMessage)
    assert "5000 characters in total" in stored.message.content
    assert len(stored.message.content) < 1500
    assert stored.full_content is not None and len(stored.full_content) == 5000
    seen = agent.model.requests[1].messages  # type: ignore[attr-defined]
    assert "5000 characters in total" in results(seen)[0].content


async def test_continuing_a_session_keeps_history_and_tool_state(tmp_path: Path) -> None:
    todo = {"content": "Write it", "status": "in_progress", "activeForm": "Writing it"}
    lines = [
        {"tool_calls": [call("TodoWrite", "t", todos=[todo])]},
        {"text": "first answer"},
        {"text": "second answer"},
    ]
    agent = make_agent(tmp_path, lines, [TodoWriteTool()])
    first = await agent.run("first")
    assert agent.store.todos(first.session_id) == [todo]
    second = await agent.run("second", session_id=first.session_id)
    assert (second.session_id, second.text) == (first.session_id, "second answer")
    users = [
        m.content for m in agent.store.load_messages(first.session_id) if isinstance(m, UserMessage)
    ]
    assert users == ["first", "second"]
    assert agent.store.get(first.session_id).state["todos"] == [todo]


async def test_hints_are_inserted_before_the_user_message(tmp_path: Path) -> None:
    def hinter(message: str) -> tuple[str, list[str]] | None:
        return ("<skill-hint>try pdf</skill-hint>", ["pdf"]) if "pdf" in message else None

    agent = make_agent(tmp_path, [{"text": "ok"}], [], hinter=hinter)
    result = await agent.run("fill the pdf form")
    stored = agent.store.load_messages(result.session_id)
    assert isinstance(stored[1], UserMessage) and stored[1].meta == "skill-hint"
    assert isinstance(stored[2], UserMessage) and stored[2].content == "fill the pdf form"
    assert any(isinstance(e, SkillHintEvent) and e.skills == ["pdf"] for e in result.events)
    # the hint event is stored too
    assert any(isinstance(e, SkillHintEvent) for e in agent.store.events(result.session_id))


async def test_streaming_emits_text_deltas_live_but_does_not_store_them(tmp_path: Path) -> None:
    seen: list[Any] = []
    agent = make_agent(
        tmp_path, [{"text": "one two three"}], [], stream_text=True, on_event=seen.append
    )
    result = await agent.run("count")
    deltas = [e.text for e in result.events if isinstance(e, TextDeltaEvent)]
    assert "".join(deltas) == "one two three"
    assert [e for e in seen if isinstance(e, TextDeltaEvent)]  # the callback saw them live
    stored_types = {e.type for e in agent.store.events(result.session_id)}
    assert "text_delta" not in stored_types and "text" in stored_types


async def test_events_are_stored_in_order_with_the_turn(tmp_path: Path) -> None:
    lines = [{"text": "calling", "tool_calls": [call("Echo", "a", text="x")]}, {"text": "done"}]
    agent = make_agent(tmp_path, lines, [Echo()])
    result = await agent.run("task")
    stored = [e.type for e in agent.store.events(result.session_id)]
    assert stored == [e.type for e in result.events]
    assert stored[:4] == ["model_call", "usage", "text", "tool_call"]
    assert stored[-1] == "done"


async def test_the_model_sees_the_system_prompt_and_tools(tmp_path: Path) -> None:
    agent = make_agent(
        tmp_path, [{"text": "ok"}], [Echo()], system_prompt=lambda task: f"SYS for {task}"
    )
    await agent.run("the task")
    request = agent.model.requests[0]  # type: ignore[attr-defined]
    assert request.messages[0].content == "SYS for the task"
    assert request.tool_names == ["Echo"]


async def test_run_sync_runs_outside_an_event_loop(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, [{"text": "sync ok"}], [])
    result = await _in_thread(lambda: agent.run_sync("task"))
    assert result.text == "sync ok"


async def _in_thread(fn: Any) -> Any:
    import anyio.to_thread

    return await anyio.to_thread.run_sync(fn)


async def test_many_sessions_at_once_in_one_process(tmp_path: Path) -> None:
    import anyio

    lines = [{"tool_calls": [call("Sleep", "s", seconds=0.01, label="x")]}, {"text": "done"}]
    outcomes: dict[int, str] = {}

    async def one(i: int) -> None:
        store = SessionStore(tmp_path / "shared.db")
        agent = make_agent(tmp_path, lines, [Sleep()], store=store)
        result = await agent.run(f"task {i}")
        outcomes[i] = result.session_id
        store.close()

    async with anyio.create_task_group() as tg:
        for i in range(20):
            tg.start_soon(one, i)
    with SessionStore(tmp_path / "shared.db") as store:
        assert len(store.list(limit=100)) == 20
        for i, sid in outcomes.items():
            msgs = store.load_messages(sid)
            assert msgs[1].content == f"task {i}"  # type: ignore[union-attr]
            assert [m.role for m in msgs] == ["system", "user", "assistant", "tool", "assistant"]


async def test_scripted_model_continues_at_the_right_line_after_resume(tmp_path: Path) -> None:
    lines = [
        {"tool_calls": [call("AskUserQuestion", "q", questions=[QUESTION])]},
        {"tool_calls": [call("Echo", "e", text="after answer")]},
        {"text": "finished"},
    ]
    agent = make_agent(tmp_path, lines, [Echo(), AskUserQuestionTool()])
    paused = await agent.run("task")
    other = make_agent(tmp_path, lines, [Echo(), AskUserQuestionTool()])
    done = await other.resume(paused.session_id, answer="Red")
    assert done.text == "finished"
    assistants = [
        m for m in other.store.load_messages(paused.session_id) if isinstance(m, AssistantMessage)
    ]
    assert len(assistants) == 3


async def test_model_is_a_protocol_not_a_class(tmp_path: Path) -> None:
    """Any object with name/respond/stream drives the loop (no inheritance needed)."""
    script = ScriptedModel.from_lines([{"text": "hi"}])

    class Wrapper:
        name = "fake:wrapper"

        async def respond(self, messages: Any, tools: Any) -> Any:
            return await script.respond(messages, tools)

        def stream(self, messages: Any, tools: Any) -> Any:
            return script.stream(messages, tools)

    agent = make_agent(tmp_path, [], [], model=Wrapper())
    result = await agent.run("x")
    assert result.text == "hi" and agent.store.get(result.session_id).model == "fake:wrapper"


async def test_the_gate_sees_calls_to_tools_outside_the_registry_first(tmp_path: Path) -> None:
    """A policy gate can explain a forged call better than "unknown tool"."""
    gate = ScriptedGate({"Bash": GateDecision.deny("tool Bash is not allowed by the skills")})
    lines = [{"tool_calls": [call("Bash", "b", command="rm -rf /")]}, {"text": "ok"}]
    agent = make_agent(tmp_path, lines, [Echo()], gate=gate)
    result = await agent.run("forge")
    (denied,) = results(agent.store.load_messages(result.session_id))
    assert denied.content == "tool Bash is not allowed by the skills"
    assert gate.checked == ["Bash"]


async def test_tool_call_events_arrive_before_the_tool_runs(tmp_path: Path) -> None:
    echo = Echo()
    lines = [{"text": "working", "tool_calls": [call("Echo", "a", text="x")]}, {"text": "ok"}]
    agent = make_agent(tmp_path, lines, [echo])
    seen_before: list[list[str]] = []
    async for event in agent.run_stream("task"):
        if event.type == "tool_call":
            seen_before.append(list(echo.calls))
    assert seen_before == [[]]
    assert echo.calls == ["x"]
