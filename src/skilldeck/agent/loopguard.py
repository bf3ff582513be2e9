"""Keeping a run with a weak model from going round in circles or stopping early.

Real runs with small local models ended at ``max_turns`` in loops of identical calls,
most after the task was done: 23 identical ``TaskOutput`` calls after a ``Write``, the
same skill loaded 7 times, a refused ``Task`` retried 8 times unchanged. And a 0.5B
model wrote its one tool call as text, which the loop took as the final answer.

**Repeated calls** (:class:`LoopGuard`). A call is *repeated* when the model makes it
again after it has seen its result: in an earlier turn of this run it made the same
tool call — same name, same arguments — and got the same result (same content, same
error flag). Identical calls within one turn count once (the model had not seen
either result yet). From ``agent.repeat_warn_after`` occurrences (default 2)
the result the model reads gets a note: what it already got, how often, since which
turn, and what to do instead. At ``agent.repeat_stop_after`` (default 4) the run ends
with status ``stuck`` — resumable, like ``paused`` — instead of burning turns to
``max_turns``. Each detection is a :class:`~skilldeck.agent.events.LoopDetectedEvent`.
A result a tool marks as a poll (``data["poll"]``: a background task still running)
never counts: waiting is not a loop. The counts live on one run (one ``run`` or
``resume`` invocation), never on a shared object.

**Calls written as text** (:func:`recover_text_calls`). When the reply has no tool
calls and its text is only calls to offered tools (``llm/textcalls.py`` decides), the
reply becomes those calls, and a
:class:`~skilldeck.agent.events.ToolCallRecoveredEvent` records it. On by default for
``ollama:`` and ``openai-compat:`` models (``agent.text_tool_calls``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skilldeck.agent.events import Event, LoopDetectedEvent, ToolCallRecoveredEvent
from skilldeck.llm.messages import AssistantMessage, ToolCall, ToolSpec
from skilldeck.llm.textcalls import parse_text_tool_calls
from skilldeck.tools.base import ToolResult

if TYPE_CHECKING:
    from skilldeck.agent.dispatch import Outcome
    from skilldeck.config import Settings

__all__ = [
    "LoopGuard",
    "Repeat",
    "recover_text_calls",
    "text_calls_enabled",
]

#: providers whose servers often leave a written tool call in the text
TEXT_CALL_PROVIDERS = ("ollama:", "openai-compat:")


@dataclass(frozen=True)
class Repeat:
    """One repeated call: how many times it was made with this result, since when."""

    call: ToolCall
    count: int
    first_turn: int
    is_error: bool
    stop: bool

    def note(self) -> str:
        """What the model reads after the result: what it already got, what to do."""
        args = _clip(json.dumps(self.call.input, ensure_ascii=False, sort_keys=True), 200)
        outcome = "failed with the same error" if self.is_error else "returned the same result"
        head = (
            f"[skilldeck: this exact call — {self.call.name} {args} — has now {outcome} "
            f"{self.count} times (first at turn {self.first_turn}). Repeating it will not "
            "change anything."
        )
        advice = _ADVICE.get(self.call.name) or (
            "Change the arguments as the error says, use another tool, or explain in your "
            "final answer what blocks you."
            if self.is_error
            else "Use the result you already have: if the task is done, reply with your "
            "final answer and no tool call; otherwise do the next step."
        )
        tail = " The run stops here as `stuck`." if self.stop else ""
        return f"{head} {advice}{tail}]"

    def reason(self) -> str:
        """The ``done`` event's reason when the run ends ``stuck``."""
        return (
            f"the model repeated {self.call.name} with the same arguments and the same "
            f"{'error' if self.is_error else 'result'} {self.count} times"
        )


_ADVICE = {
    "TaskOutput": (
        "A foreground Task returns its result directly in the Task result; TaskOutput is "
        "only for tasks started with run_in_background=true."
    ),
    "Skill": (
        "The skill's instructions are already in this conversation: follow them with the "
        "other tools, or finish."
    ),
    "Task": (
        "Fix the spawn as the error says (a valid subagent_type, skill names from the "
        "list), or do the work yourself."
    ),
}


@dataclass
class LoopGuard:
    """Counts (call, result) pairs of one run; see the module docstring."""

    warn_after: int = 2
    stop_after: int = 4
    #: (tool, arguments, is_error, result digest) → [turns seen in, first turn, last turn]
    _seen: dict[tuple[str, str, bool, str], list[int]] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: Settings) -> LoopGuard:
        a = settings.agent
        return cls(a.repeat_warn_after, max(a.repeat_warn_after, a.repeat_stop_after))

    def observe(self, call: ToolCall, result: ToolResult, turn: int) -> Repeat | None:
        """Count one finished call (once per turn); a :class:`Repeat` once it reaches
        ``warn_after``."""
        if isinstance(result.data, dict) and result.data.get("poll"):
            return None
        key = (call.name, _canonical(call.input), result.is_error, _digest(result.content))
        seen = self._seen.setdefault(key, [0, turn, -1])
        if seen[2] == turn:
            return None  # the same call twice in one turn: the model saw neither result
        seen[0] += 1
        seen[2] = turn
        count, first, _ = seen
        if count < self.warn_after:
            return None
        return Repeat(call, count, first, result.is_error, stop=count >= self.stop_after)

    def check(
        self, outcomes: Sequence[Outcome], turn: int, emit: Callable[[Event], None]
    ) -> Repeat | None:
        """Note repeats in the results the model will read (in place), emit an event
        for each, and return the repeat that stops the run, if one does."""
        stop: Repeat | None = None
        for outcome in outcomes:
            if outcome.result is None:
                continue
            repeat = self.observe(outcome.call, outcome.result, turn)
            if repeat is None:
                continue
            result = outcome.result
            outcome.result = ToolResult(
                f"{result.content}\n\n{repeat.note()}", result.is_error, result.data, result.pause
            )
            call = outcome.call
            emit(
                LoopDetectedEvent(
                    tool=call.name, input=call.input, count=repeat.count, stop=repeat.stop
                )
            )
            if repeat.stop and stop is None:
                stop = repeat
        return stop


def text_calls_enabled(settings: Settings, model_name: str) -> bool:
    """``agent.text_tool_calls``: on, off, or (auto) for the local-server providers."""
    choice = settings.agent.text_tool_calls
    if choice == "auto":
        return model_name.startswith(TEXT_CALL_PROVIDERS)
    return choice == "on"


def recover_text_calls(
    reply: AssistantMessage, specs: Sequence[ToolSpec], turn: int
) -> tuple[AssistantMessage, list[Event]] | None:
    """The reply with its written-out calls made real, and the events recording it;
    None when the reply already has calls or its text is not only calls."""
    if reply.tool_calls or not reply.text.strip():
        return None
    found = parse_text_tool_calls(reply.text, specs)
    if not found:
        return None
    calls = [
        ToolCall(id=f"text-{turn}-{i}", name=c.name, input=c.input) for i, c in enumerate(found, 1)
    ]
    fixed = reply.model_copy(update={"text": "", "tool_calls": calls, "stop_reason": "tool_use"})
    events: list[Event] = [
        ToolCallRecoveredEvent(id=c.id, name=c.name, text=_clip(reply.text, 500)) for c in calls
    ]
    return fixed, events


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).hexdigest()


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
