"""The AG-UI mapping: skilldeck events in, AG-UI 1.0 events out (pure functions)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ag_ui.core import ResumeEntry
from ag_ui.core.events import Event as AguiEvent
from pydantic import TypeAdapter

from skilldeck.agent.events import (
    AskUserEvent,
    ContextTrimmedEvent,
    DoneEvent,
    ModelCallEvent,
    PermissionRequestEvent,
    SubagentEndEvent,
    SubagentStartEvent,
    TextDeltaEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageEvent,
    WarningEvent,
)
from skilldeck.llm.messages import Usage
from skilldeck.web.agui import AguiMapper
from skilldeck.web.interrupts import (
    PendingCall,
    interrupts_for,
    pending_calls_from_dict,
    replies_from_resume,
)

AGUI = TypeAdapter(AguiEvent)


def run(events: list[Any], **kwargs: Any) -> list[dict[str, Any]]:
    """Map ``events`` and round-trip every output through the protocol's own validator."""
    mapper = AguiMapper("s1", "r1", clock=lambda: 1)
    out = [mapper.started()]
    for event in events:
        out += mapper.map(event, **kwargs)
    dumped = [json.loads(e.model_dump_json(by_alias=True)) for e in out]
    for d in dumped:
        AGUI.validate_python(d)  # every event is valid AG-UI 1.0
    return dumped


def types(dumped: list[dict[str, Any]]) -> list[str]:
    return [d["type"] for d in dumped]


def test_streamed_text_is_one_message_closed_by_the_final_text() -> None:
    out = run(
        [TextDeltaEvent(text="Hel"), TextDeltaEvent(text="lo"), TextEvent(text="Hello"), done()]
    )
    assert types(out)[:5] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
    ]
    assert "".join(d["delta"] for d in out if d["type"] == "TEXT_MESSAGE_CONTENT") == "Hello"
    ids = {d["messageId"] for d in out if d["type"].startswith("TEXT_MESSAGE")}
    assert len(ids) == 1
    assert out[1]["role"] == "assistant"


def test_text_without_deltas_is_sent_whole() -> None:
    out = run([TextEvent(text="All at once"), done()])
    assert types(out)[1:4] == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
    assert out[2]["delta"] == "All at once"


def test_a_tool_call_closes_open_text_and_maps_to_start_args_end_result() -> None:
    out = run(
        [
            TextDeltaEvent(text="Looking"),
            ToolCallEvent(id="c1", name="Read", input={"file_path": "a.txt"}),
            ToolResultEvent(id="c1", name="Read", is_error=False, content="hi"),
            done(),
        ]
    )
    kinds = types(out)
    assert kinds.index("TEXT_MESSAGE_END") < kinds.index("TOOL_CALL_START")
    start = next(d for d in out if d["type"] == "TOOL_CALL_START")
    assert start["toolCallName"] == "Read" and start["toolCallId"] == "c1"
    assert start["parentMessageId"] == out[1]["messageId"]
    args = next(d for d in out if d["type"] == "TOOL_CALL_ARGS")
    assert json.loads(args["delta"]) == {"file_path": "a.txt"}
    result = next(d for d in out if d["type"] == "TOOL_CALL_RESULT")
    assert result["content"] == "hi" and result["metadata"]["skilldeck"]["isError"] is False


def test_an_error_result_says_so() -> None:
    out = run(
        [
            ToolCallEvent(id="c1", name="Bash", input={"command": "false"}),
            ToolResultEvent(id="c1", name="Bash", is_error=True, content="exit 1"),
        ]
    )
    result = next(d for d in out if d["type"] == "TOOL_CALL_RESULT")
    assert result["metadata"]["skilldeck"]["isError"] is True


def test_todo_write_becomes_a_state_snapshot() -> None:
    todos = [{"content": "a", "status": "pending", "activeForm": "doing a"}]
    out = run(
        [
            ToolCallEvent(id="t", name="TodoWrite", input={"todos": todos}),
            ToolResultEvent(id="t", name="TodoWrite", is_error=False, content="ok"),
        ]
    )
    snap = next(d for d in out if d["type"] == "STATE_SNAPSHOT")
    assert snap["snapshot"] == {"todos": todos}


def test_subagent_events_are_tagged_and_its_end_never_ends_the_run() -> None:
    sub = {"is_sub_agent": True, "task_id": "task_1"}
    out = run(
        [
            ToolCallEvent(id="call-task", name="Task", input={"prompt": "p"}),
            SubagentStartEvent(task_id="task_1", subagent_type="explore", description="look"),
            TextEvent(text="child says", **sub),
            ToolCallEvent(id="c2", name="Read", input={}, **sub),
            DoneEvent(session_id="child", status="completed", **sub),
            SubagentEndEvent(
                task_id="task_1", subagent_type="explore", status="completed", result="r"
            ),
            ToolResultEvent(id="call-task", name="Task", is_error=False, content="r"),
        ]
    )
    started = next(d for d in out if d["type"] == "SUBAGENT_STARTED")
    assert started["subagentRunId"] == "task_1" and started["name"] == "explore"
    assert started["parentToolCallId"] == "call-task"
    child = [
        d for d in out if d.get("subagentRunId") == "task_1" and d["type"] != "SUBAGENT_STARTED"
    ]
    assert {"TEXT_MESSAGE_START", "TOOL_CALL_START", "CUSTOM", "SUBAGENT_FINISHED"} <= set(
        types(child)
    )
    assert "RUN_FINISHED" not in types(out)  # the child's done is a CUSTOM event
    assert next(d for d in out if d["type"] == "SUBAGENT_FINISHED")["result"] == "r"


def test_a_grand_child_is_its_own_sub_agent_nested_under_its_parents_task_call() -> None:
    # the sub-agent layer forwards a grand-child's events re-tagged with its parent's id
    child = {"is_sub_agent": True, "task_id": "task_1"}
    out = run(
        [
            ToolCallEvent(id="call-task", name="Task", input={"prompt": "p"}),
            SubagentStartEvent(task_id="task_1", subagent_type="general-purpose"),
            ToolCallEvent(id="inner-task", name="Task", input={"prompt": "q"}, **child),
            SubagentStartEvent(subagent_type="explore", description="dig", **child),
            ToolCallEvent(id="grand-read", name="Read", input={"file_path": "x"}, **child),
            TextEvent(text="grand-child says", **child),
            SubagentEndEvent(subagent_type="explore", status="completed", result="g", **child),
            ToolResultEvent(id="inner-task", name="Task", is_error=False, content="g", **child),
            TextEvent(text="child says", **child),
            SubagentEndEvent(task_id="task_1", subagent_type="general-purpose", status="completed"),
            ToolResultEvent(id="call-task", name="Task", is_error=False, content="c"),
        ]
    )
    started = [d for d in out if d["type"] == "SUBAGENT_STARTED"]
    assert [d["name"] for d in started] == ["general-purpose", "explore"]
    grand = started[1]
    assert grand["subagentRunId"] not in ("task_1", None)
    assert grand["parentToolCallId"] == "inner-task"
    assert "CUSTOM" not in types([d for d in out if d.get("name") == "skilldeck.subagent_start"])

    def scope_of(kind: str, key: str, value: str) -> str | None:
        return next(d for d in out if d["type"] == kind and d.get(key) == value).get(
            "subagentRunId"
        )

    assert scope_of("TOOL_CALL_START", "toolCallId", "grand-read") == grand["subagentRunId"]
    assert scope_of("TOOL_CALL_START", "toolCallId", "inner-task") == "task_1"
    assert scope_of("TOOL_CALL_RESULT", "toolCallId", "inner-task") == "task_1"
    texts = {d["delta"]: d.get("subagentRunId") for d in out if d["type"] == "TEXT_MESSAGE_CONTENT"}
    assert texts == {"grand-child says": grand["subagentRunId"], "child says": "task_1"}
    finished = [d["subagentRunId"] for d in out if d["type"] == "SUBAGENT_FINISHED"]
    assert finished == [grand["subagentRunId"], "task_1"]


def test_a_failed_subagent_is_a_subagent_error() -> None:
    out = run(
        [
            SubagentStartEvent(task_id="task_9", subagent_type="plan"),
            SubagentEndEvent(task_id="task_9", subagent_type="plan", status="error", result="boom"),
        ]
    )
    err = next(d for d in out if d["type"] == "SUBAGENT_ERROR")
    assert err["message"] == "boom" and err["code"] == "error"


def test_other_events_are_custom_skilldeck_events() -> None:
    out = run(
        [
            ModelCallEvent(turn=1, model="scripted:x"),
            UsageEvent(turn=1, usage=Usage(input_tokens=3, output_tokens=4)),
            WarningEvent(message="careful"),
            ContextTrimmedEvent(omitted=2),
            AskUserEvent(questions=[]),
        ]
    )
    names = [d["name"] for d in out if d["type"] == "CUSTOM"]
    assert names == [
        "skilldeck.model_call",
        "skilldeck.usage",
        "skilldeck.warning",
        "skilldeck.context_trimmed",
        "skilldeck.ask_user",
    ]


def test_completed_run_finishes_with_success_and_usage() -> None:
    out = run(
        [
            ModelCallEvent(turn=1, model="m"),
            UsageEvent(turn=1, usage=Usage(input_tokens=3, output_tokens=4)),
            done(text="ok"),
        ]
    )
    last = out[-1]
    assert last["type"] == "RUN_FINISHED" and last["outcome"] == {"type": "success"}
    assert last["threadId"] == "s1" and last["runId"] == "r1"
    assert last["usage"] == [{"model": "m", "inputTokens": 3, "outputTokens": 4, "totalTokens": 7}]


def test_nothing_follows_the_end_of_the_run() -> None:
    out = run([done(), TextEvent(text="late")])
    assert types(out)[-1] == "RUN_FINISHED"


@pytest.mark.parametrize(
    ("status", "expected"), [("cancelled", "cancelled"), ("max_turns", "success")]
)
def test_other_ends(status: str, expected: str) -> None:
    assert run([done(status)])[-1]["outcome"]["type"] == expected


def test_an_error_ends_with_run_error() -> None:
    last = run([DoneEvent(session_id="s1", status="error", reason="model down")])[-1]
    assert last["type"] == "RUN_ERROR" and last["message"] == "model down"


def test_a_pause_is_an_interrupt_built_from_the_unanswered_calls() -> None:
    questions = [{"question": "Which?", "options": [{"label": "A"}]}]
    out = run(
        [
            ToolCallEvent(id="w1", name="Write", input={"file_path": "x"}),
            ToolCallEvent(id="t1", name="TodoWrite", input={"todos": []}),
            ToolResultEvent(id="t1", name="TodoWrite", is_error=False, content="ok"),
            PermissionRequestEvent(tool="Write", input={"file_path": "x"}, reason="edits ask"),
            ToolCallEvent(id="q1", name="AskUserQuestion", input={"questions": questions}),
            done("paused"),
        ]
    )
    outcome = out[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    by_id = {i["id"]: i for i in outcome["interrupts"]}
    assert set(by_id) == {"w1", "q1"}
    assert by_id["w1"]["reason"] == "tool_approval" and by_id["w1"]["toolCallId"] == "w1"
    assert by_id["w1"]["metadata"]["skilldeck"]["reason"] == "edits ask"
    assert by_id["q1"]["reason"] == "question"
    assert by_id["q1"]["metadata"]["skilldeck"]["questions"] == questions


def test_the_stored_pending_calls_win_over_the_stream() -> None:
    stored = [PendingCall("w9", "permission", "Bash", {"command": "ls"}, "asks")]
    out = run([ToolCallEvent(id="other", name="Read", input={}), done("paused")], pending=stored)
    assert [i["id"] for i in out[-1]["outcome"]["interrupts"]] == ["w9"]


def test_a_replayed_pause_is_no_interrupt() -> None:
    mapper = AguiMapper("s1", "r1", interrupt_on_pause=False)
    mapper.map(ToolCallEvent(id="w1", name="Write", input={}))
    last = mapper.map(done("paused"))[-1]
    assert last.outcome is not None and last.outcome.type == "success"


def test_pending_calls_from_a_stored_pending_turn() -> None:
    stored = {
        "kind": "permission",
        "calls": [
            {"id": "a", "name": "Read", "input": {}},
            {"id": "b", "name": "Bash", "input": {"command": "ls"}},
            {"id": "c", "name": "AskUserQuestion", "input": {"questions": [{"question": "Q"}]}},
        ],
        "results": {"a": {"content": "x", "is_error": False}},
        "waiting": {
            "b": {"kind": "permission", "payload": {"tool": "Bash"}, "reason": "ask rule"},
            "c": {"kind": "ask_user", "payload": {"questions": [{"question": "Q"}]}},
        },
    }
    calls = pending_calls_from_dict(stored)
    assert [(c.call_id, c.kind) for c in calls] == [("b", "permission"), ("c", "question")]
    assert calls[0].reason == "ask rule" and calls[1].questions == [{"question": "Q"}]
    assert pending_calls_from_dict(None) == []


PENDING = [
    PendingCall("p1", "permission", "Write", {}),
    PendingCall("p2", "permission", "Bash", {}),
    PendingCall("q1", "ask_user", "AskUserQuestion", {}, questions=[{"question": "Q"}]),
]


def entry(iid: str, payload: Any, status: str = "resolved") -> ResumeEntry:
    return ResumeEntry(interrupt_id=iid, status=status, payload=payload)  # type: ignore[arg-type]


def test_resume_entries_become_per_call_replies() -> None:
    replies, missing = replies_from_resume(
        [
            entry("p1", {"approve": True, "always": True}),
            entry("p2", {"approve": False}),
            entry("q1", {"answer": "blue"}),
        ],
        PENDING,
    )
    assert [(r.call_id, r.decision, r.answer) for r in replies] == [
        ("p1", "always", None),
        ("p2", "deny", None),
        ("q1", None, "blue"),
    ]
    assert missing == []


def test_resume_entries_cancelled_deny_and_missing_ones_are_reported() -> None:
    replies, missing = replies_from_resume([entry("p1", {"approve": True}, "cancelled")], PENDING)
    assert replies[0].decision == "deny"
    assert missing == ["p2", "q1"]


def test_resume_answers_keyed_by_question_pass_through() -> None:
    replies, _ = replies_from_resume([entry("q1", {"answers": {"Q": ["a", "b"]}})], PENDING)
    assert replies[0].answer == {"Q": ["a", "b"]}


def test_resume_entry_for_an_unknown_interrupt_is_refused() -> None:
    with pytest.raises(ValueError, match="nope"):
        replies_from_resume([entry("nope", {})], PENDING)


def test_interrupts_carry_a_response_schema() -> None:
    (perm,) = interrupts_for([PENDING[0]])
    assert perm.response_schema is not None
    assert perm.response_schema["properties"]["approve"]["type"] == "boolean"


def done(status: str = "completed", text: str = "") -> DoneEvent:
    return DoneEvent(session_id="s1", status=status, text=text)
