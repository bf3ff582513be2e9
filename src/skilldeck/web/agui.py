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
  ``SUBAGENT_FINISHED`` (or ``SUBAGENT_ERROR``), tied to the parent's ``Task`` call,
  and everything a sub-agent emits carries its ``subagentRunId``
  (``web/agui_subagents.py``, which also nests grand-children); a sub-agent's own
  ``done`` is a ``CUSTOM`` event: a sub-agent's end never ends the parent's run;
- the run's ``done`` → ``RUN_FINISHED`` (success, cancelled, or an *interrupt* outcome
  built from the pending tool calls when the run paused) or ``RUN_ERROR``
  (``web/agui_outcome.py``); a sub-agent's request waiting for a reply while the run
  goes on → :meth:`AguiMapper.interrupt`;
- every other skilldeck event → ``CUSTOM`` named ``skilldeck.<type>``.

A paused run is continued by a new ``RunAgentInput`` whose ``resume`` entries answer
the interrupts (``web/interrupts.py``). One small state machine: no I/O, no service.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.core.types import RunAgentInput

from skilldeck.agent.events import (
    DoneEvent,
    Event,
    SubagentEndEvent,
    TextDeltaEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from skilldeck.web.agui_outcome import OpenCall, RunTally, end_of_run
from skilldeck.web.agui_subagents import SubagentRuns
from skilldeck.web.interrupts import META, WaitingCall, interrupts_for

__all__ = ["PROTOCOL_VERSION", "AguiMapper"]

PROTOCOL_VERSION = "1.0"


def _now_ms() -> int:
    return int(time.time() * 1000)


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
    _calls: dict[str, OpenCall] = field(default_factory=dict)
    _tally: RunTally = field(default_factory=RunTally)
    _counter: int = 0
    _subagents: SubagentRuns = field(init=False)

    def __post_init__(self) -> None:
        self._subagents = SubagentRuns(clock=self.clock, next_number=self._next_number)

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

    def _next_number(self) -> int:
        self._counter += 1
        return self._counter

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{self.run_id}-{self._next_number()}"

    def _text_delta(self, event: TextDeltaEvent) -> list[BaseEvent]:
        scope = self._subagents.scope(event)
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
        scope = self._subagents.scope(event)
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
        scope = self._subagents.scope(event)
        out = self._close_text(scope)
        self._calls[event.id] = OpenCall(event.name, dict(event.input), scope)
        self._subagents.called(scope, event.id, event.name)
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
        scope = self._subagents.scope(event)
        call = self._calls.pop(event.id, None)
        self._subagents.answered(scope, event.id)
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

    def _subagent_end(self, event: SubagentEndEvent) -> list[BaseEvent] | None:
        ended = self._subagents.ended(event)
        if ended is None:
            return None
        run_id, finished = ended
        return [*self._close_text(run_id), finished]

    def _custom(self, event: Event) -> CustomEvent:
        self._tally.saw(event)
        value = event.model_dump(mode="json")
        return CustomEvent(
            name=f"skilldeck.{event.type}",
            value=value,
            subagent_run_id=self._subagents.scope(event),
            timestamp=self.clock(),
        )

    # ---- the end of the run -------------------------------------------------------

    def _done(self, event: DoneEvent, pending: Sequence[WaitingCall] | None) -> list[BaseEvent]:
        self.finished = True
        out: list[BaseEvent] = [*self._close_all_text(), self._custom(event)]
        waiting: Sequence[WaitingCall] | None = None
        if event.status == "paused" and self.interrupt_on_pause:
            waiting = list(pending) if pending else self._tally.unanswered(self._calls)
        usage = self._tally.usage()
        out.append(
            end_of_run(
                event,
                thread_id=self.thread_id,
                run_id=self.run_id,
                waiting=waiting,
                usage=usage,
                now=self.clock(),
            )
        )
        return out


_HANDLERS: dict[str, Callable[[AguiMapper, Any], list[BaseEvent] | None]] = {
    "text_delta": AguiMapper._text_delta,
    "text": AguiMapper._text,
    "tool_call": AguiMapper._tool_call,
    "tool_result": AguiMapper._tool_result,
    "subagent_start": lambda m, e: m._subagents.started(e),
    "subagent_end": AguiMapper._subagent_end,
    "permission_request": lambda m, e: m._tally.add_permission_request(e),
    "usage": lambda m, e: m._tally.add_usage(e),
}
