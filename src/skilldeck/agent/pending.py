"""A paused turn, as stored in ``sessions.pending`` so any process can finish it.

When a turn pauses (a question for the user, a permission to approve), the assistant
message is committed and everything else about the turn — its calls in order, the
results of the calls that already ran, and what each waiting call needs — is kept
here as JSON. ``resume`` turns the human's answer into the missing results and
records the whole turn's results in call order, exactly as if it had never paused.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import Any

from skilldeck.agent.dispatch import Outcome, Waiting
from skilldeck.agent.permissions.gate import DENIED_BY_USER
from skilldeck.errors import SessionError
from skilldeck.llm.messages import ToolCall
from skilldeck.tools.base import ToolResult


@dataclass
class Pending:
    turn: int
    calls: list[ToolCall]
    results: dict[str, ToolResult] = field(default_factory=dict)
    waiting: dict[str, Waiting] = field(default_factory=dict)

    @classmethod
    def from_outcomes(cls, outcomes: list[Outcome], *, turn: int) -> Pending:
        pending = cls(turn=turn, calls=[o.call for o in outcomes])
        for o in outcomes:
            if o.waiting is not None:
                pending.waiting[o.call.id] = o.waiting
            elif o.result is not None:
                pending.results[o.call.id] = o.result
        return pending

    @property
    def kind(self) -> str:
        """``permission`` when any call awaits approval, else the first waiting kind."""
        kinds = [w.kind for w in self.waiting.values()]
        return "permission" if "permission" in kinds else (kinds[0] if kinds else "")

    def needs_answer(self) -> bool:
        return any(w.kind != "permission" for w in self.waiting.values())

    def needs_approval(self) -> bool:
        return any(w.kind == "permission" for w in self.waiting.values())

    def check(self, session_id: str, *, answer: str | None, approve: bool | None) -> None:
        """Raise a SessionError naming the missing option before anything changes."""
        if self.needs_answer() and answer is None:
            raise SessionError(
                f"Session {session_id} is waiting for an answer to: {self.question_text()}. "
                f"Resume it with: {resume_command(session_id, self)}"
            )
        if self.needs_approval() and approve is None:
            tools = ", ".join(
                str(w.payload.get("tool", "?"))
                for w in self.waiting.values()
                if w.kind == "permission"
            )
            raise SessionError(
                f"Session {session_id} is waiting for approval to run {tools}. "
                f"Resume it with: {resume_command(session_id, self)}"
            )

    def question_text(self) -> str:
        questions = [
            str(q.get("question", ""))
            for w in self.waiting.values()
            if w.kind != "permission"
            for q in w.payload.get("questions", [])
            if isinstance(q, dict)
        ]
        return "; ".join(q for q in questions if q) or "a question"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "turn": self.turn,
            "calls": [c.model_dump() for c in self.calls],
            "results": {
                cid: {"content": r.content, "is_error": r.is_error}
                for cid, r in self.results.items()
            },
            "waiting": {cid: w.to_dict() for cid, w in self.waiting.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Pending:
        try:
            return cls(
                turn=int(data.get("turn", 0)),
                calls=[ToolCall.model_validate(c) for c in data["calls"]],
                results={
                    cid: ToolResult(content=r["content"], is_error=bool(r["is_error"]))
                    for cid, r in data.get("results", {}).items()
                },
                waiting={
                    cid: Waiting(w["kind"], dict(w.get("payload", {})), w.get("reason", ""))
                    for cid, w in data.get("waiting", {}).items()
                },
            )
        except (KeyError, TypeError, ValueError) as e:
            raise SessionError(f"The stored pending request is malformed ({e}).") from e


def resume_command(session_id: str, pending: Pending | None) -> str:
    """The command line that continues a paused session."""
    base = f"skilldeck resume {session_id}"
    if pending is None:
        return base
    parts = [base]
    if pending.needs_answer():
        parts.append("--answer " + shlex.quote("YOUR ANSWER"))
    if pending.needs_approval():
        parts.append("--approve (or --deny)")
    return " ".join(parts)


def denied_text(payload: dict[str, Any]) -> str:
    """The tool result of a call the human refused to approve."""
    tool = payload.get("tool")
    return f"{DENIED_BY_USER} (tool: {tool})" if tool else DENIED_BY_USER


def format_answer(payload: dict[str, Any], answer: str) -> str:
    """The tool result for an AskUserQuestion answer (Claude Code's wording).

    ``answer`` is plain text, or JSON: an object keyed by question (or header) text,
    or a list with one answer per question.
    """
    questions = [q for q in payload.get("questions", []) if isinstance(q, dict)]
    if not questions:
        return answer
    pairs = _pair_answers(questions, answer)
    if pairs is None:
        asked = "; ".join(f'"{q.get("question", "")}"' for q in questions)
        body = f"{asked}={json.dumps(answer, ensure_ascii=False)}"
    else:
        body = ", ".join(f'"{q}"="{a}"' for q, a in pairs)
    return (
        f"User has answered your questions: {body}. "
        "You can now continue with the user's answers in mind."
    )


def _pair_answers(questions: list[dict[str, Any]], answer: str) -> list[tuple[str, str]] | None:
    texts = [str(q.get("question", "")) for q in questions]
    if len(questions) == 1:
        return [(texts[0], answer)]
    try:
        parsed = json.loads(answer)
    except ValueError:
        return None
    if isinstance(parsed, list) and len(parsed) == len(texts):
        return [(t, _answer_text(a)) for t, a in zip(texts, parsed, strict=True)]
    if isinstance(parsed, dict):
        pairs = []
        for q, text in zip(questions, texts, strict=True):
            value = parsed.get(text, parsed.get(str(q.get("header", ""))))
            if value is not None:
                pairs.append((text, _answer_text(value)))
        return pairs or None
    return None


def _answer_text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
