"""The end of an AG-UI run: its outcome, its token usage, the interrupts of a pause.

The run's ``done`` becomes ``RUN_FINISHED`` (success, cancelled, or an *interrupt*
outcome built from the calls the paused turn waits on) or ``RUN_ERROR``. What that
end reports is gathered while the run goes on (:class:`RunTally`): the tokens used
per model and the reasons of the permission requests, so that an interrupt built
from the run's own unanswered calls (no stored pause at hand) still says why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import (
    BaseEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    TokenUsage,
)

from skilldeck.agent.events import DoneEvent, Event, PermissionRequestEvent, UsageEvent
from skilldeck.web.interrupts import PendingCall, WaitingCall, interrupts_for

__all__ = ["QUESTION_TOOL", "OpenCall", "RunTally", "end_of_run"]

QUESTION_TOOL = "AskUserQuestion"


@dataclass
class OpenCall:
    """A tool call of the run not answered yet (``scope``: its sub-agent run, if any)."""

    name: str
    input: dict[str, Any]
    scope: str | None


@dataclass
class RunTally:
    """What the end of one run reports, gathered from its events as they pass."""

    _usage: dict[str, TokenUsage] = field(default_factory=dict)
    _model: str = ""
    _permission_reasons: dict[str, str] = field(default_factory=dict)

    def saw(self, event: Event) -> None:
        """Note the model of the run's own model calls (the key of its usage)."""
        if event.type == "model_call" and not event.is_sub_agent:
            self._model = str(getattr(event, "model", ""))

    def add_usage(self, event: UsageEvent) -> None:
        """Add the run's own tokens (a sub-agent's are its own business)."""
        if event.is_sub_agent:
            return
        model = self._model or "unknown"
        old = self._usage.get(model) or TokenUsage(model=model, input_tokens=0, output_tokens=0)
        inp = (old.input_tokens or 0) + event.usage.input_tokens
        outp = (old.output_tokens or 0) + event.usage.output_tokens
        self._usage[model] = TokenUsage(
            model=model, input_tokens=inp, output_tokens=outp, total_tokens=inp + outp
        )

    def add_permission_request(self, event: PermissionRequestEvent) -> None:
        self._permission_reasons[_call_key(event.tool, event.input)] = event.reason

    def usage(self) -> list[TokenUsage] | None:
        return list(self._usage.values()) or None

    def unanswered(self, calls: Mapping[str, OpenCall]) -> list[PendingCall]:
        """The run's own open ``calls`` as waiting calls (questions, or permissions
        with the reason their request gave)."""
        waiting = []
        for call_id, call in calls.items():
            if call.scope is not None:
                continue
            if call.name == QUESTION_TOOL:
                questions = [q for q in call.input.get("questions", []) if isinstance(q, dict)]
                waiting.append(
                    PendingCall(call_id, "question", call.name, call.input, questions=questions)
                )
            else:
                reason = self._permission_reasons.get(_call_key(call.name, call.input), "")
                waiting.append(PendingCall(call_id, "permission", call.name, call.input, reason))
        return waiting


def end_of_run(
    event: DoneEvent,
    *,
    thread_id: str,
    run_id: str,
    waiting: Sequence[WaitingCall] | None,
    usage: list[TokenUsage] | None,
    now: int,
) -> BaseEvent:
    """``RUN_ERROR`` or ``RUN_FINISHED`` for the run's ``done``. A pause with calls
    ``waiting`` is an interrupt; a pause with none (nothing to answer, or a replayed
    history answered since) is reported as a plain end rather than an empty interrupt."""
    if event.status == "error":
        return RunErrorEvent(
            message=event.reason or "the run failed", code="error", usage=usage, timestamp=now
        )
    outcome: Any = RunFinishedSuccessOutcome()
    if event.status == "paused" and waiting:
        outcome = RunFinishedInterruptOutcome(interrupts=interrupts_for(waiting))
    elif event.status == "cancelled":
        outcome = RunFinishedCancelledOutcome()
    return RunFinishedEvent(
        thread_id=thread_id,
        run_id=run_id,
        result={"status": event.status, "reason": event.reason, "text": event.text},
        outcome=outcome,
        usage=usage,
        timestamp=now,
    )


def _call_key(tool: str, tool_input: Mapping[str, Any]) -> str:
    return tool + "\0" + json.dumps(tool_input, sort_keys=True, default=str)
