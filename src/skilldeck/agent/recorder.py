"""The state of one run and how it is recorded: events out, one transaction per turn.

:class:`Recorder` is the loop's only writer. Every event goes through
:meth:`Recorder.emit` (to the caller's stream, the live ``on_event`` callback, and
the list stored with the turn); :meth:`Recorder.commit` writes the turn's messages,
events, usage, tool state and todos to the session store in one transaction, then
extends the in-memory history — so memory never runs ahead of the store.

A model's retries happen inside one model call, far below the loop; the builder's
retry hook hands each one to :func:`tell_retry`, which gives it to the run whose call
it is (:func:`retries_to`, set by the loop around each step of the call) — so a
``model_retry`` event is stored and streamed like any other.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skilldeck.agent.context import ContextManager, History
from skilldeck.agent.events import (
    DoneEvent,
    Event,
    ModelRetryEvent,
    TextDeltaEvent,
    ToolResultEvent,
    UsageEvent,
)
from skilldeck.agent.loopguard import LoopGuard, Repeat
from skilldeck.agent.pending import Pending
from skilldeck.agent.store import SessionStore, TurnWrite, valid_text
from skilldeck.errors import SessionError
from skilldeck.llm.messages import AssistantMessage, Message, ToolCall, ToolResultMessage, Usage
from skilldeck.skills.execution import redact
from skilldeck.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from skilldeck.config import Settings

#: a message and, when its content was truncated for the model, the full text
StoredRow = tuple[Message, str | None]


@dataclass(frozen=True)
class Limits:
    """Per-run caps; each produces a ``done`` event with a clear reason."""

    max_turns: int = 25
    max_tool_calls: int | None = None
    max_tokens: int | None = None
    max_wall_seconds: float | None = None

    @classmethod
    def from_settings(cls, settings: Settings, *, max_turns: int | None = None) -> Limits:
        a = settings.agent
        turns = a.max_turns if max_turns is None else max_turns
        return cls(turns, a.max_tool_calls, a.max_tokens, a.max_wall_seconds)

    def reached(self, run: RunState) -> tuple[str, str] | None:
        """``(status, reason)`` when a cap is reached, checked before each model call."""
        if run.turn >= self.max_turns:
            return "max_turns", f"reached the turn limit ({self.max_turns})"
        if self.max_tool_calls is not None and run.tool_calls >= self.max_tool_calls:
            return "limit", f"max_tool_calls: made {run.tool_calls} of {self.max_tool_calls}"
        used = run.usage.input_tokens + run.usage.output_tokens
        if self.max_tokens is not None and used >= self.max_tokens:
            return "limit", f"max_tokens: used {used} of {self.max_tokens}"
        elapsed = time.monotonic() - run.started
        if self.max_wall_seconds is not None and elapsed >= self.max_wall_seconds:
            return "limit", f"max_wall_seconds: ran {elapsed:.1f}s of {self.max_wall_seconds}s"
        return None


@dataclass
class RunResult:
    session_id: str
    #: completed | paused | max_turns | stuck | limit | error | cancelled
    status: str
    text: str = ""
    reason: str | None = None
    events: list[Event] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    pending: dict[str, Any] | None = None


@dataclass
class RunState:
    """The mutable state of one ``run``/``resume`` invocation."""

    session_id: str
    history: History
    ctx: ToolContext
    started: float = field(default_factory=time.monotonic)
    turn: int = 0  # model calls made by this invocation
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    turn_usage: Usage | None = None
    reply: AssistantMessage | None = None
    pending: Pending | None = None
    status: str | None = None
    omitted: int = 0
    outbox: list[Event] = field(default_factory=list)
    unsaved: list[Event] = field(default_factory=list)
    #: repeated calls of this invocation; the repeat that ends it ``stuck``, if any
    guard: LoopGuard = field(default_factory=LoopGuard)
    stuck: Repeat | None = None

    def drain(self) -> list[Event]:
        out, self.outbox = self.outbox, []
        return out

    @property
    def session_turn(self) -> int:
        """Assistant turns already committed in the whole session."""
        return self.history.assistant_turns

    def last_text(self) -> str:
        """The last text the model wrote in the session ('' when none)."""
        for message in reversed(self.history.messages):
            if isinstance(message, AssistantMessage) and message.text:
                return message.text
        return ""


@dataclass
class Recorder:
    store: SessionStore
    context: ContextManager
    model_name: str
    on_event: Callable[[Event], None] | None = None

    def emit(self, run: RunState, event: Event) -> None:
        run.outbox.append(event)
        run.unsaved.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def emit_result(self, run: RunState, call: ToolCall, result: ToolResult) -> None:
        shown, _ = self.context.truncate(valid_text(result.content))
        event = ToolResultEvent(id=call.id, name=call.name, is_error=result.is_error, content=shown)
        self.emit(run, event)

    def result_row(self, call: ToolCall, result: ToolResult) -> StoredRow:
        """The message the model sees (truncated) and the full output when it was cut."""
        # a file name that is not UTF-8 (Glob, ls) must not stop the turn from being
        # stored, shown as JSON or sent to the model: its bytes become U+FFFD
        content = valid_text(result.content)
        shown, truncated = self.context.truncate(content)
        message = ToolResultMessage(
            tool_call_id=call.id, name=call.name, content=shown, is_error=result.is_error
        )
        return message, (content if truncated else None)

    def commit(
        self,
        run: RunState,
        rows: Sequence[StoredRow],
        *,
        status: str | None = None,
        clear_pending: bool = False,
    ) -> None:
        """One transaction: the turn's messages, events, usage, tool state, todos."""
        usage, run.turn_usage = run.turn_usage, None
        events, run.unsaved = run.unsaved, []
        paused = status == "paused" and run.pending is not None
        self.store.commit(
            run.session_id,
            TurnWrite(
                messages=rows,
                events=[e for e in events if not isinstance(e, TextDeltaEvent)],
                usage=(run.session_turn + 1, self.model_name, usage) if usage else None,
                status=status,
                set_pending=paused or clear_pending or status is not None,
                pending=run.pending.to_dict() if paused and run.pending else None,
                state=jsonable_state(run.ctx.state),
                todos=todos_of(run.ctx.state),
            ),
        )
        run.history.extend(m for m, _ in rows)

    def finish(
        self,
        run: RunState,
        status: str,
        *,
        reason: str | None = None,
        text: str = "",
        rows: Sequence[StoredRow] = (),
    ) -> None:
        """End the run: a ``done`` event, committed with the last turn and the status."""
        run.status = status
        done = DoneEvent(session_id=run.session_id, status=status, reason=reason, text=text)
        self.emit(run, done)
        self.commit(run, rows, status=status)

    def abandon(self, run: RunState, error: BaseException) -> None:
        """Record why the run stopped when an exception escapes (best effort)."""
        if run.status is not None:
            return
        cancelled = not isinstance(error, Exception)
        status = "cancelled" if cancelled else "error"
        reason = type(error).__name__ if cancelled else redact(f"{type(error).__name__}: {error}")
        if isinstance(error, GeneratorExit):
            reason = "the caller closed the event stream before the run ended"
        run.status = status
        run.unsaved.append(DoneEvent(session_id=run.session_id, status=status, reason=reason))
        run.turn_usage = None
        with contextlib.suppress(SessionError):
            self.commit(run, [], status=status)


#: where a retry of the model call under way goes: a context variable, not an attribute,
#: so concurrent runs of one agent (the web service) and a sub-agent's own calls (run
#: inside its parent's tool call) each reach their own run
_RETRY_SINK: ContextVar[Callable[[Event], None] | None] = ContextVar(
    "skilldeck_retry_sink", default=None
)


@contextlib.contextmanager
def retries_to(sink: Callable[[Event], None]) -> Iterator[None]:
    """Retries told while this block runs go to ``sink`` (the loop wraps each awaited
    step of a model call in it: never a ``yield``, so the variable is reset in the
    context that set it)."""
    token = _RETRY_SINK.set(sink)
    try:
        yield
    finally:
        _RETRY_SINK.reset(token)


def tell_retry(event: ModelRetryEvent, fallback: Callable[[Event], None] | None) -> None:
    """A model retry to the run whose call it is (stored, streamed, and on to its
    ``on_event``), else — a call made outside a run's turn — to ``fallback``."""
    sink = _RETRY_SINK.get() or fallback
    if sink is not None:
        sink(event)


def collect_result(events: list[Event], store: SessionStore) -> RunResult:
    """A finished run's result from its events (the last top-level ``done`` event); a
    paused run's pending turn comes from the store."""
    done = next(e for e in reversed(events) if isinstance(e, DoneEvent) and not e.is_sub_agent)
    usage = Usage()
    for e in events:
        if isinstance(e, UsageEvent) and not e.is_sub_agent:
            usage = usage + e.usage
    pending = store.get(done.session_id).pending if done.status == "paused" else None
    return RunResult(done.session_id, done.status, done.text, done.reason, events, usage, pending)


def owner() -> dict[str, Any]:
    """Who is running a session now: lets ``resume`` refuse a session still running."""
    return {"pid": os.getpid(), "host": socket.gethostname()}


def jsonable_state(state: dict[str, Any]) -> dict[str, Any]:
    """The JSON-serialisable part of the tool state (Bash cwd, files read, todos…)."""
    out: dict[str, Any] = {}
    for key, value in state.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue
        out[key] = value
    return out


def todos_of(state: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The TodoWrite list kept in the tool state, as plain dicts (None when absent)."""
    todos = state.get("todos")
    if not isinstance(todos, list):
        return None
    rows = []
    for item in todos:
        data = item.model_dump(by_alias=True) if hasattr(item, "model_dump") else item
        if isinstance(data, dict):
            rows.append(data)
    return rows
