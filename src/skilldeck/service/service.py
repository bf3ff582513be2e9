"""The session service: many agent sessions in one process, for a web page or a bot.

::

    async with SessionService(model="scripted:demo.jsonl") as service:
        sid = await service.start("Tidy the notes")
        async for item in service.subscribe(sid):
            print(item.seq, item.event.type)

What it guarantees (``docs/service.md``):

* **Many sessions at once**, each run in its own task of one anyio task group with a
  fresh agent (``service/launch.py``); all share the service's settings and skill
  registry, which hold no session's state; the sessions held in memory are kept in
  step with the store (``service/sessions.py``).
* **Any number of subscribers per session**, attaching at any time: the history
  (stored events), then live events, numbered, without gaps or duplicates
  (``service/eventlog.py``).
* **Pauses are ordinary ends of a run** (status ``paused``); :meth:`approve` and
  :meth:`answer` collect the replies and resume the turn once every waiting call has
  one (``service/replies.py``).
* **Cancel** stops a run at its next await; the loop records ``cancelled`` and the
  session stays resumable — here or with ``skilldeck resume``.
* **The store is the truth**: a session paused or interrupted by another process
  (``skilldeck run`` in a terminal) is resumed here from its launch record, and one
  paused here resumes with ``skilldeck resume``. The store lets one process at a time
  run a session (its lease), so a session running here cannot be resumed elsewhere.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from types import TracebackType

import anyio
import anyio.abc
import anyio.lowlevel
import anyio.to_thread

from skilldeck.agent.pending import Pending
from skilldeck.agent.permissions.gate import Approval
from skilldeck.agent.spec import Scan, names_of
from skilldeck.agent.store import SessionRecord, SessionStore
from skilldeck.config import Settings, load_settings
from skilldeck.errors import SessionError
from skilldeck.llm.messages import Model
from skilldeck.service.agents import (
    AgentOptions,
    WatchedStore,
    new_session_agent,
    stored_session_agent,
)
from skilldeck.service.eventlog import EventLog, SessionEvent
from skilldeck.service.launch import StreamOpener, drive, drive_new, model_for, resume_opener
from skilldeck.service.live import LiveSession, tail
from skilldeck.service.replies import Answer, Decision, Replies, how_to_reply
from skilldeck.service.sessions import LiveSessions
from skilldeck.service.views import (
    SessionDetail,
    SessionSummary,
    child_calls,
    message_view,
    pending_calls,
)
from skilldeck.skills.discovery.roots import RootPaths, root_paths
from skilldeck.skills.registry import SkillRegistry

__all__ = ["SessionService"]

log = logging.getLogger(__name__)

#: seconds between two refreshes of the leases of the sessions running here
HEARTBEAT_SECONDS = 15.0
#: seconds after which the log of a session nobody runs or follows leaves memory
#: (rebuilt from the store, with the same numbers, when next asked for)
IDLE_SECONDS = 60.0


class SessionService:
    """Runs, streams, pauses, resumes and cancels agent sessions; use ``async with``.

    ``settings`` (default: loaded for ``cwd``), ``registry`` (default: discovered from
    the settings, ``roots`` and ``no_defaults``), ``model`` (``provider:model`` or a
    ``Model``; default: the configured one), ``permission_mode`` and ``cwd`` are the
    defaults of every session :meth:`start` starts.
    """

    def __init__(
        self,
        *,
        settings: Settings | None = None,
        registry: SkillRegistry | None = None,
        model: str | Model | None = None,
        permission_mode: str | None = None,
        cwd: Path | None = None,
        roots: RootPaths = (),
        no_defaults: bool = False,
    ) -> None:
        self.cwd = (cwd or Path.cwd()).resolve()
        self.settings = settings or load_settings(workspace=self.cwd)
        self.scan = Scan(root_paths(roots), no_defaults)
        self.registry = registry or SkillRegistry.discover(
            self.settings, roots=self.scan.roots, no_defaults=no_defaults
        )
        self.model = model
        self.permission_mode = permission_mode
        self._live = LiveSessions(lambda: self.store, self.settings)
        #: sessions started by this service (their agents may share the registry)
        self._ours: set[str] = set()
        self._store: SessionStore | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._heartbeat = anyio.CancelScope()

    # ---- lifetime ------------------------------------------------------------------

    async def __aenter__(self) -> SessionService:
        self._store = SessionStore.open(self.settings)
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._beat)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        """Cancels every run still going on (each is stored ``cancelled``, resumable)
        and stops following other processes' runs."""
        self._heartbeat.cancel()
        for live in self._live.values():
            if live.scope is not None:
                live.scope.cancel()
        try:
            assert self._tg is not None
            await anyio.lowlevel.checkpoint()  # the runs record their cancellation
            self._tg.cancel_scope.cancel()  # then the rest: tails of other processes
            return await self._tg.__aexit__(exc_type, exc, tb)
        finally:
            for live in self._live.values():
                live.log.close()
            if self._store is not None:
                self._store.close()
            self._tg = self._store = None

    @property
    def store(self) -> SessionStore:
        """The service's own store connection (reads, and the writes of replies)."""
        if self._store is None:
            raise SessionError("The session service is not open: use `async with service:`.")
        return self._store

    # ---- runs ----------------------------------------------------------------------

    async def start(
        self,
        prompt: str,
        *,
        model: str | Model | None = None,
        skills: Sequence[str] = (),
        permission_mode: str | None = None,
        allow: Sequence[str] = (),
        ask: Sequence[str] = (),
        deny: Sequence[str] = (),
        agent: str | None = None,
        max_turns: int | None = None,
        cwd: Path | None = None,
    ) -> str:
        """Start a new session on ``prompt``; returns its id once the session is stored
        (the run goes on in the background: :meth:`subscribe` to see it). Raises what
        building the agent raises (ConfigError, PolicyError, SkillNotFoundError…)."""
        options = AgentOptions(
            model=model or self.model,
            skills=names_of(skills, "skills"),
            permission_mode=permission_mode or self.permission_mode,
            allow=names_of(allow, "allow"),
            ask=names_of(ask, "ask"),
            deny=names_of(deny, "deny"),
            agent=agent,
            max_turns=max_turns,
            cwd=Path(cwd or self.cwd).resolve(),
        )
        store = WatchedStore(self.settings.sessions_db)
        try:
            built = new_session_agent(
                options, settings=self.settings, registry=self.registry, store=store, scan=self.scan
            )
        except BaseException:
            store.close()
            raise
        sid: str = await self._task_group.start(
            drive_new, built, store, prompt, self._adopt, self.store
        )
        return sid

    async def send(self, session_id: str, prompt: str) -> None:
        """Continue a session that is not running nor paused with a new user message
        (a chat's next message). Raises SessionError when it is running or paused (a
        paused one is continued by :meth:`approve` / :meth:`answer`)."""
        record, live = self._live.claim(session_id)
        if record.pending:
            raise SessionError(
                f"Session {record.id} is paused waiting for a reply; give it with "
                f"{how_to_reply(record.id, Pending.from_dict(record.pending))} — the run "
                "resumes once every waiting call has one — then send the next message."
            )
        await self._begin(record, live, lambda a: a.run_stream(prompt, session_id=record.id))

    async def resume(self, session_id: str) -> None:
        """Resume an interrupted, cancelled or failed session (one paused waiting for a
        human is resumed by :meth:`approve` / :meth:`answer`)."""
        record, live = self._live.claim(session_id)
        if record.pending:
            Pending.from_dict(record.pending).check(record.id, answer=None, approve=None)
        await self._begin(record, live, lambda a: a.resume_stream(record.id))

    async def approve(self, session_id: str, call_id: str, decision: Decision | str) -> bool:
        """Reply to a permission request of a paused turn: ``allow`` (once), ``always``
        (and for the rest of the session) or ``deny``. Returns True when that was the
        last reply the turn waited for and the run resumed."""
        decision = Decision.parse(decision)
        child = self._live.get(self.store.resolve(session_id))
        wait = child.child_waits.get(call_id) if child is not None else None
        if wait is not None:  # a sub-agent's request: its run goes on at once
            wait.decision = Approval(str(decision))
            wait.answered.set()
            return True
        record, live, pending = self._live.paused(session_id)
        live.replies.add_decision(record.id, pending, call_id, decision)
        return await self._resume_if_complete(record, live, pending)

    async def answer(self, session_id: str, call_id: str, answer: Answer) -> bool:
        """Reply to an ``AskUserQuestion`` of a paused turn: text, one answer per
        question (a list), or answers keyed by question text or header (a list value
        for multiSelect). Returns True when the run resumed."""
        record, live, pending = self._live.paused(session_id)
        live.replies.add_answer(record.id, pending, call_id, answer)
        return await self._resume_if_complete(record, live, pending)

    async def cancel(self, session_id: str) -> bool:
        """Stop the session's run (stored ``cancelled``, resumable; its background
        sub-agents are cancelled too). False when it was not running here."""
        live = self._live.get(self.store.resolve(session_id))
        if live is None or live.scope is None:
            return False
        live.scope.cancel()
        await live.finished.wait()
        return True

    async def wait(self, session_id: str) -> str:
        """Wait until the session's run here (if any) ends; its stored status."""
        sid = self.store.resolve(session_id)
        live = self._live.running(sid)
        if live is not None:
            await live.finished.wait()
        return self.store.get(sid).status

    def running(self, session_id: str) -> bool:
        """Whether a run of the session is going on in this service."""
        return self._live.running(self.store.resolve(session_id)) is not None

    # ---- subscribers and views --------------------------------------------------------

    def subscribe(
        self, session_id: str, *, after: int = -1, forever: bool = False
    ) -> AsyncIterator[SessionEvent]:
        """The session's events numbered above ``after``: its history, then live ones.
        Ends after the ``done`` event of the run going on (at once when none is), or
        with ``forever`` when the service closes. A run another process is making is
        followed through the store (turn by turn: no text deltas). Raises
        SessionNotFoundError now."""
        live = self._live.synced(session_id)
        if not live.busy and not live.tailing:
            lease = self.store.lease(live.session_id)
            if lease is not None and lease.blocks():
                live.tailing = True
                live.log.begin_run()
                self._task_group.start_soon(tail, live, self.store)
        return live.log.follow(after, forever=forever)

    def list(self, *, limit: int = 50, status: str | None = None) -> list[SessionSummary]:
        """Sessions, most recently updated first (top-level ones only: not sub-agents')."""
        records = self.store.list(limit=max(limit * 4, limit), status=status)
        out = [self._live.summary(r) for r in records if r.parent_id is None]
        return out[:limit]

    def show(self, session_id: str) -> SessionDetail:
        """One session: summary, calls waiting for a reply, conversation, todos."""
        live = self._live.synced(session_id)
        record = self.store.get(live.log.session_id)
        pending = Pending.from_dict(record.pending) if record.pending else None
        messages = [m for m in map(message_view, self.store.messages(record.id)) if m]
        waiting = pending_calls(pending) if pending and record.status == "paused" else []
        return SessionDetail(
            summary=self._live.summary(record),
            pending=waiting or child_calls(live.child_waits.values()),
            messages=messages,
            todos=self.store.todos(record.id),
            last_seq=live.log.last_seq,
        )

    # ---- internals -----------------------------------------------------------------------

    @property
    def _task_group(self) -> anyio.abc.TaskGroup:
        if self._tg is None:
            raise SessionError("The session service is not open: use `async with service:`.")
        return self._tg

    async def _beat(self) -> None:
        """Refresh the leases of the sessions running here, so another host's process
        never takes one over as stale (on this host a live pid is enough)."""
        with self._heartbeat:
            while True:
                await anyio.sleep(HEARTBEAT_SECONDS)
                with contextlib.suppress(SessionError):
                    self.store.renew_leases(self._live.busy_ids())
                self._live.forget_idle(time.monotonic() - IDLE_SECONDS)

    async def _resume_if_complete(
        self, record: SessionRecord, live: LiveSession, pending: Pending
    ) -> bool:
        if not live.replies.complete(pending):
            return False
        plan = live.replies.plan(pending)
        live.replies = Replies()
        await self._begin(record, live, resume_opener(record, pending, plan, live, self.store))
        return True

    async def _begin(self, record: SessionRecord, live: LiveSession, opener: StreamOpener) -> None:
        """Build the stored session's agent and start a run on it; returns once the run
        has produced its first event (errors before that are raised here)."""
        live.busy, live.finished = True, anyio.Event()
        store = SessionStore(self.settings.sessions_db)
        try:
            agent = stored_session_agent(
                record,
                settings=self.settings,
                store=store,
                registry=self.registry if record.id in self._ours else None,
                model=model_for(self.model, record),
            )
            await self._task_group.start(drive, live, agent, store, opener, self.store)
        except BaseException:
            live.busy = False
            store.close()
            raise

    def _adopt(self, session_id: str) -> LiveSession:
        """The in-memory state of a session this service has just started."""
        self._ours.add(session_id)
        live = self._live[session_id] = LiveSession(EventLog(session_id), busy=True)
        return live
