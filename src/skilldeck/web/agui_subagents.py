"""Sub-agents in an AG-UI run: which sub-agent run each skilldeck event belongs to.

Everything a sub-agent emits carries its ``subagentRunId`` (its task id); its start
and end become ``SUBAGENT_STARTED`` and ``SUBAGENT_FINISHED`` (or ``SUBAGENT_ERROR``),
tied to the parent's ``Task`` call. A grand-child reaches us re-tagged with its
parent's task id (the sub-agent layer forwards a child's events under its own id), so
a foreground one gets a run id of its own here (``<parent id>/<n>``), nested under its
parent's ``Task`` call, and the events tagged with the parent's id between its start
and its end are its own (the parent waits on its ``Task`` call meanwhile).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ag_ui.core import (
    BaseEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentFinishedSuccessOutcome,
    SubagentStartedEvent,
)

from skilldeck.agent.events import Event, SubagentEndEvent, SubagentStartEvent
from skilldeck.web.interrupts import META

__all__ = ["TASK_TOOLS", "SubagentRuns"]

#: tools whose call spawns a sub-agent (``Agent`` is Claude Code's alias of ``Task``)
TASK_TOOLS = frozenset({"Task", "Agent"})


@dataclass
class SubagentRuns:
    """The sub-agent runs of one AG-UI run: the ``Task`` calls waiting for their
    sub-agent, and the foreground grand-children open under each re-tagged task id."""

    clock: Callable[[], int]
    #: the run's counter (shared with its message ids, so every id stays unique)
    next_number: Callable[[], int]
    #: per scope (None: the run itself), the Task calls whose sub-agent has not started
    _unanswered_tasks: dict[str | None, list[str]] = field(default_factory=dict)
    #: per re-tagged task id, the open foreground grand-children (innermost last)
    _nested: dict[str, list[str]] = field(default_factory=dict)

    def scope(self, event: Event) -> str | None:
        """The sub-agent run ``event`` belongs to (None: the run itself)."""
        if not event.is_sub_agent:
            return None
        nested = self._nested.get(event.task_id or "")
        return nested[-1] if nested else event.task_id

    def called(self, scope: str | None, call_id: str, tool: str) -> None:
        """A tool call in ``scope``: a ``Task`` call waits for its sub-agent's start."""
        if tool in TASK_TOOLS:
            self._unanswered_tasks.setdefault(scope, []).append(call_id)

    def answered(self, scope: str | None, call_id: str) -> None:
        """A tool result in ``scope``: that call waits for no sub-agent any more."""
        waiting = self._unanswered_tasks.get(scope, [])
        if call_id in waiting:
            waiting.remove(call_id)

    def started(self, event: SubagentStartEvent) -> list[BaseEvent] | None:
        """``SUBAGENT_STARTED`` under the oldest ``Task`` call of its scope still
        waiting; None when the event names no task (it stays a ``CUSTOM`` event)."""
        if not event.task_id:
            return None
        scope = self.scope(event)
        waiting = self._unanswered_tasks.get(scope, [])
        parent_call = waiting.pop(0) if waiting else None
        run_id = event.task_id
        if event.is_sub_agent:  # a grand-child, re-tagged with its parent's task id
            run_id = f"{scope}/{self.next_number()}"
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

    def ended(self, event: SubagentEndEvent) -> tuple[str, BaseEvent] | None:
        """The ended sub-agent run's id and its ``SUBAGENT_FINISHED`` (or
        ``SUBAGENT_ERROR``); None when it stays a ``CUSTOM`` event."""
        if not event.task_id:
            return None
        run_id: str = event.task_id
        if event.is_sub_agent:  # a grand-child's end: the innermost open one
            nested = self._nested.get(event.task_id)
            if not nested:
                return None  # a background grand-child's: kept as CUSTOM
            run_id = nested.pop()
        meta = {META: {"status": event.status, "subagentType": event.subagent_type}}
        if event.status == "completed":
            return run_id, SubagentFinishedEvent(
                subagent_run_id=run_id,
                result=event.result,
                outcome=SubagentFinishedSuccessOutcome(),
                metadata=meta,
                timestamp=self.clock(),
            )
        return run_id, SubagentErrorEvent(
            subagent_run_id=run_id,
            message=event.result or f"the sub-agent ended: {event.status}",
            code=event.status,
            metadata=meta,
            timestamp=self.clock(),
        )
