"""Opening a run's session: a new one, one continued with a new message, or one
loaded to be resumed.

* a **new** session gets its system prompt (made for its task), what it starts with
  (preloaded skills, made in its own tool context so its gate vets their dynamic
  context), the caller's preload and the user's message — stored in one row set,
  with the owner (pid, host) in its metadata;
* a **continued** session must not be waiting for a human;
* a session is **loaded** only when no live process on this host still runs it, and
  a completed one has nothing to resume.

Every user message may be preceded by a skill hint (a separate message marked
:data:`HINT_META`) when the agent has a hinter and it finds one.
"""

from __future__ import annotations

import copy
import os
import socket
from collections.abc import Sequence
from typing import TYPE_CHECKING

from skilldeck.agent.context import History
from skilldeck.agent.events import SkillHintEvent
from skilldeck.agent.pending import Pending, resume_command
from skilldeck.agent.recorder import RunState, owner
from skilldeck.agent.store import TurnWrite, new_session_id, process_alive
from skilldeck.errors import SessionError
from skilldeck.llm.messages import Message, SystemMessage, UserMessage

if TYPE_CHECKING:
    from skilldeck.agent.loop import Agent

__all__ = ["HINT_META", "continue_session", "load_session", "start_session", "user_turn"]

#: the ``meta`` of a skill-hint message (the loop and trigger evals tell it apart)
HINT_META = "skill-hint"


async def start_session(agent: Agent, task: str, preload: Sequence[Message]) -> RunState:
    """A new session for ``task``, stored with its first messages."""
    sid = new_session_id()
    run = RunState(sid, History(), agent.tool_context(sid, copy.deepcopy(agent.initial_state)))
    prompt = agent.system_prompt
    system = prompt(task) if callable(prompt) else prompt
    startup = await agent.startup(run.ctx) if agent.startup is not None else []
    first = [SystemMessage(content=system), *startup, *preload, *user_turn(agent, run, task)]
    agent.store.create(
        session_id=sid,
        model=agent.model_spec,
        agent=agent.name,
        cwd=agent.cwd,
        task=task,
        messages=[(m, None) for m in first],
        metadata={**agent.metadata, **owner()},
        parent_id=agent.parent_session,
    )
    run.history.extend(first)
    return run


def continue_session(
    agent: Agent, session_id: str, task: str, preload: Sequence[Message]
) -> RunState:
    """``session_id`` with ``task`` appended as the next user message."""
    run = load_session(agent, session_id, resuming=False)
    if run.pending is not None:
        what = "approval" if run.pending.needs_approval() else "an answer"
        raise SessionError(
            f"Session {run.session_id} is paused waiting for {what}; reply first with "
            f"`{resume_command(run.session_id, run.pending)}` (Python: agent.resume("
            "session_id, answer=... or approve=True/False)), then send the next message."
        )
    new = [*preload, *user_turn(agent, run, task)]
    rows = [(m, None) for m in new]
    agent.store.commit(run.session_id, TurnWrite(messages=rows, status="running", metadata=owner()))
    run.history.extend(new)
    return run


def load_session(agent: Agent, session_id: str, *, resuming: bool) -> RunState:
    """The stored session's run state (history, tool state, a pending pause).
    SessionError when another live process on this host runs it, or when
    ``resuming`` a completed one."""
    record = agent.store.get(session_id)
    pid = record.metadata.get("pid")
    if (
        record.status == "running"
        and isinstance(pid, int)
        and pid != os.getpid()
        and record.metadata.get("host") == socket.gethostname()
        and process_alive(pid)
    ):
        raise SessionError(f"Session {record.id} is still running in process {pid}.")
    if resuming and record.status == "completed":
        raise SessionError(
            f"Session {record.id} is completed; there is nothing to resume. "
            f"Continue the conversation with `skilldeck chat --session {record.id}`."
        )
    ctx = agent.tool_context(record.id, record.state)
    history = History(counter=agent.context.counter)
    history.extend(agent.store.load_messages(record.id))
    run = RunState(record.id, history, ctx)
    run.pending = Pending.from_dict(record.pending) if record.pending else None
    return run


def user_turn(agent: Agent, run: RunState, text: str) -> list[Message]:
    """The user's message, preceded by a skill hint when the hinter has one."""
    run.ctx.state["user_message"] = text  # code skills read the latest request
    hint = agent.hinter(text) if agent.hinter is not None else None
    if not hint:
        return [UserMessage(content=text)]
    hint_text, names = hint
    agent.recorder.emit(run, SkillHintEvent(skills=names))
    return [UserMessage(content=hint_text, meta=HINT_META), UserMessage(content=text)]
