"""A human's replies to a paused turn, gathered call by call, and how they resume it.

A paused turn may wait on several calls at once (two permission requests, a question
and a permission…). A web page answers them one by one; the turn resumes once every
waiting call has a reply. The loop's resume takes one ``approve`` flag for all the
permission calls and one answer text for all the questions, so when the replies
differ (allow one call, deny another) the service settles the odd ones itself first:
their results are written into the stored pending turn (``sessions.pending``), and
the loop then resumes the rest with one flag — the recorded turn is the one the loop
would have written, because it records the results of a paused turn in call order
whoever produced them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from skilldeck.agent.pending import Pending, format_answer
from skilldeck.agent.permissions.gate import DENIED_BY_USER
from skilldeck.errors import SessionError
from skilldeck.llm.messages import ToolCall
from skilldeck.tools.base import ToolResult

__all__ = ["Answer", "Decision", "Replies", "ReplyPlan", "answer_text", "how_to_reply"]

#: what ``answer`` accepts: plain text, one answer per question (a list), or answers
#: keyed by question text or header (a value may be a list for multiSelect)
Answer = str | Sequence[str | Sequence[str]] | Mapping[str, str | Sequence[str]]


class Decision(StrEnum):
    """A human's answer to a permission request."""

    ALLOW = "allow"  # run this call
    ALWAYS = "always"  # run it, and allow such calls for the rest of the session
    DENY = "deny"

    @classmethod
    def parse(cls, value: Decision | str) -> Decision:
        """``value`` as a decision; SessionError naming the three there are."""
        try:
            return cls(value)
        except ValueError:
            raise SessionError(
                f"{value!r} is not a reply to a permission request: use 'allow' (run the "
                "call once), 'always' (and allow such calls for the rest of the session) "
                "or 'deny'."
            ) from None


def how_to_reply(session_id: str, pending: Pending) -> str:
    """What a paused session waits for, as the service calls that reply to it."""
    calls = []
    for call_id, waiting in pending.waiting.items():
        if waiting.kind == "permission":
            tool = waiting.payload.get("tool", "?")
            calls.append(f"approve({session_id!r}, {call_id!r}, 'allow'|'always'|'deny') ({tool})")
        else:
            calls.append(f"answer({session_id!r}, {call_id!r}, ...)")
    return "; ".join(calls)


def answer_text(answer: Answer, questions: Sequence[Mapping[str, Any]] = ()) -> str:
    """The answer as :func:`~skilldeck.agent.pending.format_answer` reads it: plain text
    (a single question's answer, options joined by ", "), or JSON for answers per
    question."""
    if isinstance(answer, str):
        return answer
    if len(questions) == 1:
        only = questions[0]
        if isinstance(answer, Mapping):
            keys = (str(only.get("question", "")), str(only.get("header", "")))
            found = [answer[k] for k in keys if k in answer] or list(answer.values())[:1]
            return _joined(found[0]) if found else ""
        return _joined(answer[0]) if len(answer) else ""
    if isinstance(answer, Mapping):
        return json.dumps({str(k): _plain(v) for k, v in answer.items()}, ensure_ascii=False)
    return json.dumps([_plain(v) for v in answer], ensure_ascii=False)


def _joined(value: str | Sequence[str]) -> str:
    return value if isinstance(value, str) else ", ".join(str(v) for v in value)


def _plain(value: str | Sequence[str]) -> str | list[str]:
    return value if isinstance(value, str) else [str(v) for v in value]


@dataclass
class ReplyPlan:
    """How to resume: the loop's flag and answer, the results settled beforehand, and
    the calls to remember as "allow always"."""

    approve: bool | None = None
    answer: str | None = None
    settled: dict[str, ToolResult] = field(default_factory=dict)
    always: list[ToolCall] = field(default_factory=list)


@dataclass
class Replies:
    """The replies received so far for one paused turn, keyed by call id."""

    decisions: dict[str, Decision] = field(default_factory=dict)
    answers: dict[str, str] = field(default_factory=dict)

    def add_decision(self, session_id: str, pending: Pending, call_id: str, d: Decision) -> None:
        self._check(session_id, pending, call_id, want_permission=True)
        self.decisions[call_id] = Decision.parse(d)

    def add_answer(self, session_id: str, pending: Pending, call_id: str, answer: Answer) -> None:
        self._check(session_id, pending, call_id, want_permission=False)
        questions = pending.waiting[call_id].payload.get("questions")
        asked = [q for q in questions if isinstance(q, dict)] if isinstance(questions, list) else []
        self.answers[call_id] = answer_text(answer, asked)

    def started(self) -> bool:
        """Some replies are in (the turn may wait for more)."""
        return bool(self.decisions or self.answers)

    def complete(self, pending: Pending) -> bool:
        """Every waiting call has its reply."""
        return all(cid in self.decisions or cid in self.answers for cid in pending.waiting)

    def plan(self, pending: Pending) -> ReplyPlan:
        """The resume that applies these replies (call :meth:`complete` first)."""
        plan = ReplyPlan()
        calls = {c.id: c for c in pending.calls}
        permission = [cid for cid, w in pending.waiting.items() if w.kind == "permission"]
        allowed = [cid for cid in permission if self.decisions[cid] is not Decision.DENY]
        plan.always = [calls[c] for c in allowed if self.decisions[c] is Decision.ALWAYS]
        if permission:
            plan.approve = bool(allowed)
            if allowed:  # the denied ones, settled here; the loop runs the allowed
                for cid in set(permission) - set(allowed):
                    plan.settled[cid] = ToolResult.error(_denied(pending, cid))
        questions = [cid for cid, w in pending.waiting.items() if w.kind != "permission"]
        texts = {self.answers[cid] for cid in questions}
        if len(texts) == 1:
            plan.answer = texts.pop()
        else:  # different answers to different calls: each settled with its own
            for cid in questions:
                payload = pending.waiting[cid].payload
                plan.settled[cid] = ToolResult(format_answer(payload, self.answers[cid]))
        return plan

    @staticmethod
    def _check(session_id: str, pending: Pending, call_id: str, *, want_permission: bool) -> None:
        waiting = pending.waiting.get(call_id)
        if waiting is None:
            ids = ", ".join(pending.waiting) or "none"
            raise SessionError(
                f"Session {session_id} has no call {call_id!r} waiting for a reply "
                f"(waiting: {ids})."
            )
        is_permission = waiting.kind == "permission"
        if is_permission != want_permission:
            what = "a permission decision" if is_permission else "an answer"
            raise SessionError(
                f"Call {call_id!r} of session {session_id} is waiting for {what}; "
                f"use {'approve' if is_permission else 'answer'}() for it."
            )


def _denied(pending: Pending, call_id: str) -> str:
    tool = pending.waiting[call_id].payload.get("tool")
    return f"{DENIED_BY_USER} (tool: {tool})" if tool else DENIED_BY_USER


def settle(pending: Pending, settled: Mapping[str, ToolResult]) -> dict[str, Any]:
    """``pending`` with the ``settled`` calls moved from waiting to results, as stored."""
    for cid, result in settled.items():
        pending.waiting.pop(cid, None)
        pending.results[cid] = result
    return pending.to_dict()
