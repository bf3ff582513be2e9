"""Re-attaching a page to a session: the stored user messages come back exactly where
they were sent, whatever runs ended in between (an error, a resume without a message)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest

from skilldeck.agent.events import DoneEvent, Event, TextEvent, ToolCallEvent, ToolResultEvent
from skilldeck.web.runs import attach_events

SID = "s1"
pytestmark = pytest.mark.anyio


class FakeService:
    """What attach_events reads of the session service: show() and subscribe()."""

    def __init__(self, messages: list[dict[str, Any]], events: list[Event]) -> None:
        summary = SimpleNamespace(id=SID, status="completed", waiting_for="")
        self.detail = SimpleNamespace(summary=summary, messages=messages, pending=[])
        self.events = events

    def show(self, session_id: str) -> Any:
        return self.detail

    async def subscribe(self, session_id: str) -> AsyncIterator[Any]:
        for i, event in enumerate(self.events):
            yield SimpleNamespace(seq=i, event=event)


async def transcript(messages: list[dict[str, Any]], events: list[Event]) -> list[str]:
    """The page's view: one line per user message, assistant text and run start."""
    out = []
    async for ev in attach_events(FakeService(messages, events), SID):  # type: ignore[arg-type]
        if ev.type == "RUN_STARTED":
            out.append("run")
        elif ev.type == "TEXT_MESSAGE_CONTENT":
            role = "user" if ev.message_id.startswith("user-") else "assistant"
            out.append(f"{role}: {ev.delta}")
    return out


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "text": text}


def assistant(text: str, *calls: str) -> dict[str, Any]:
    return {"role": "assistant", "text": text, "tool_calls": [{"id": c} for c in calls]}


async def test_a_session_resumed_after_an_error_shows_each_message_where_it_was_sent() -> None:
    # run 1: "first" fails at once; run 2: resumed (no new message); run 3: "second"
    messages = [user("first"), assistant("recovered"), user("second"), assistant("ok")]
    events: list[Event] = [
        DoneEvent(session_id=SID, status="error", reason="model down"),
        TextEvent(text="recovered"),
        DoneEvent(session_id=SID, status="completed"),
        TextEvent(text="ok"),
        DoneEvent(session_id=SID, status="completed"),
    ]
    assert await transcript(messages, events) == [
        "run",
        "user: first",
        "run",
        "assistant: recovered",
        "run",
        "user: second",
        "assistant: ok",
    ]


async def test_a_paused_run_answered_later_gets_no_user_message() -> None:
    messages = [
        user("task"),
        assistant("", "ask-1"),
        {"role": "tool", "tool_call_id": "ask-1", "text": "Formal"},
        assistant("done"),
        user("thanks"),
        assistant("welcome"),
    ]
    events: list[Event] = [
        ToolCallEvent(id="ask-1", name="AskUserQuestion", input={}),
        DoneEvent(session_id=SID, status="paused"),
        ToolResultEvent(id="ask-1", name="AskUserQuestion", is_error=False, content="Formal"),
        TextEvent(text="done"),
        DoneEvent(session_id=SID, status="completed"),
        TextEvent(text="welcome"),
        DoneEvent(session_id=SID, status="completed"),
    ]
    assert await transcript(messages, events) == [
        "run",
        "user: task",
        "run",
        "assistant: done",
        "run",
        "user: thanks",
        "assistant: welcome",
    ]


async def test_two_messages_whose_runs_failed_open_their_own_runs() -> None:
    messages = [user("one"), user("two"), assistant("fine")]
    events: list[Event] = [
        DoneEvent(session_id=SID, status="error", reason="boom"),
        TextEvent(text="fine"),
        DoneEvent(session_id=SID, status="completed"),
    ]
    assert await transcript(messages, events) == [
        "run",
        "user: one",
        "run",
        "user: two",
        "assistant: fine",
    ]
