"""The sessions this process holds in memory, each kept in step with the store.

The store is the truth (another process may have run a session since we last looked):
:meth:`LiveSessions.synced` catches a session's log up with the events stored since,
:meth:`LiveSessions.claim` refuses a session that runs here or in another process,
and :meth:`LiveSessions.forget_idle` lets a quiet session's log leave memory (it is
rebuilt from the store, with the same numbers, when next asked for).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from skilldeck.agent.pending import Pending
from skilldeck.agent.store import SessionRecord, SessionStore, refuse_if_running_elsewhere
from skilldeck.config import Settings
from skilldeck.errors import SessionError
from skilldeck.service.eventlog import EventLog
from skilldeck.service.live import LiveSession
from skilldeck.service.views import SessionSummary, summary_of

__all__ = ["LiveSessions"]


class LiveSessions(dict[str, LiveSession]):
    """The service's sessions in memory, by session id. ``store`` gives the service's
    own store connection (it raises while the service is not open)."""

    def __init__(self, store: Callable[[], SessionStore], settings: Settings) -> None:
        super().__init__()
        self._store = store
        self._settings = settings

    def synced(self, session_id: str) -> LiveSession:
        """The session's in-memory state, its log caught up with the store (events
        another process wrote since) unless a run is going on here."""
        store = self._store()
        sid = store.resolve(session_id)
        live = self.get(sid)
        if live is None:
            live = self[sid] = LiveSession(EventLog(sid))
        live.touched = time.monotonic()
        if not live.busy and not live.tailing:
            newer = store.events(sid, start=live.log.stored)
            if newer:
                live.log.add_stored(newer)
        return live

    def claim(self, session_id: str) -> tuple[SessionRecord, LiveSession]:
        """The session, free to run here: not running here nor in another process."""
        live = self.synced(session_id)
        if live.busy:
            raise SessionError(f"Session {live.log.session_id} is already running here.")
        store = self._store()
        record = store.get(live.log.session_id)
        refuse_if_running_elsewhere(self._settings, record, store)
        return record, live

    def paused(self, session_id: str) -> tuple[SessionRecord, LiveSession, Pending]:
        """The session, free to run here and waiting for replies to a paused turn."""
        record, live = self.claim(session_id)
        if not record.pending:  # (a run that crashed while resuming keeps its pending)
            raise SessionError(
                f"Session {record.id} is not waiting for a reply (status {record.status})."
            )
        return record, live, Pending.from_dict(record.pending)

    def running(self, session_id: str) -> LiveSession | None:
        """The session's in-memory state when a run of it goes on here."""
        live = self.get(session_id)
        return live if live is not None and live.busy else None

    def busy_ids(self) -> list[str]:
        """The sessions a run of this process is being started or going on for."""
        return [sid for sid, live in self.items() if live.busy]

    def summary(self, record: SessionRecord) -> SessionSummary:
        return summary_of(record, running_here=self.running(record.id) is not None)

    def forget_idle(self, before: float) -> None:
        """Drop the logs of sessions not running, not followed, not waiting for more
        replies and not used since ``before``."""
        for sid, live in list(self.items()):
            quiet = not live.busy and live.log.idle() and not live.replies.started()
            if quiet and live.touched < before:
                del self[sid]
