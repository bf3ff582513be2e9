"""One session's events, numbered, for any number of subscribers.

Why a log and not a queue per subscriber: a subscriber may attach at any moment (a
page reload in the middle of a run) and must see the session's history and then the
live events, without a gap between the two and without seeing an event twice. Every
event the service learns about — read from the store, or yielded by a run — is
appended here once, with the next sequence number of the session; a subscriber asks
for everything after the last number it saw and then waits for more. Nothing is
copied per subscriber, so a slow subscriber never slows the run.

Sequence numbers are per session, only grow, and are derived from the store: the
event stored at position ``i`` of the session's ``events`` table is number
``(i + 1) * STRIDE``, whether it was read from the store or seen live (a live event is
stored in the order it is yielded). Text deltas, which are live only (the store keeps
the whole ``text`` event instead), take the numbers just after the event they follow.
So the numbers a page saw stay valid when the log is rebuilt from the store — after
the service dropped an idle session's log, after a restart, in another process.
The deltas of the latest run stay (a subscriber that attaches just after a fast run
still sees the text stream); when the next run begins, the older runs' deltas leave
the log once every subscriber following it has received them, so a later subscriber
sees their ``text`` events. Their numbers are never reused.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from skilldeck.agent.events import DoneEvent, Event, TextDeltaEvent

__all__ = ["STRIDE", "EventLog", "SessionEvent", "ends_run"]

#: numbers between two stored events, for the text deltas streamed between them
STRIDE = 1 << 20


@dataclass(frozen=True)
class SessionEvent:
    """One event of a session with its sequence number (resume a subscription after it)."""

    seq: int
    session_id: str
    event: Event

    def to_dict(self) -> dict[str, Any]:
        """Plain data: the event's own fields plus ``seq`` and ``session_id``."""
        return {"seq": self.seq, "session_id": self.session_id, **self.event.model_dump()}


def ends_run(event: Event) -> bool:
    """Whether ``event`` is the top-level ``done`` that ends a run (a sub-agent's does not)."""
    return isinstance(event, DoneEvent) and not event.is_sub_agent


class EventLog:
    """The numbered events of one session and who is waiting for the next one.

    Used from one event loop only (the service's); not thread-safe by design.
    """

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._entries: list[SessionEvent] = []
        #: how many stored events the log has numbered (live ones included: they are
        #: stored in this order); deltas since the last one
        self._index = 0
        self._deltas = 0
        #: a run of this session is going on in this process
        self.active = False
        self._changed = anyio.Event()
        self._closed = False
        #: each following subscriber's last delivered number (deltas up to the
        #: smallest one may go)
        self._cursors: dict[int, int] = {}
        self._keys = itertools.count()
        #: deltas numbered up to this belong to runs that ended / that may go
        self._ended_upto = -1
        self._prunable_upto = -1
        self._pruned_upto = -1

    @property
    def stored(self) -> int:
        """How many of the session's stored events the log accounts for."""
        return self._index

    @property
    def last_seq(self) -> int:
        """The number of the newest event (-1: none yet)."""
        return self._entries[-1].seq if self._entries else self._index * STRIDE - 1

    def add_stored(self, events: Sequence[Event]) -> None:
        """Append events read from the store (history another process, or an earlier
        run, wrote), in the store's order."""
        for event in events:
            self.append(event)

    def append(self, event: Event) -> SessionEvent:
        """Append one event and wake the subscribers: a text delta takes the number
        after the previous one; any other event is the session's next stored event."""
        if isinstance(event, TextDeltaEvent):
            self._deltas = min(self._deltas + 1, STRIDE - 2)
            seq = self._index * STRIDE + self._deltas
        else:
            self._index += 1
            self._deltas = 0
            seq = self._index * STRIDE
        return self._add(SessionEvent(seq, self.session_id, event))

    def append_live(self, event: Event) -> SessionEvent:
        """Append an event only subscribers see (the store never will: a sub-agent's
        request waiting for a reply), numbered like a text delta."""
        self._deltas = min(self._deltas + 1, STRIDE - 2)
        return self._add(SessionEvent(self._index * STRIDE + self._deltas, self.session_id, event))

    def append_unstored(self, event: Event) -> SessionEvent:
        """Append an event the store does not hold (the ``done`` of a run whose end
        could not be recorded): numbered after everything, before the next stored one."""
        return self._add(SessionEvent(self._index * STRIDE + STRIDE - 1, self.session_id, event))

    def begin_run(self) -> None:
        """A run begins: the deltas of the runs before it may go."""
        self.active = True
        self._prunable_upto = self._ended_upto
        self._prune()
        self._notify()

    def end_run(self, stored_now: int) -> None:
        """The run is over: subscribers that follow one run finish; its deltas go when
        the next run begins. ``stored_now``: the store's event count for the session
        after the run."""
        self._ended_upto = self.last_seq
        self._index, self._deltas = stored_now, 0
        self.active = False
        self._prune()
        self._notify()

    def close(self) -> None:
        """The service is closing: every subscriber finishes after what it has."""
        self._closed = True
        self._notify()

    def history(self, after: int = -1) -> list[SessionEvent]:
        """The events numbered above ``after`` that the log holds now."""
        start = bisect.bisect_right(self._entries, after, key=lambda e: e.seq)
        return self._entries[start:]

    async def follow(
        self, after: int = -1, *, forever: bool = False
    ) -> AsyncIterator[SessionEvent]:
        """History after ``after``, then live events as they come. Ends once no run is
        going on and everything is delivered (a paused, finished or idle session), or —
        with ``forever`` — only when the service closes (later runs are followed too)."""
        key = next(self._keys)
        self._cursors[key] = after
        try:
            while True:
                changed = self._changed
                batch = self.history(after)
                for entry in batch:
                    yield entry
                    after = self._cursors[key] = entry.seq
                if batch:
                    self._prune()
                    continue  # more may have come while the subscriber worked
                if self._closed or (not self.active and not forever):
                    return
                await changed.wait()
        finally:
            del self._cursors[key]
            self._prune()

    def _prune(self) -> None:
        """Drop the deltas of ended runs that no following subscriber still needs."""
        limit = min([self._prunable_upto, *self._cursors.values()])
        if limit <= self._pruned_upto:
            return
        self._entries = [
            e for e in self._entries if e.seq > limit or not isinstance(e.event, TextDeltaEvent)
        ]
        self._pruned_upto = limit

    def idle(self) -> bool:
        """No run going on and no subscriber following: the log can be dropped (it is
        rebuilt from the store with the same numbers)."""
        return not self.active and not self._cursors

    def _add(self, entry: SessionEvent) -> SessionEvent:
        self._entries.append(entry)
        self._notify()
        return entry

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()
