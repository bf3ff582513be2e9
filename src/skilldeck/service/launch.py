"""The task of one run: its stream opened on a fresh agent and logged until it ends,
and what a paused turn's replies change on that agent before it resumes.

Each run is a task of the service's task group (:func:`drive_new` for a new session,
:func:`drive` for a stored one) that reports itself started once the run's first
event is logged: errors before that (a bad model, a refused resume) reach the caller
of ``start()`` / ``resume()``, later ones are the run's own ``error`` end.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

import anyio.abc

from skilldeck.agent.events import Event, ToolResultEvent
from skilldeck.agent.loop import Agent
from skilldeck.agent.pending import Pending
from skilldeck.agent.permissions.gate import RememberingGate
from skilldeck.agent.store import SessionRecord, SessionStore, TurnWrite
from skilldeck.llm.messages import Model
from skilldeck.service.agents import WatchedStore
from skilldeck.service.live import LiveSession, pump
from skilldeck.service.replies import ReplyPlan, settle

__all__ = ["StreamOpener", "drive", "drive_new", "model_for", "resume_opener"]

#: opens the event stream of one run on its agent
StreamOpener = Callable[[Agent], AsyncIterator[Event]]


def model_for(model: str | Model | None, record: SessionRecord) -> Model | None:
    """The service's model object when the session ran on it (it has no spec
    another process could rebuild it from)."""
    if model is not None and not isinstance(model, str) and model.name == record.model:
        return model
    return None


def resume_opener(
    record: SessionRecord, pending: Pending, plan: ReplyPlan, live: LiveSession, store: SessionStore
) -> StreamOpener:
    """Resume the paused turn with the replies of ``plan`` (applied to the run's agent
    first: see :func:`apply_plan`)."""

    def opener(agent: Agent) -> AsyncIterator[Event]:
        apply_plan(agent, record, pending, plan, live, store)
        return agent.resume_stream(record.id, answer=plan.answer, approve=plan.approve)

    return opener


def apply_plan(
    agent: Agent,
    record: SessionRecord,
    pending: Pending,
    plan: ReplyPlan,
    live: LiveSession,
    store: SessionStore,
) -> None:
    """Settle the replies the loop's one flag cannot carry; remember "always"."""
    if plan.settled:
        calls = {c.id: c for c in pending.calls}
        events: list[Event] = [
            ToolResultEvent(
                id=cid,
                name=calls[cid].name,
                is_error=result.is_error,
                content=agent.context.truncate(result.content)[0],
            )
            for cid, result in plan.settled.items()
        ]
        stored = settle(pending, plan.settled)
        store.commit(record.id, TurnWrite(events=events, set_pending=True, pending=stored))
        live.log.add_stored(events)
    if plan.always and isinstance(agent.gate, RememberingGate):
        ctx = agent.tool_context(record.id)
        ctx.state.update(record.state)
        for call in plan.always:
            agent.gate.remember(call, ctx)


async def drive_new(
    agent: Agent,
    store: WatchedStore,
    prompt: str,
    adopt: Callable[[str], LiveSession],
    service_store: SessionStore,
    *,
    task_status: anyio.abc.TaskStatus[str],
) -> None:
    """Run a new session on ``prompt``; ``adopt`` gives the in-memory state of its id
    once the loop has stored it (before the first event)."""
    with contextlib.ExitStack() as stack:
        stack.callback(store.close)
        stream = agent.run_stream(prompt)
        first = await anext(stream)
        sid = store.created
        assert sid is not None, "the loop stores a new session before its first event"
        live = adopt(sid)
        await pump(live, agent, stream, first, lambda: task_status.started(sid), service_store)


async def drive(
    live: LiveSession,
    agent: Agent,
    store: SessionStore,
    opener: StreamOpener,
    service_store: SessionStore,
    *,
    task_status: anyio.abc.TaskStatus[None],
) -> None:
    """Run a stored session: the stream ``opener`` opens on ``agent``."""
    with contextlib.ExitStack() as stack:
        stack.callback(store.close)
        stream = opener(agent)
        first = await anext(stream)
        await pump(live, agent, stream, first, task_status.started, service_store)
