"""One session as the service holds it in memory, and how its runs fill its log.

:func:`pump` logs a run of this process as it goes, then catches up with what the
store recorded that the run's stream did not yield (a cancelled run's ``done``, which
the loop stores as it unwinds). :func:`tail` follows a run of *another* process (a
terminal's ``skilldeck run``) by reading the events it stores, turn by turn, until it
gives up the session's lease.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread

from skilldeck.agent.events import DoneEvent, Event, PermissionRequestEvent, TextDeltaEvent
from skilldeck.agent.loop import Agent
from skilldeck.agent.permissions.gate import Approval, ApprovalRequest
from skilldeck.agent.store import SessionStore
from skilldeck.agent.subagents import SubagentManager
from skilldeck.errors import SessionError
from skilldeck.service.eventlog import EventLog, ends_run
from skilldeck.service.replies import Replies

__all__ = ["TAIL_SECONDS", "ChildWait", "LiveSession", "pump", "tail"]

log = logging.getLogger(__name__)

#: how often a run of another process is looked for in the store
TAIL_SECONDS = 0.25


@dataclass
class ChildWait:
    """A foreground sub-agent's permission request, waiting (in memory, its run still
    going on) for :meth:`SessionService.approve` — a sub-agent's turn cannot be paused
    and stored like a session's own."""

    request: ApprovalRequest
    decision: Approval | None = None
    answered: anyio.Event = field(default_factory=anyio.Event)


@dataclass
class LiveSession:
    """What the service holds in memory for one session it has seen."""

    log: EventLog
    replies: Replies = field(default_factory=Replies)
    #: a run is being started or going on here
    busy: bool = False
    #: a run of another process is being followed through the store
    tailing: bool = False
    scope: anyio.CancelScope | None = None
    finished: anyio.Event = field(default_factory=anyio.Event)
    #: when the service last used it (idle logs are dropped after a while)
    touched: float = field(default_factory=time.monotonic)
    #: its sub-agents' permission requests waiting for a reply, by tool call id
    child_waits: dict[str, ChildWait] = field(default_factory=dict)

    @property
    def session_id(self) -> str:
        return self.log.session_id

    async def ask_for_child(self, request: ApprovalRequest) -> Approval:
        """The approver of this session's foreground sub-agents: wait for a reply."""
        wait = self.child_waits[request.call.id] = ChildWait(request)
        call = request.call  # the run's own events reach the log only after the Task
        self.log.append_live(  # call returns: tell the subscribers now
            PermissionRequestEvent(
                tool=call.name, input=call.input, reason=request.reason, is_sub_agent=True
            )
        )
        try:
            await wait.answered.wait()
        finally:
            del self.child_waits[request.call.id]
        return wait.decision or Approval.DENY


async def pump(
    live: LiveSession,
    agent: Agent,
    stream: AsyncIterator[Event],
    first: Event,
    started: Callable[[], None],
    store: SessionStore,
) -> None:
    """Log the run's events (``first`` already taken) until it ends; ``started`` is
    called once ``first`` is logged. Never raises an ``Exception``: a bug below has
    been recorded as ``error`` by the loop, and the service keeps serving."""
    before, logged = live.log.stored, 0
    if isinstance(agent.subagents, SubagentManager):  # a sub-agent's "ask" waits for
        agent.subagents.approver = live.ask_for_child  # approve(), the agent's pauses
    live.log.begin_run()
    cancelled = False
    try:
        with anyio.CancelScope() as scope:
            live.scope = scope
            live.log.append(first)
            logged += not isinstance(first, TextDeltaEvent)
            started()
            async for event in stream:
                live.log.append(event)
                logged += not isinstance(event, TextDeltaEvent)
        cancelled = scope.cancelled_caught
    except Exception:
        log.exception("session %s: the run failed", live.session_id)
    finally:
        live.scope = None
        with anyio.CancelScope(shield=True):
            await _aclose(stream)
            if cancelled and agent.subagents is not None:
                await anyio.to_thread.run_sync(agent.subagents.cancel_all)
        _end_run(live, store, before, logged)


def _end_run(live: LiveSession, store: SessionStore, before: int, logged: int) -> None:
    sid = live.session_id
    recorded = store.events(sid, start=before)
    for event in recorded[logged:]:
        live.log.append(event)
    last = live.log.history(live.log.last_seq - 1)
    if not last or not ends_run(last[-1].event):  # the run's end was not recorded
        live.log.append_unstored(DoneEvent(session_id=sid, status=store.get(sid).status))
    live.log.end_run(before + len(recorded))
    live.busy = False
    live.replies = Replies()
    live.finished.set()
    live.touched = time.monotonic()


async def tail(live: LiveSession, store: SessionStore) -> None:
    """Follow a run another process is making: its stored events as they come, until
    it no longer holds the session's lease (it paused, finished or died). The caller
    has set ``live.tailing`` and begun a run in the log (subscribers wait for it)."""
    sid = live.session_id
    try:
        while True:
            lease = store.lease(sid)
            newer = store.events(sid, start=live.log.stored)
            live.log.add_stored(newer)
            if lease is None or not lease.blocks():
                break
            await anyio.sleep(TAIL_SECONDS)
    except SessionError:
        log.warning("session %s: stopped following another process's run", sid, exc_info=True)
    finally:
        live.tailing = False
        live.log.end_run(live.log.stored)
        live.touched = time.monotonic()


async def _aclose(stream: AsyncIterator[Event]) -> None:
    close: Callable[[], Awaitable[Any]] | None = getattr(stream, "aclose", None)
    if close is not None:
        await close()
