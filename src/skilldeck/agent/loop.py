"""The agent loop: think → act → observe, until the model stops or a limit is hit.

One turn is a short sequence of named steps (:meth:`Agent._turn`)::

    check limits → build request → call model → record reply → dispatch tools → record

Opening a run's session (new, continued, loaded to resume) and the model call itself
are in ``agent/run/``; what an :class:`Agent` is made of (:class:`AgentParts`) is
decided before it is constructed (``agent/assembly/parts.py``, by the builder).

Every step emits typed events (``agent/events.py``); the turn's messages, events,
usage and tool state are committed to the session store in one transaction
(``agent/recorder.py``). A turn that needs a human (``AskUserQuestion``, an ``ask``
permission with no interactive approver) pauses the session; :meth:`Agent.resume` —
in this process or another — turns the answer into the missing tool results and the
loop goes on.

Model mistakes (bad tool input, unknown tools, failing tools) go back to the model as
error results. A model that cannot be reached ends the run with status ``error``
(resumable). Anything else raised here is a bug in skilldeck and propagates, after
the session is marked ``error`` (or ``cancelled``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from typing import Any

import anyio

from skilldeck.agent.assembly import AgentParts
from skilldeck.agent.context import ContextManager
from skilldeck.agent.dispatch import Dispatcher, Outcome
from skilldeck.agent.events import (
    ContextTrimmedEvent,
    Event,
    TextEvent,
    ToolCallEvent,
    UsageEvent,
)
from skilldeck.agent.loopguard import LoopGuard, recover_text_calls, text_calls_enabled
from skilldeck.agent.pending import Pending, denied_text, format_answer
from skilldeck.agent.permissions.gate import AllowAll, ToolGate
from skilldeck.agent.recorder import (
    Limits,
    Recorder,
    RunResult,
    RunState,
    StoredRow,
    collect_result,
    owner,
)
from skilldeck.agent.run import call_model, continue_session, load_session, start_session
from skilldeck.agent.store import TurnWrite
from skilldeck.agent.subagents import EventSink, flush_sink
from skilldeck.errors import ModelError, SessionError
from skilldeck.llm.messages import AssistantMessage, Message, ToolCall, ToolSpec
from skilldeck.tools.base import ToolContext, ToolResult, ToolServices
from skilldeck.tools.skill_session import TURN_KEY, forget_loads

__all__ = ["Agent"]


class Agent:
    """A model, its tools and a session store, run as a loop. Build with
    ``agent.builder.build`` (a spec and a runtime) or ``build_agent``; it is complete
    when constructed from its :class:`AgentParts`: nothing is attached to it
    afterwards."""

    def __init__(self, parts: AgentParts) -> None:
        model, settings = parts.model, parts.settings
        self.parts = parts
        self.model, self.settings = model, settings
        self.tools, self.store = parts.tools, parts.store
        self.system_prompt, self.cwd, self.name = parts.system_prompt, parts.cwd, parts.name
        self.limits = parts.limits or Limits.from_settings(settings)
        self.gate: ToolGate = parts.gate or AllowAll()
        self.approver, self.hinter, self.skills = parts.approver, parts.hinter, parts.skills
        self.context = parts.context or ContextManager.for_model(model.name, settings)
        self.services = ToolServices.of(parts.services)
        self.metadata = dict(parts.metadata or {})
        self.model_spec = parts.model_spec or model.name
        self.stream_text = parts.stream_text
        #: messages placed after the system prompt of every new session (preloaded skills)
        self.startup = parts.startup
        self.owns_store = parts.owns_store
        #: tool state every new session starts with (a sub-agent inherits its parent's
        #: run-time permission rules this way)
        self.initial_state = dict(parts.initial_state or {})
        #: the session that spawned this agent's sessions (sub-agents), stored as parent_id
        self.parent_session = parts.parent_session
        self.specs = parts.tools.specs()
        self.recorder = Recorder(parts.store, self.context, model.name, parts.on_event)
        self._contexts: dict[str, ToolContext] = {}
        #: the sub-agent manager behind Task/TaskOutput (None: this agent cannot spawn)
        self.subagents = parts.subagents
        #: the composed skill set the agent was built with (``--skill``), if any
        self.composed = parts.composed
        #: the runs whose event stream is open (a caller may stop reading one early)
        self._open_runs: dict[int, RunState] = {}
        self._closed = False

    def close(self) -> None:
        """Close the session store if this agent opened it; the agent cannot run again.
        A run whose stream was left unfinished (a ``break`` out of :meth:`run_stream`)
        is stored ``cancelled`` first, so it does not stay ``running``."""
        for run in list(self._open_runs.values()):
            self.recorder.abandon(run, GeneratorExit())
        self._closed = True
        if self.owns_store:
            self.store.close()

    def _check_open(self) -> None:
        if self._closed:
            raise SessionError(
                f"This agent ({self.name}) is closed (close() or the end of its `with` "
                "block closed its session store); build a new one with build_agent()."
            )

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- public API --------------------------------------------------------------

    async def run_stream(
        self, task: str, *, session_id: str | None = None, preload: Sequence[Message] = ()
    ) -> AsyncGenerator[Event, None]:
        """Run ``task`` (in a new session, or appended to ``session_id``), yielding events.

        ``preload`` messages (e.g. a skill body the user invoked by hand) go just
        before the task. Closing the stream before its ``done`` event (``aclose()``,
        or leaving an ``async with contextlib.aclosing(...)`` block) stores the
        session ``cancelled``, resumable.
        """
        self._check_open()
        if session_id is None:
            run = await start_session(self, task, preload)
        else:
            run = continue_session(self, session_id, task, preload)
        async with contextlib.aclosing(self._drive(run)) as events:
            async for event in events:
                yield event

    async def resume_stream(
        self, session_id: str, *, answer: str | None = None, approve: bool | None = None
    ) -> AsyncGenerator[Event, None]:
        """Continue a paused, interrupted or failed session, yielding events."""
        self._check_open()
        run = load_session(self, session_id, resuming=True)
        if run.pending is not None:
            run.pending.check(run.session_id, answer=answer, approve=approve)
        elif answer is not None or approve is not None:
            raise SessionError(f"Session {run.session_id} is not waiting for an answer.")
        self.store.commit(run.session_id, TurnWrite(status="running", metadata=owner()))
        async with contextlib.aclosing(self._drive(run, resume=(answer, approve))) as events:
            async for event in events:
                yield event

    async def run(
        self, task: str, *, session_id: str | None = None, preload: Sequence[Message] = ()
    ) -> RunResult:
        return await self._collect(self.run_stream(task, session_id=session_id, preload=preload))

    async def resume(
        self, session_id: str, *, answer: str | None = None, approve: bool | None = None
    ) -> RunResult:
        return await self._collect(self.resume_stream(session_id, answer=answer, approve=approve))

    def run_sync(self, task: str, **kwargs: Any) -> RunResult:
        """``run`` for synchronous code: a script, a plain REPL (it starts its own event
        loop). Where an event loop already runs — a Jupyter notebook, an ``async def``
        — use ``await agent.run(task)``: this raises SessionError there."""
        self._check_sync("run")
        return anyio.run(functools.partial(self.run, task, **kwargs))

    def resume_sync(self, session_id: str, **kwargs: Any) -> RunResult:
        """``resume`` for synchronous code (see :meth:`run_sync`)."""
        self._check_sync("resume")
        return anyio.run(functools.partial(self.resume, session_id, **kwargs))

    def _check_sync(self, method: str) -> None:
        self._check_open()
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop running in this thread: the usual case
            return
        raise SessionError(
            f"{method}_sync() cannot start an event loop inside the one running in this "
            f"thread (a Jupyter notebook, an async function): use `await agent.{method}(...)`."
        )

    def tool_context(self, session_id: str, state: Mapping[str, Any] | None = None) -> ToolContext:
        """The tool context of a session (its state: Bash cwd, todos, files read…): the
        one this agent already made for it, or a new one starting from ``state``."""
        return self._contexts.get(session_id) or self._make_ctx(session_id, dict(state or {}))

    # ---- the loop ----------------------------------------------------------------

    async def _drive(
        self, run: RunState, resume: tuple[str | None, bool | None] | None = None
    ) -> AsyncGenerator[Event, None]:
        sink = EventSink(self.recorder, run)
        run.ctx.services.emit_event = sink
        run.guard = LoopGuard.from_settings(self.settings)
        self._open_runs[id(run)] = run
        try:
            if resume is not None and run.pending is not None:
                await self._resolve_pending(run, *resume)
                for event in run.drain():
                    yield event
            while run.status is None:
                async with contextlib.aclosing(self._turn(run)) as turn:
                    async for event in turn:
                        yield event
        except ModelError as e:  # the model is unreachable or out of script: resumable
            self.recorder.finish(run, "error", reason=str(e))
        except BaseException as e:  # GeneratorExit: the caller closed the stream early
            self.recorder.abandon(run, e)
            raise
        finally:
            sink.close()
            self._open_runs.pop(id(run), None)
        for event in run.drain():
            yield event

    async def _turn(self, run: RunState) -> AsyncGenerator[Event, None]:
        flush_sink(run)
        stop = self.limits.reached(run)
        if stop is not None:
            status, reason = stop
            self.recorder.finish(run, status, reason=reason, text=run.last_text())
            return
        request = self._build_request(run)
        call = call_model(
            self.model,
            request,
            self.offered_specs(),
            run=run,
            recorder=self.recorder,
            stream=self.stream_text,
        )
        async with contextlib.aclosing(call):
            async for event in call:
                yield event
        assert run.reply is not None, "_call_model always sets run.reply"
        reply = self._recover_text_calls(run, run.reply)
        self._record_reply(run, reply)
        for event in run.drain():  # text and tool cards show before the tools run
            yield event
        if reply.tool_calls:
            outcomes = await self._dispatch(run, reply.tool_calls)
            self._record_outcomes(run, reply, outcomes, reply_committed=False)
            if run.stuck is not None and run.status is None:
                reason = run.stuck.reason()
                self.recorder.finish(run, "stuck", reason=reason, text=run.last_text())
        else:
            self.recorder.finish(run, "completed", text=reply.text, rows=[(reply, None)])
        for event in run.drain():
            yield event

    def _recover_text_calls(self, run: RunState, reply: AssistantMessage) -> AssistantMessage:
        """A reply that only wrote tool calls as text becomes those calls (small local
        models do this; ``agent/loopguard.py``), recorded as recovered."""
        enabled = text_calls_enabled(self.settings, self.model_spec)
        specs = self.offered_specs()
        recovered = recover_text_calls(reply, specs, run.turn) if enabled else None
        if recovered is None:
            return reply
        run.reply, events = recovered
        for event in events:
            self.recorder.emit(run, event)
        return run.reply

    def offered_specs(self) -> list[ToolSpec]:
        """The tools offered to the model now: all the agent holds, but ``TaskOutput``
        only while a background task exists — small models call it after any tool
        otherwise (23 identical calls in one real run). A forged call still runs and is
        answered with the task ids there are."""
        if self.subagents is not None and self.subagents.background_ids():
            return self.specs
        return [spec for spec in self.specs if spec.name != "TaskOutput"]

    def _build_request(self, run: RunState) -> list[Message]:
        view = self.context.prepare(run.history, self.offered_specs())
        if view.omitted != run.omitted:
            run.omitted = view.omitted
            if view.omitted:  # an earlier skill load may be hidden now: allow it again
                forget_loads(run.ctx.state)
                self.recorder.emit(run, ContextTrimmedEvent(omitted=view.omitted))
        return view.messages

    def _record_reply(self, run: RunState, reply: AssistantMessage) -> None:
        if reply.usage is not None:
            run.usage = run.usage + reply.usage
            run.turn_usage = reply.usage
            self.recorder.emit(run, UsageEvent(turn=run.session_turn + 1, usage=reply.usage))
        if reply.text:
            self.recorder.emit(run, TextEvent(text=reply.text))
        for call in reply.tool_calls:
            self.recorder.emit(run, ToolCallEvent(id=call.id, name=call.name, input=call.input))

    async def _dispatch(self, run: RunState, calls: list[ToolCall]) -> list[Outcome]:
        allowed, refused = list(calls), []
        cap = self.limits.max_tool_calls
        if cap is not None and run.tool_calls + len(calls) > cap:
            allowed = calls[: max(0, cap - run.tool_calls)]
            note = f"Not run: this run reached its limit of {cap} tool calls."
            refused = [Outcome(c, ToolResult.error(note)) for c in calls[len(allowed) :]]
        run.tool_calls += len(allowed)
        run.ctx.state[TURN_KEY] = run.session_turn + 1  # the Skill tool says where it loaded
        outcomes = await self._dispatcher(run).dispatch(allowed) + refused
        emit = functools.partial(self.recorder.emit, run)
        run.stuck = run.guard.check(outcomes, run.session_turn + 1, emit) or run.stuck
        flush_sink(run)  # background sub-agents' events, before the results they led to
        for o in outcomes:
            if o.result is not None:
                self.recorder.emit_result(run, o.call, o.result)
        return outcomes

    def _record_outcomes(
        self,
        run: RunState,
        reply: AssistantMessage,
        outcomes: list[Outcome],
        *,
        reply_committed: bool,
    ) -> None:
        """Commit the turn; when a call waits for a human, pause instead."""
        head: list[StoredRow] = [] if reply_committed else [(reply, None)]
        if any(o.waiting is not None for o in outcomes):
            run.pending = Pending.from_outcomes(outcomes, turn=run.session_turn)
            what = "approval" if run.pending.needs_approval() else "an answer"
            self.recorder.finish(
                run, "paused", reason=f"waiting for {what}", text=reply.text, rows=head
            )
            return
        results = [self.recorder.result_row(o.call, o.result) for o in outcomes if o.result]
        run.pending = None
        self.recorder.commit(run, [*head, *results], clear_pending=reply_committed)

    def _dispatcher(self, run: RunState) -> Dispatcher:
        emit = functools.partial(self.recorder.emit, run)
        wall = self.limits.max_wall_seconds
        deadline = None if wall is None else run.started + wall
        return Dispatcher(self.tools, self.gate, run.ctx, emit, self.approver, deadline=deadline)

    # ---- pause and resume ----------------------------------------------------------

    async def _resolve_pending(
        self, run: RunState, answer: str | None, approve: bool | None
    ) -> None:
        """Turn the human's answer into the paused turn's missing results, in order."""
        pending = run.pending
        assert pending is not None
        dispatcher = self._dispatcher(run)
        outcomes: list[Outcome] = []
        for call in pending.calls:
            if call.id in pending.results:
                outcomes.append(Outcome(call, pending.results[call.id]))
                continue
            waiting = pending.waiting[call.id]
            if waiting.kind != "permission":
                outcome = Outcome(call, ToolResult(format_answer(waiting.payload, answer or "")))
            elif approve:
                run.tool_calls += 1
                outcome = await dispatcher.run_approved(call)
            else:
                outcome = Outcome(call, ToolResult.error(denied_text(waiting.payload)))
            if outcome.result is not None:
                self.recorder.emit_result(run, call, outcome.result)
            outcomes.append(outcome)
        reply = next(m for m in reversed(run.history.messages) if isinstance(m, AssistantMessage))
        self._record_outcomes(run, reply, outcomes, reply_committed=True)

    # ---- sessions (agent/run/open_session.py) ----------------------------------------

    def _make_ctx(self, session_id: str, state: dict[str, Any]) -> ToolContext:
        ctx = ToolContext(
            session_id=session_id,
            workspace=self.cwd,
            settings=self.settings,
            skills=self.skills,
            agent_name=self.name,
            state=state,
            services=ToolServices(tool_gate=self.gate).overlay(self.services),
        )
        self._contexts[session_id] = ctx
        return ctx

    async def _collect(self, stream: AsyncIterator[Event]) -> RunResult:
        return collect_result([event async for event in stream], self.store)
