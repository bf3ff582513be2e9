"""One ``POST /agui`` request, and the page's re-attach stream, as AG-UI events.

A ``RunAgentInput`` either carries ``resume`` entries (the replies to the interrupts
that ended the previous run: each becomes ``approve`` / ``answer`` on the session
service, and the turn resumes once every waiting call has one) or a new user message
(the last ``user`` message of ``messages``: a new session when the thread is unknown,
else the thread's next message). The events of exactly that run are then read from
the session's event log (numbered: everything after the last number before the run
began) and mapped by :class:`~skilldeck.web.agui.AguiMapper`.

``threadId`` is the session id. A client that names a new thread itself (the official
``@ag-ui/client`` does) gets a new session; its thread id is remembered as an alias of
that session, so its later runs (a resume, the next message) reach the same session.

:func:`attach_events` serves a page (re)opening a session: the stored history, with
the user's messages put back between the runs, then the live events of a run going
on, then — when the session is paused — the interrupts it waits on. The event log
holds no user messages, so each stored user message is placed by its *anchor*: the
message stored just before it (the tool calls or text of an assistant message, a tool
result — each also an event of the log — or the user message before it). It opens the
first run that begins after the run its anchor is in: exact whatever runs ended in
between (an error, a pause, a resume without a new message).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import (
    BaseEvent,
    RunAgentInput,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)

from skilldeck.agent.events import (
    DoneEvent,
    PermissionRequestEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from skilldeck.errors import SessionError, SessionNotFoundError, SkilldeckError
from skilldeck.service import SessionService
from skilldeck.web.agui import AguiMapper
from skilldeck.web.interrupts import CallReply, replies_from_resume

__all__ = ["RunRequestError", "ThreadAliases", "agui_events", "attach_events", "user_text"]

#: at most this many client-chosen thread ids are remembered
MAX_ALIASES = 10_000


class RunRequestError(SkilldeckError):
    """The run input cannot start or resume a run (no message, missing replies…)."""


@dataclass
class ThreadAliases:
    """Client-chosen thread ids of sessions this server created (in memory only)."""

    _ids: dict[str, str] = field(default_factory=dict)

    def session_for(self, thread_id: str) -> str:
        return self._ids.get(thread_id, thread_id)

    def remember(self, thread_id: str, session_id: str) -> None:
        if thread_id and thread_id != session_id:
            if len(self._ids) >= MAX_ALIASES:
                self._ids.pop(next(iter(self._ids)))
            self._ids[thread_id] = session_id


def user_text(run_input: RunAgentInput) -> str:
    """The text of the last user message (text parts joined; other parts ignored)."""
    for message in reversed(run_input.messages):
        if getattr(message, "role", None) != "user":
            continue
        content: Any = getattr(message, "content", "")
        if isinstance(content, str):
            return content
        return "\n".join(
            str(getattr(p, "text", "")) for p in content if getattr(p, "type", "") == "text"
        )
    return ""


async def agui_events(
    service: SessionService, run_input: RunAgentInput, aliases: ThreadAliases
) -> AsyncIterator[BaseEvent]:
    """The AG-UI events of the run ``run_input`` asks for, RUN_STARTED first."""
    mapper = AguiMapper(run_input.thread_id or "", run_input.run_id or uuid.uuid4().hex)
    try:
        session_id, after = await _begin(service, run_input, aliases)
    except SkilldeckError as e:
        yield mapper.started(run_input)
        for event in mapper.error(str(e), code=_code(e)):
            yield event
        return
    mapper.thread_id = session_id
    yield mapper.started(run_input)
    async for item in service.subscribe(session_id, after=after):
        step = item.event
        pending = None
        if isinstance(step, DoneEvent) and not step.is_sub_agent and step.status == "paused":
            pending = service.show(session_id).pending
        for out in mapper.map(step, pending=pending):
            yield out
        for out in _child_waits(service, session_id, step, mapper):
            yield out
        if mapper.finished:
            return
    for out in mapper.error(
        "The run ended without a result (the server is stopping).", "interrupted"
    ):
        yield out


async def _begin(
    service: SessionService, run_input: RunAgentInput, aliases: ThreadAliases
) -> tuple[str, int]:
    """Start or resume the run; the session id and the event number it follows."""
    thread = run_input.thread_id or ""
    if run_input.resume:
        session_id = aliases.session_for(thread)
        detail = service.show(session_id)
        replies, missing = _replies(run_input, detail.pending)
        if missing:
            raise RunRequestError(
                f"Session {detail.summary.id} also waits for replies to the calls "
                f"{', '.join(missing)}: send one resume entry per interrupt."
            )
        for reply in replies:
            if reply.decision is not None:
                await service.approve(detail.summary.id, reply.call_id, reply.decision)
            else:
                await service.answer(detail.summary.id, reply.call_id, reply.answer)
        return detail.summary.id, detail.last_seq
    text = user_text(run_input).strip()
    if not text:
        raise RunRequestError("The run input has no user message and no resume entries.")
    known = _known_session(service, aliases.session_for(thread)) if thread else None
    if known is None:
        session_id = await service.start(text)
        aliases.remember(thread, session_id)
        return session_id, -1
    detail = service.show(known)
    if detail.summary.status == "paused":
        raise RunRequestError(
            f"Session {known} is paused, waiting for a reply: answer its interrupts "
            "(resume entries) before sending a new message."
        )
    await service.send(known, text)
    return known, detail.last_seq


def _child_waits(
    service: SessionService, session_id: str, event: Any, mapper: AguiMapper
) -> list[BaseEvent]:
    """After a sub-agent's permission request: when it waits for a reply (its run
    goes on, in memory), the interrupt that closes this AG-UI run."""
    if not (isinstance(event, PermissionRequestEvent) and event.is_sub_agent):
        return []
    detail = service.show(session_id)
    if not detail.pending or detail.summary.status == "paused":
        return []
    return mapper.interrupt(detail.pending)


def _replies(run_input: RunAgentInput, pending: Sequence[Any]) -> tuple[list[CallReply], list[str]]:
    if not pending:
        raise RunRequestError("The session is not waiting for a reply: there is nothing to resume.")
    try:
        return replies_from_resume(run_input.resume or [], pending)
    except ValueError as e:
        raise RunRequestError(f"Wrong resume entry: {e}.") from e


def _known_session(service: SessionService, thread: str) -> str | None:
    try:
        return service.show(thread).summary.id
    except SessionNotFoundError:
        return None


def _code(error: SkilldeckError) -> str:
    if isinstance(error, SessionNotFoundError):
        return "session_not_found"
    if isinstance(error, (SessionError, RunRequestError)):
        return "bad_request"
    return type(error).__name__


# ---- re-attaching a page to a session -------------------------------------------------


async def attach_events(
    service: SessionService, session_id: str, *, follow: bool = False, history: bool = True
) -> AsyncIterator[BaseEvent]:
    """History (one AG-UI run per stored run, user messages between them), live events
    of a run going on, then the interrupts of a paused session as a last short run.

    With ``follow`` the stream then stays open and carries every later run of the
    session as it happens — the run resumed by a reply from another tab, a message sent
    from another tab (with that message) — until the client leaves or the service
    closes: two tabs on one session see the same thing. Without ``history`` (a page
    that has just read a run of its own) only the later runs are sent."""
    detail = service.show(session_id)
    sid = detail.summary.id
    users, last_anchor = _anchored_users(detail.messages)
    replay = _Replay(sid, users, service)
    if not history:
        replay.next_user, replay.seen[last_anchor] = len(users), 0
        replay.last_seq, replay.live = detail.last_seq, True
        async for out in _follow(replay, service):
            yield out
        return
    async for item in service.subscribe(sid):
        for out in replay.feed(item.seq, item.event):
            yield out
    for out in replay.close():
        yield out
    detail = service.show(sid)
    if detail.summary.status == "paused" and detail.pending:
        mapper = AguiMapper(sid, f"pending-{uuid.uuid4().hex[:8]}")
        yield mapper.started()
        done = DoneEvent(session_id=sid, status="paused", reason=detail.summary.waiting_for)
        for out in mapper.map(done, pending=detail.pending):
            yield out
    if follow:
        replay.live = True
        async for out in _follow(replay, service):
            yield out


async def _follow(replay: _Replay, service: SessionService) -> AsyncIterator[BaseEvent]:
    """Every run of the session after the events ``replay`` has sent, as they come."""
    sid = replay.session_id
    async for item in service.subscribe(sid, after=replay.last_seq, forever=True):
        for out in replay.feed(item.seq, item.event):
            yield out


@dataclass(frozen=True)
class _UserMessage:
    text: str
    #: what the message stored before it was: ("calls", ids), ("tool", id), ("text",
    #: text), ("user", index of that user message), or ("start", "") for the first one
    anchor: tuple[str, Any]


def _anchored_users(
    messages: Sequence[dict[str, Any]],
) -> tuple[list[_UserMessage], tuple[str, Any]]:
    """The user messages with their anchors, and the anchor of a message sent next."""
    users: list[_UserMessage] = []
    anchor: tuple[str, Any] = ("start", "")
    for message in messages:
        role = message.get("role")
        if role == "user":
            users.append(_UserMessage(str(message.get("text", "")), anchor))
            anchor = ("user", len(users) - 1)
        elif role == "tool":
            anchor = ("tool", str(message.get("tool_call_id", "")))
        elif role == "assistant":
            ids = frozenset(str(c.get("id", "")) for c in message.get("tool_calls") or [])
            anchor = ("calls", ids) if ids else ("text", str(message.get("text", "")))
    return users, anchor


@dataclass
class _Replay:
    session_id: str
    users: list[_UserMessage]
    #: read for the session's user messages and pending calls while live, and when a
    #: sub-agent's request is announced (it may wait for a reply now)
    service: SessionService
    mapper: AguiMapper | None = None
    next_user: int = 0
    #: the number of the run being replayed (0: none yet)
    run: int = 0
    #: anchors seen, with the run each was seen in
    seen: dict[tuple[str, Any], int] = field(default_factory=lambda: {("start", ""): 0})
    last_seq: int = -1
    #: set once the history is sent: later runs are live (a pause is an interrupt, and
    #: the user messages are read again from the service as each run begins)
    live: bool = False

    def feed(self, seq: int, event: Any) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        self.last_seq = seq
        if self.mapper is None:
            self.run += 1
            prefix = "live" if self.live else "history"
            self.mapper = AguiMapper(
                self.session_id, f"{prefix}-{seq}", interrupt_on_pause=self.live
            )
            out.append(self.mapper.started())
            if self.live:
                self.users = _anchored_users(self.service.show(self.session_id).messages)[0]
            out += self._users_before_run(seq)
        self._note_anchor(event)
        pending = None
        if self.live and isinstance(event, DoneEvent) and event.status == "paused":
            pending = self.service.show(self.session_id).pending
        out += self.mapper.map(event, pending=pending)
        if event.task_id is None:  # announced, not stored
            out += _child_waits(self.service, self.session_id, event, self.mapper)
        if self.mapper.finished:
            self.mapper = None
        return out

    def _users_before_run(self, seq: int) -> list[BaseEvent]:
        """The user messages whose anchor was seen in an earlier run, in order."""
        out: list[BaseEvent] = []
        while self.next_user < len(self.users):
            user = self.users[self.next_user]
            if self.seen.get(user.anchor, self.run) >= self.run:
                break
            out += _user_message(user.text, f"user-{seq}-{self.next_user}")
            self.seen[("user", self.next_user)] = self.run
            self.next_user += 1
        return out

    def _note_anchor(self, event: Any) -> None:
        if event.is_sub_agent:
            return
        if isinstance(event, ToolCallEvent):
            for key in [k for k in self._call_anchors() if event.id in k[1]]:
                self.seen.setdefault(key, self.run)
        elif isinstance(event, ToolResultEvent):
            self.seen.setdefault(("tool", event.id), self.run)
        elif isinstance(event, TextEvent):
            self.seen.setdefault(("text", event.text), self.run)

    def _call_anchors(self) -> list[tuple[str, Any]]:
        return [u.anchor for u in self.users[self.next_user :] if u.anchor[0] == "calls"]

    def close(self) -> list[BaseEvent]:
        if self.mapper is None:
            return []
        done = DoneEvent(session_id=self.session_id, status="interrupted")
        return self.mapper.map(done)


def _user_message(text: str, message_id: str) -> list[BaseEvent]:
    return [
        TextMessageStartEvent(message_id=message_id, role="user"),
        TextMessageContentEvent(message_id=message_id, delta=text),
        TextMessageEndEvent(message_id=message_id),
    ]
