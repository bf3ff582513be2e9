"""How a run's sub-agents put their events into the parent's event stream.

``Agent`` puts an :class:`EventSink` in ``ctx.services["emit_event"]`` for each run;
``agent/subagents/subagents.py`` hands it to the children it spawns. A foreground child runs in
the parent's thread, so its events are emitted at once; a background child runs in a
worker thread with its own event loop, so its events wait in a queue until the parent
run's next step. The run state is therefore only ever touched by the run's own thread.
"""

from __future__ import annotations

import threading
from collections import deque

from skilldeck.agent.events import Event
from skilldeck.agent.recorder import Recorder, RunState


class EventSink:
    """``ctx.services["emit_event"]`` for one run. Calls from the run's own thread are
    emitted at once; calls from other threads are queued (a deque is thread-safe) and
    emitted by :meth:`flush`. After the run ends, late events are dropped."""

    def __init__(self, recorder: Recorder, run: RunState) -> None:
        self.recorder, self.run = recorder, run
        self.thread = threading.get_ident()
        self.inbox: deque[Event] = deque()
        self.closed = False

    def __call__(self, event: Event) -> None:
        if self.closed:
            return
        if threading.get_ident() == self.thread:
            self.flush()
            self.recorder.emit(self.run, event)
        else:
            self.inbox.append(event)

    def flush(self) -> None:
        while self.inbox and not self.closed:
            self.recorder.emit(self.run, self.inbox.popleft())

    def close(self) -> None:
        self.closed = True
        self.inbox.clear()


def flush_sink(run: RunState) -> None:
    """Emit the queued events of ``run``'s sink (the loop calls it between steps)."""
    sink = run.ctx.services.get("emit_event")
    if isinstance(sink, EventSink):
        sink.flush()
