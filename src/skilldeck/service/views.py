"""Sessions as plain data for a page or a bot: a summary per session, one in detail.

Plain frozen dataclasses with ``to_dict()`` (JSON-ready), built from the store's
records, so an interface never needs the store's own types.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from skilldeck.agent.pending import Pending
from skilldeck.agent.store import SessionRecord, StoredMessage
from skilldeck.llm.messages import AssistantMessage, ToolResultMessage, UserMessage

__all__ = ["PendingCall", "SessionDetail", "SessionSummary", "summary_of"]

#: how many characters of the first task a title keeps
TITLE_CHARS = 80


@dataclass(frozen=True)
class SessionSummary:
    """One line of the sessions list."""

    id: str
    title: str
    status: str
    model: str
    updated: float
    created: float
    cwd: str
    #: a run of it is going on in this service now
    running_here: bool = False
    #: ``permission`` or ``ask_user`` when paused waiting for a human, else ""
    waiting_for: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class PendingCall:
    """A call of a paused turn that waits for a reply."""

    call_id: str
    #: ``permission`` (approve) or a question kind such as ``ask_user`` (answer)
    kind: str
    tool: str
    input: dict[str, Any]
    reason: str = ""
    #: for ``ask_user``: the questions, as the model wrote them (options, multiSelect)
    questions: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class SessionDetail:
    """One session: its summary, the calls it waits on, its conversation and todos."""

    summary: SessionSummary
    pending: list[PendingCall]
    #: ``{"seq", "role", "text"}`` plus ``tool_calls`` / ``tool_call_id``, ``is_error``
    messages: list[dict[str, Any]]
    todos: list[dict[str, Any]]
    #: the event number a subscriber can resume after to get only newer events
    last_seq: int = -1

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.summary.to_dict(),
            "pending": [p.to_dict() for p in self.pending],
            "messages": self.messages,
            "todos": self.todos,
            "last_seq": self.last_seq,
        }


def summary_of(record: SessionRecord, *, running_here: bool = False) -> SessionSummary:
    title = " ".join(record.task.split())
    if len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1] + "…"
    waiting = ""
    if record.status == "paused" and record.pending:
        waiting = str(record.pending.get("kind") or "")
    return SessionSummary(
        id=record.id,
        title=title,
        status=record.status,
        model=record.model,
        updated=record.updated,
        created=record.created,
        cwd=record.cwd,
        running_here=running_here,
        waiting_for=waiting,
    )


def child_calls(waits: Iterable[Any]) -> list[PendingCall]:
    """The sub-agents' permission requests waiting in memory (``live.ChildWait``)."""
    return [
        PendingCall(
            call_id=w.request.call.id,
            kind="permission",
            tool=w.request.call.name,
            input=dict(w.request.call.input),
            reason=w.request.reason,
        )
        for w in waits
    ]


def pending_calls(pending: Pending) -> list[PendingCall]:
    calls = {c.id: c for c in pending.calls}
    out = []
    for cid, waiting in pending.waiting.items():
        call = calls.get(cid)
        questions = waiting.payload.get("questions")
        out.append(
            PendingCall(
                call_id=cid,
                kind=waiting.kind,
                tool=call.name if call else str(waiting.payload.get("tool", "")),
                input=dict(call.input) if call else {},
                reason=waiting.reason,
                questions=[q for q in questions if isinstance(q, dict)]
                if isinstance(questions, list)
                else [],
            )
        )
    return out


def message_view(stored: StoredMessage) -> dict[str, Any] | None:
    """A stored message for a chat view (system messages and skill hints left out)."""
    msg = stored.message
    if isinstance(msg, UserMessage):
        if msg.meta:
            return None
        return {"seq": stored.seq, "role": "user", "text": msg.content}
    if isinstance(msg, AssistantMessage):
        calls = [{"id": c.id, "name": c.name, "input": c.input} for c in msg.tool_calls]
        return {"seq": stored.seq, "role": "assistant", "text": msg.text, "tool_calls": calls}
    if isinstance(msg, ToolResultMessage):
        return {
            "seq": stored.seq,
            "role": "tool",
            "tool_call_id": msg.tool_call_id,
            "name": msg.name,
            "text": stored.full_content or msg.content,
            "is_error": msg.is_error,
        }
    return None
