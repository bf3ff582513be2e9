"""A paused run's waiting calls as AG-UI interrupts, and the resume entries that answer them.

A pause ends an AG-UI run with an *interrupt* outcome: one :class:`Interrupt` per tool
call the turn waits on (its id is the call's id; ``reason`` is ``tool_approval`` or
``question``; a ``responseSchema`` says what to send back; ``metadata.skilldeck``
holds the tool, its input and the questions). The next ``RunAgentInput`` carries one
``ResumeEntry`` per interrupt: :func:`replies_from_resume` turns them into the
per-call replies the session service takes (``approve`` / ``answer``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ag_ui.core import Interrupt, ResumeEntry

from skilldeck.service import PendingCall

__all__ = [
    "META",
    "CallReply",
    "PendingCall",
    "WaitingCall",
    "interrupts_for",
    "pending_calls_from_dict",
    "replies_from_resume",
]

#: the metadata key of skilldeck's own details ("ag-ui" is reserved by the protocol)
META = "skilldeck"

PERMISSION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"approve": {"type": "boolean"}, "always": {"type": "boolean"}},
    "required": ["approve"],
}
QUESTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "answers": {"type": "object", "additionalProperties": True},
    },
}


#: a tool call a paused run waits on: the service's own record, also rebuilt from a
#: run's events when the page re-attaches (``kind`` is ``permission`` or a question kind)
WaitingCall = PendingCall


def interrupts_for(calls: Iterable[WaitingCall]) -> list[Interrupt]:
    """One interrupt per waiting call; its id is the tool call's id."""
    interrupts = []
    for call in calls:
        details: dict[str, Any] = {"kind": call.kind, "tool": call.tool, "input": call.input}
        if call.kind != "permission":
            details["questions"] = call.questions
            text = "; ".join(str(q.get("question", "")) for q in call.questions) or "a question"
            schema = QUESTION_SCHEMA
            reason = "question"
        else:
            details["reason"] = call.reason
            text = f"Allow {call.tool}?" + (f" ({call.reason})" if call.reason else "")
            schema = PERMISSION_SCHEMA
            reason = "tool_approval"
        interrupts.append(
            Interrupt(
                id=call.call_id,
                reason=reason,
                message=text,
                tool_call_id=call.call_id,
                response_schema=schema,
                metadata={META: details},
            )
        )
    return interrupts


def pending_calls_from_dict(pending: Mapping[str, Any] | None) -> list[PendingCall]:
    """The waiting calls of a stored pending turn (``Pending.to_dict()``), in call order."""
    if not pending:
        return []
    waiting = pending.get("waiting") or {}
    calls = []
    for call in pending.get("calls") or []:
        call_id = str(call.get("id", ""))
        wait = waiting.get(call_id)
        if wait is None:
            continue
        payload = dict(wait.get("payload") or {})
        tool_input = dict(call.get("input") or {})
        if wait.get("kind") == "permission":
            tool = str(payload.get("tool") or call.get("name", ""))
            reason = str(wait.get("reason") or payload.get("reason") or "")
            calls.append(PendingCall(call_id, "permission", tool, tool_input, reason))
        else:
            questions = [q for q in payload.get("questions", []) if isinstance(q, dict)]
            calls.append(
                PendingCall(
                    call_id, "question", str(call.get("name", "")), tool_input, questions=questions
                )
            )
    return calls


@dataclass(frozen=True)
class CallReply:
    """A reply to one waiting call: ``decision`` (``allow`` / ``always`` / ``deny``) for
    a permission, ``answer`` (text, a list, or answers keyed by question) for a question."""

    call_id: str
    decision: str | None = None
    answer: Any = None


def replies_from_resume(
    entries: Sequence[ResumeEntry], pending: Sequence[WaitingCall]
) -> tuple[list[CallReply], list[str]]:
    """Per-call replies from the resume entries, and the ids of waiting calls left
    without one. An entry for an unknown interrupt raises ``ValueError``."""
    waiting = {c.call_id: c for c in pending}
    unknown = [e.interrupt_id for e in entries if e.interrupt_id not in waiting]
    if unknown:
        raise ValueError(f"no waiting call has the interrupt id {unknown[0]!r}")
    replies = []
    for entry in entries:
        call = waiting[entry.interrupt_id]
        payload = entry.payload if isinstance(entry.payload, dict) else {}
        if call.kind == "permission":
            approve = entry.status == "resolved" and payload.get("approve") is True
            always = approve and payload.get("always") is True
            decision = "always" if always else "allow" if approve else "deny"
            replies.append(CallReply(call.call_id, decision=decision))
        elif entry.status != "resolved":
            replies.append(CallReply(call.call_id, answer="The user declined to answer."))
        elif isinstance(entry.payload, str):
            replies.append(CallReply(call.call_id, answer=entry.payload))
        elif isinstance(payload.get("answers"), (dict, list)):
            replies.append(CallReply(call.call_id, answer=payload["answers"]))
        else:
            replies.append(CallReply(call.call_id, answer=str(payload.get("answer", ""))))
    answered = {r.call_id for r in replies}
    return replies, [cid for cid in waiting if cid not in answered]
