"""Background sub-agents: each runs in a worker thread with its own event loop.

``Task(run_in_background=true)`` returns a task id at once; the run waits for a free
slot (``max_concurrent_subagents``, shared with foreground runs), then runs in its
thread (the builder gives it its own session-store connection). ``TaskOutput`` polls
it (:meth:`BackgroundRuns.output`), so a cancelled parent stops waiting, and Ctrl-C
cancels every unfinished one (:meth:`BackgroundRuns.cancel_all`) through its event
loop's token, so each child's session records ``cancelled``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio
import anyio.from_thread
import anyio.lowlevel

from skilldeck.agent.subagents.task_tools import SubagentOutcome

__all__ = ["CANCEL_GRACE_SECONDS", "POLL_SECONDS", "BackgroundRuns"]

#: how often a waiting parent checks a background run (TaskOutput, a free slot)
POLL_SECONDS = 0.05
#: how long cancel_all waits for a cancelled background run to record its status
CANCEL_GRACE_SECONDS = 5.0

#: one background run, to completion (the manager's foreground run, in the thread)
RunChild = Callable[[], Awaitable[SubagentOutcome]]


@dataclass
class _Background:
    thread: threading.Thread
    subagent_type: str = "?"
    done: threading.Event = field(default_factory=threading.Event)
    outcome: SubagentOutcome | None = None
    description: str = ""
    #: set by the worker thread once its event loop runs: how to cancel it from outside
    scope: anyio.CancelScope | None = None
    token: anyio.lowlevel.EventLoopToken | None = None


class BackgroundRuns:
    """The background runs of one sub-agent manager, by task id (finished or not)."""

    def __init__(self, slots: threading.BoundedSemaphore) -> None:
        #: the manager's slots: background and foreground runs count against one limit
        self._slots = slots
        self._runs: dict[str, _Background] = {}

    def start(
        self,
        task_id: str,
        run: RunChild,
        *,
        subagent_type: str,
        description: str,
        announce: Callable[[], None] | None = None,
    ) -> None:
        """Register the run, call ``announce`` (the start event, in the parent's own
        stream before the Task result), then start its thread."""

        async def cancellable() -> SubagentOutcome:
            entry.token = anyio.lowlevel.current_token()
            with anyio.CancelScope() as scope:
                entry.scope = scope
                if entry.outcome is not None:  # cancelled before it started
                    scope.cancel()
                return await run()
            return SubagentOutcome(task_id, subagent_type, "cancelled", "cancelled by the user")

        def work() -> None:
            with self._slots:
                if entry.outcome is not None:  # cancelled while waiting for a slot
                    entry.done.set()
                    return
                try:
                    outcome = anyio.run(cancellable)
                except Exception as e:  # reported to the parent through TaskOutput
                    why = f"{type(e).__name__}: {e}"
                    outcome = SubagentOutcome(task_id, subagent_type, "error", why)
            if entry.outcome is None:
                entry.outcome = outcome
            entry.done.set()

        thread = threading.Thread(target=work, name=f"skilldeck-{task_id}", daemon=True)
        entry = _Background(thread=thread, subagent_type=subagent_type, description=description)
        self._runs[task_id] = entry
        if announce is not None:
            announce()
        thread.start()

    def ids(self) -> list[str]:
        """The background tasks started so far, finished or not."""
        return sorted(self._runs)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._runs

    async def output(self, task_id: str, *, block: bool = True, timeout: float = 600.0) -> str:
        """The run's result, or that it is still running (after waiting up to
        ``timeout`` seconds when ``block``). ``task_id`` must be one of :meth:`ids`."""
        entry = self._runs[task_id]
        deadline = time.monotonic() + timeout
        while block and not entry.done.is_set() and time.monotonic() < deadline:
            await anyio.sleep(POLL_SECONDS)  # polled, so a cancelled parent stops waiting
        if entry.outcome is None:
            return f"Task {task_id} is still running ({entry.description or 'no description'})."
        return entry.outcome.render()

    def cancel_all(self, *, grace: float = CANCEL_GRACE_SECONDS) -> list[str]:
        """Cancel unfinished runs (Ctrl-C). Each child's session records ``cancelled``;
        waits up to ``grace`` seconds in all for them to do so."""
        cancelled = [tid for tid, e in self._runs.items() if not e.done.is_set()]
        for task_id in cancelled:
            entry = self._runs[task_id]
            entry.outcome = SubagentOutcome(
                task_id, entry.subagent_type, "cancelled", "cancelled by the user"
            )
            if entry.scope is not None and entry.token is not None:
                with contextlib.suppress(RuntimeError):  # its event loop already ended
                    anyio.from_thread.run_sync(entry.scope.cancel, token=entry.token)
        deadline = time.monotonic() + grace
        for task_id in cancelled:
            self._runs[task_id].thread.join(max(0.0, deadline - time.monotonic()))
        return cancelled
