"""skilldeck events → AG-UI 1.0 events: one run of one session, as an AG-UI client sees it.

The mapping (issue 18):

- text: ``text_delta`` → ``TEXT_MESSAGE_START`` (first delta) + ``TEXT_MESSAGE_CONTENT``;
  the final ``text`` closes the streamed message with ``TEXT_MESSAGE_END`` (or, when
  nothing streamed — a replayed history, a model without streaming — sends the whole
  message as START + CONTENT + END);
- tool calls: ``tool_call`` → ``TOOL_CALL_START`` / ``TOOL_CALL_ARGS`` (the input as
  JSON) / ``TOOL_CALL_END``; ``tool_result`` → ``TOOL_CALL_RESULT`` (an error result
  says so in ``metadata.skilldeck.isError``);
- todos: a successful ``TodoWrite`` → ``STATE_SNAPSHOT`` ``{"todos": [...]}``;
- sub-agents: ``subagent_start`` / ``subagent_end`` → ``SUBAGENT_STARTED`` /
  ``SUBAGENT_FINISHED`` (or ``SUBAGENT_ERROR``), tied to the parent's ``Task`` call;
  everything a sub-agent emits carries its ``subagentRunId`` (its task id), and its own
  ``done`` is a ``CUSTOM`` event: a sub-agent's end never ends the parent's run;
  a grand-child reaches us re-tagged with its parent's task id (the sub-agent layer
  forwards a child's events under its own id), so a foreground one gets a run id of
  its own here (``<parent id>/<n>``), nested under its parent's ``Task`` call, and the
  events tagged with the parent's id between its start and its end are its own (the
  parent waits on its ``Task`` call meanwhile);
- the run's ``done`` → ``RUN_FINISHED`` (success, cancelled, or an *interrupt* outcome
  built from the pending tool calls when the run paused) or ``RUN_ERROR``; a
  sub-agent's request waiting for a reply while the run goes on → :meth:`interrupt`;
- every other skilldeck event → ``CUSTOM`` named ``skilldeck.<type>``.

A paused run is continued by a new ``RunAgentInput`` whose ``resume`` entries answer
the interrupts (``web/interrupts.py``). One small state machine: no I/O, no service.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentFinishedSuccessOutcome,
    SubagentStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.core.types import RunAgentInput

from skilldeck.agent.events import (
    DoneEvent,
    Event,
    PermissionRequestEvent,
    SubagentEndEvent,
    SubagentStartEvent,
    TextDeltaEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageEvent,
)
from skilldeck.web.interrupts import META, PendingCall, WaitingCall, interrupts_for

__all__ = ["PROTOCOL_VERSION", "AguiMapper"]

PROTOCOL_VERSION = "1.0"
#: tools whose call spawns a sub-agent (``Agent`` is Claude Code's alias of ``Task``)
TASK_TOOLS = frozenset({"Task", "Agent"})
QUESTION_TOOL = "AskUserQuestion"


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class _Call:
    name: str
    input: dict[str, Any]
    scope: str | None


@dataclass
class AguiMapper:
    """The state of one AG-UI run: open text messages, open tool calls, sub-agent runs.

    Feed it skilldeck events in order (:meth:`map`); it returns the AG-UI events each
    one becomes. :meth:`started` opens the run; the run's ``done`` closes it.
    """

    thread_id: str
    run_id: str
    clock: Callable[[], int] = _now_ms
    #: False for a replayed history: a pause there was answered since, so it is no interrupt
    interrupt_on_pause: bool = True
    finished: bool = False
    _open_text: dict[str | None, str] = field(default_factory=dict)
    _last_message: dict[str | None, str] = field(default_factory=dict)
    _calls: dict[str, _Call] = field(default_factory=dict)
    #: per scope (None: the run itself), the Task calls whose sub-agent has not started
    _unanswered_tasks: dict[str | None, list[str]] = field(default_factory=dict)
    #: per re-tagged task id, the open foreground grand-children (innermost last)
    _nested: dict[str, list[str]] = field(default_factory=dict)
    _permission_reasons: dict[str, str] = field(default_factory=dict)
    _usage: dict[str, TokenUsage] = field(default_factory=dict)
    _model: str = ""
    _counter: int = 0

    # ---- run boundaries ---------------------------------------------------------

    def started(self, run_input: RunAgentInput | None = None) -> RunStartedEvent:
        return RunStartedEvent(
            thread_id=self.thread_id,
            run_id=self.run_id,
            protocol_version=PROTOCOL_VERSION,
            input=run_input,
            timestamp=self.clock(),
        )

    def error(self, message: str, code: str = "error") -> list[BaseEvent]:
        """Close the run as failed (a service error before or during the run)."""
        if self.finished:
            return []
        self.finished = True
        return [
            *self._close_all_text(),
            RunErrorEvent(message=message, code=code, timestamp=self.clock()),
        ]

    def interrupt(self, waiting: Sequence[WaitingCall]) -> list[BaseEvent]:
        """Close the run with an interrupt while the session's run goes on: a sub-agent
        waits (in memory) for a reply to ``waiting``; the resume continues the run."""
        if self.finished:
            return []
        self.finished = True
        return [
            *self._close_all_text(),
            RunFinishedEvent(
                thread_id=self.thread_id,
                run_id=self.run_id,
                result={"status": "paused", "reason": "a sub-agent waits for a reply"},
                outcome=RunFinishedInterruptOutcome(interrupts=interrupts_for(waiting)),
                timestamp=self.clock(),
            ),
        ]

    # ---- one skilldeck event ------------------------------------------------------

    def map(self, event: Event, *, pending: Sequence[WaitingCall] | None = None) -> list[BaseEvent]:
        """The AG-UI events ``event`` becomes. ``pending`` (the session's stored paused
        calls) is used when a ``done`` says the run paused; without it the interrupts are
        built from the tool calls this run started and never answered."""
        if self.finished:
            return []
        handler = _HANDLERS.get(event.type)
        out = handler(self, event) if handler else None
        if event.type == "done" and not event.is_sub_agent:
            assert isinstance(event, DoneEvent)
            return self._done(event, pending)
        return out if out is not None else [self._custom(event)]

    # ---- handlers ---------------------------------------------------------------

    def _scope(self, event: Event) -> str | None:
        if not event.is_sub_agent:
            return None
        nested = self._nested.get(event.task_id or "")
        return nested[-1] if nested else event.task_id

    def _new_id(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}-{self.run_id}-{self._counter}"

    def _text_delta(self, event: TextDeltaEvent) -> list[BaseEvent]:
        scope = self._scope(event)
        out: list[BaseEvent] = []
        message_id = self._open_text.get(scope)
        if message_id is None:
            message_id = self._new_id("msg")
            self._open_text[scope] = message_id
            self._last_message[scope] = message_id
            out.append(self._text_start(message_id, scope))
        out.append(
            TextMessageContentEvent(
                message_id=message_id,
                delta=event.text,
                subagent_run_id=scope,
                timestamp=self.clock(),
            )
        )
        return out

    def _text(self, event: TextEvent) -> list[BaseEvent]:
        scope = self._scope(event)
        if scope in self._open_text:
            return self._close_text(scope)
        message_id = self._new_id("msg")
        self._last_message[scope] = message_id
        return [
            self._text_start(message_id, scope),
            TextMessageContentEvent(
                message_id=message_id,
                delta=event.text,
                subagent_run_id=scope,
                timestamp=self.clock(),
            ),
            TextMessageEndEvent(
                message_id=message_id, subagent_run_id=scope, timestamp=self.clock()
            ),
        ]

    def _text_start(self, message_id: str, scope: str | None) -> TextMessageStartEvent:
        return TextMessageStartEvent(
            message_id=message_id, role="assistant", subagent_run_id=scope, timestamp=self.clock()
        )

    def _close_text(self, scope: str | None) -> list[BaseEvent]:
        message_id = self._open_text.pop(scope, None)
        if message_id is None:
            return []
        return [
            TextMessageEndEvent(
                message_id=message_id, subagent_run_id=scope, timestamp=self.clock()
            )
        ]

    def _close_all_text(self) -> list[BaseEvent]:
        return [e for scope in list(self._open_text) for e in self._close_text(scope)]

    def _tool_call(self, event: ToolCallEvent) -> list[BaseEvent]:
        scope = self._scope(event)
        out = self._close_text(scope)
        self._calls[event.id] = _Call(event.name, dict(event.input), scope)
        if event.name in TASK_TOOLS:
            self._unanswered_tasks.setdefault(scope, []).append(event.id)
        now = self.clock()
        out += [
            ToolCallStartEvent(
                tool_call_id=event.id,
                tool_call_name=event.name,
                parent_message_id=self._last_message.get(scope),
                subagent_run_id=scope,
                timestamp=now,
            ),
            ToolCallArgsEvent(
                tool_call_id=event.id,
                delta=json.dumps(event.input, ensure_ascii=False),
                subagent_run_id=scope,
                timestamp=now,
            ),
            ToolCallEndEvent(tool_call_id=event.id, subagent_run_id=scope, timestamp=now),
        ]
        return out

    def _tool_result(self, event: ToolResultEvent) -> list[BaseEvent]:
        scope = self._scope(event)
        call = self._calls.pop(event.id, None)
        waiting = self._unanswered_tasks.get(scope, [])
        if event.id in waiting:
            waiting.remove(event.id)
        out: list[BaseEvent] = [
            ToolCallResultEvent(
                message_id=f"result-{event.id}",
                tool_call_id=event.id,
                content=event.content,
                role="tool",
                subagent_run_id=scope,
                metadata={META: {"isError": event.is_error, "toolName": event.name}},
                timestamp=self.clock(),
            )
        ]
        if event.name == "TodoWrite" and not event.is_error and call is not None:
            todos = call.input.get("todos")
            if isinstance(todos, list):
                out.append(
                    StateSnapshotEvent(
                        snapshot={"todos": todos}, subagent_run_id=scope, timestamp=self.clock()
                    )
                )
        return out

    def _subagent_start(self, event: SubagentStartEvent) -> list[BaseEvent] | None:
        if not event.task_id:
            return None
        scope = self._scope(event)
        waiting = self._unanswered_tasks.get(scope, [])
        parent_call = waiting.pop(0) if waiting else None
        run_id = event.task_id
        if event.is_sub_agent:  # a grand-child, re-tagged with its parent's task id
            self._counter += 1
            run_id = f"{scope}/{self._counter}"
            if not event.background:
                self._nested.setdefault(event.task_id, []).append(run_id)
        return [
            SubagentStartedEvent(
                subagent_run_id=run_id,
                name=event.subagent_type,
                description=event.description or None,
                parent_tool_call_id=parent_call,
                metadata={META: {"background": event.background}},
                timestamp=self.clock(),
            )
        ]

    def _subagent_end(self, event: SubagentEndEvent) -> list[BaseEvent] | None:
        if not event.task_id:
            return None
        run_id: str = event.task_id
        if event.is_sub_agent:  # a grand-child's end: the innermost open one
            nested = self._nested.get(event.task_id)
            if not nested:
                return None  # a background grand-child's: kept as CUSTOM
            run_id = nested.pop()
        out = self._close_text(run_id)
        meta = {META: {"status": event.status, "subagentType": event.subagent_type}}
        if event.status == "completed":
            out.append(
                SubagentFinishedEvent(
                    subagent_run_id=run_id,
                    result=event.result,
                    outcome=SubagentFinishedSuccessOutcome(),
                    metadata=meta,
                    timestamp=self.clock(),
                )
            )
        else:
            out.append(
                SubagentErrorEvent(
                    subagent_run_id=run_id,
                    message=event.result or f"the sub-agent ended: {event.status}",
                    code=event.status,
                    metadata=meta,
                    timestamp=self.clock(),
                )
            )
        return out

    def _permission(self, event: PermissionRequestEvent) -> None:
        self._permission_reasons[_call_key(event.tool, event.input)] = event.reason

    def _usage_event(self, event: UsageEvent) -> None:
        if event.is_sub_agent:
            return
        model = self._model or "unknown"
        old = self._usage.get(model) or TokenUsage(model=model, input_tokens=0, output_tokens=0)
        inp = (old.input_tokens or 0) + event.usage.input_tokens
        outp = (old.output_tokens or 0) + event.usage.output_tokens
        self._usage[model] = TokenUsage(
            model=model, input_tokens=inp, output_tokens=outp, total_tokens=inp + outp
        )

    def _custom(self, event: Event) -> CustomEvent:
        if event.type == "model_call" and not event.is_sub_agent:
            self._model = str(getattr(event, "model", ""))
        value = event.model_dump(mode="json")
        return CustomEvent(
            name=f"skilldeck.{event.type}",
            value=value,
            subagent_run_id=self._scope(event),
            timestamp=self.clock(),
        )

    # ---- the end of the run -------------------------------------------------------

    def _done(self, event: DoneEvent, pending: Sequence[WaitingCall] | None) -> list[BaseEvent]:
        self.finished = True
        out: list[BaseEvent] = [*self._close_all_text(), self._custom(event)]
        usage = list(self._usage.values()) or None
        now = self.clock()
        if event.status == "error":
            out.append(
                RunErrorEvent(
                    message=event.reason or "the run failed",
                    code="error",
                    usage=usage,
                    timestamp=now,
                )
            )
            return out
        if event.status == "paused" and not self.interrupt_on_pause:
            outcome: Any = RunFinishedSuccessOutcome()
        elif event.status == "paused":
            calls = list(pending) if pending else self._unanswered_calls()
            if calls:
                outcome = RunFinishedInterruptOutcome(interrupts=interrupts_for(calls))
            else:  # nothing to answer: report it as a plain end rather than an empty interrupt
                outcome = RunFinishedSuccessOutcome()
        elif event.status == "cancelled":
            outcome = RunFinishedCancelledOutcome()
        else:
            outcome = RunFinishedSuccessOutcome()
        out.append(
            RunFinishedEvent(
                thread_id=self.thread_id,
                run_id=self.run_id,
                result={"status": event.status, "reason": event.reason, "text": event.text},
                outcome=outcome,
                usage=usage,
                timestamp=now,
            )
        )
        return out

    def _unanswered_calls(self) -> list[PendingCall]:
        calls = []
        for call_id, call in self._calls.items():
            if call.scope is not None:
                continue
            if call.name == QUESTION_TOOL:
                questions = [q for q in call.input.get("questions", []) if isinstance(q, dict)]
                calls.append(
                    PendingCall(call_id, "question", call.name, call.input, questions=questions)
                )
            else:
                reason = self._permission_reasons.get(_call_key(call.name, call.input), "")
                calls.append(PendingCall(call_id, "permission", call.name, call.input, reason))
        return calls


def _call_key(tool: str, tool_input: Mapping[str, Any]) -> str:
    return tool + "\0" + json.dumps(tool_input, sort_keys=True, default=str)


_HANDLERS: dict[str, Callable[[AguiMapper, Any], list[BaseEvent] | None]] = {
    "text_delta": AguiMapper._text_delta,
    "text": AguiMapper._text,
    "tool_call": AguiMapper._tool_call,
    "tool_result": AguiMapper._tool_result,
    "subagent_start": AguiMapper._subagent_start,
    "subagent_end": AguiMapper._subagent_end,
    "permission_request": lambda m, e: m._permission(e),
    "usage": lambda m, e: m._usage_event(e),
}
