"""One turn's tool calls: consult the gate, run what is allowed concurrently, in order.

The loop hands the assistant's tool calls to :meth:`Dispatcher.dispatch` and gets back
one :class:`Outcome` per call, in call order. Each outcome is either a finished
``ToolResult`` or a :class:`Waiting` (a human must answer: an ``ask`` decision with no
interactive approver, or a tool's ``PauseRequest`` such as ``AskUserQuestion``).

Gate checks and the interactive approver run one call at a time, in order (a human
answers one question at a time); the calls they allow then run concurrently in an
anyio task group. Whatever a tool raises becomes an error result the model can read:
a tool is a boundary, and one broken tool must not end the run.

A skill loaded with the ``Skill`` tool tells the gate (when it is a
:class:`~skilldeck.agent.permissions.permissions.SkillAwareGate`) which tools it pre-approves and
which it forbids, for the rest of the session.

The dispatcher also hands the tools the session's rules as a question about one path
(``ctx.path_filter``, see :func:`gate_path_filter`): Glob and Grep ask it about every
file and folder they walk, so a ``Read(./secrets/**)`` deny hides ``secrets/`` from a
search of the whole workspace. And it hands them the run's wall-clock deadline.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio

from skilldeck.agent.events import AskUserEvent, Event, PermissionRequestEvent
from skilldeck.agent.permissions import SkillAwareGate
from skilldeck.agent.permissions.gate import (
    DENIED_BY_USER,
    Approval,
    ApprovalRequest,
    Approver,
    RememberingGate,
    ToolGate,
    ask_approver,
)
from skilldeck.llm.messages import ToolCall
from skilldeck.skills.execution import redact, redact_data, remember_stored
from skilldeck.skills.rules import tool_path_key
from skilldeck.tools.base import PathFilter, PathVerdict, ToolContext, ToolRegistry, ToolResult

log = logging.getLogger(__name__)

#: at most this many tool calls of one turn run at the same time
MAX_PARALLEL_TOOLS = 16


def gate_path_filter(gate: ToolGate, ctx: ToolContext) -> PathFilter:
    """``(tool, path) -> PathVerdict``: the gate's decision on ``tool`` called on exactly
    ``path``, so a search is filtered by the same rules (config, flags, skills'
    forbidden tools, the session's learnt rules, sub-agent scopes) as a direct call.

    The gate is asked synchronously (a search walks in a worker thread): its ``check``
    coroutine is driven by hand and, if it truly awaits something, re-run on the event
    loop. Anything that fails is a ``deny``.
    """

    def verdict(tool: str, path: Path) -> PathVerdict:
        key = tool_path_key(tool) or "path"
        call = ToolCall(id="path-filter", name=tool, input={key: str(path)})
        try:
            decision = _check_now(gate, call, ctx)
        except Exception as e:
            return PathVerdict("deny", f"the permission check failed ({type(e).__name__})")
        return PathVerdict(decision.kind, decision.message)

    return verdict


def _check_now(gate: ToolGate, call: ToolCall, ctx: ToolContext) -> Any:
    """The gate's decision without an event loop when its ``check`` never suspends
    (the permission gates); otherwise (it awaits, or needs a loop) on the loop."""
    coro = gate.check(call, ctx)
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    except Exception:
        pass  # e.g. it needs the running loop: ask again there
    coro.close()
    return anyio.from_thread.run(gate.check, call, ctx)


def redact_result(result: ToolResult) -> ToolResult:
    """``result`` with every secret value skilldeck handed to a skill's process shown
    as ``[secret NAME]`` (:mod:`skilldeck.skills.execution.secrets`): the one point
    every tool result passes before the model, the events and the session store see it."""
    content, data = redact(result.content), redact_data(result.data)
    if content is result.content and data is result.data:
        return result
    return replace(result, content=content, data=data)


@dataclass
class Waiting:
    """A call that needs a human: ``kind`` is ``permission`` or a PauseRequest kind."""

    kind: str
    payload: dict[str, Any]
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "payload": self.payload, "reason": self.reason}


@dataclass
class Outcome:
    call: ToolCall
    result: ToolResult | None = None
    waiting: Waiting | None = None


@dataclass
class Dispatcher:
    """Runs tool calls for one session. ``emit`` receives ask/permission events."""

    tools: ToolRegistry
    gate: ToolGate
    ctx: ToolContext
    emit: Callable[[Event], None]
    approver: Approver | None = None
    limiter: anyio.CapacityLimiter = field(
        default_factory=lambda: anyio.CapacityLimiter(MAX_PARALLEL_TOOLS)
    )
    #: ``time.monotonic()`` at which the run's ``max_wall_seconds`` ends (None: never)
    deadline: float | None = None

    def __post_init__(self) -> None:
        self.ctx.path_filter = gate_path_filter(self.gate, self.ctx)
        self.ctx.deadline = self.deadline
        # so redact_result also knows the values of the file store, which tools could read
        remember_stored(getattr(self.ctx.settings, "home", None))

    async def dispatch(self, calls: list[ToolCall]) -> list[Outcome]:
        outcomes = [await self._decide(call) for call in calls]
        to_run = [o for o in outcomes if o.result is None and o.waiting is None]
        if len(to_run) == 1:
            await self._run(to_run[0])
        elif to_run:
            async with anyio.create_task_group() as tg:
                for outcome in to_run:
                    tg.start_soon(self._run, outcome)
        for outcome in outcomes:
            self._note_pause(outcome)
        return outcomes

    async def run_approved(self, call: ToolCall) -> Outcome:
        """Run ``call`` a human approved after a pause (the gate already asked)."""
        outcome = Outcome(call)
        await self._run(outcome)
        self._note_pause(outcome)
        return outcome

    async def _decide(self, call: ToolCall) -> Outcome:
        decision = await self.gate.check(call, self.ctx)
        if decision.kind == "deny":
            return Outcome(call, ToolResult.error(decision.message or DENIED_BY_USER))
        if decision.kind == "ask":
            payload = {"tool": call.name, "input": call.input, **decision.payload}
            self.emit(
                PermissionRequestEvent(tool=call.name, input=call.input, reason=decision.message)
            )
            if self.approver is None:
                return Outcome(call, waiting=Waiting("permission", payload, decision.message))
            request = ApprovalRequest(call, payload, decision.message, self.ctx.session_id)
            answer = await ask_approver(self.approver, request)
            if answer is Approval.DENY:
                return Outcome(call, ToolResult.error(DENIED_BY_USER))
            if answer is Approval.ALWAYS and isinstance(self.gate, RememberingGate):
                self.gate.remember(call, self.ctx)
        if call.name not in self.tools:
            available = ", ".join(sorted(self.tools.names()))
            return Outcome(
                call, ToolResult.error(f"Unknown tool {call.name!r}. Available tools: {available}.")
            )
        return Outcome(call)

    async def _run(self, outcome: Outcome) -> None:
        call = outcome.call
        async with self.limiter:
            try:
                outcome.result = await self.tools.dispatch(call.name, call.input, self.ctx)
            except Exception as e:  # a tool is a boundary: its failure is the model's news
                log.warning("tool %s raised", call.name, exc_info=True)
                outcome.result = ToolResult.error(
                    f"Tool {call.name} failed: {type(e).__name__}: {e}"
                )
        outcome.result = redact_result(outcome.result)
        self._learn_from_skill(outcome)

    def _learn_from_skill(self, outcome: Outcome) -> None:
        """After a skill was loaded: pre-approve its allowed-tools, deny its forbidden."""
        result = outcome.result
        if result is None or result.is_error or not isinstance(result.data, dict):
            return
        tool = self.tools.get(outcome.call.name)
        if tool is None or tool.name != "Skill" or result.data.get("mode") != "loaded":
            return
        if isinstance(self.gate, SkillAwareGate):
            self.gate.preapprove_skill(
                self.ctx,
                [str(t) for t in result.data.get("allowed_tools") or []],
                [str(t) for t in result.data.get("forbidden_tools") or []],
            )

    def _note_pause(self, outcome: Outcome) -> None:
        result = outcome.result
        if result is None or result.pause is None:
            return
        pause = result.pause
        outcome.waiting = Waiting(pause.kind, dict(pause.payload))
        outcome.result = None
        if pause.kind == "ask_user":
            self.emit(AskUserEvent(questions=list(pause.payload.get("questions", []))))
