"""Sub-agents: :class:`SubagentManager` behind the ``Task`` tool (alias ``Agent``) and
``TaskOutput`` — ``spawn()`` in the foreground, ``spawn_background()`` in a thread.

A sub-agent starts from its own system prompt and the prompt alone — never the
parent's history — and holds only tools its parent holds. Its plan (type, skills,
tools, gate, depth) is decided and refused up front in ``agent/subagents/planning.py``;
background runs live in ``agent/subagents/background.py``; the two tools in
``agent/subagents/task_tools.py``. Here: the manager that ties them together, builds
each child through the ``AgentFactory`` it was given (``agent.builder.build``: this
module never imports the builder), and holds a child to its skills' output contract.

* every call of the child still passes the parent's gate (its deny rules, asks and
  the parent's own skill policy), so nothing a child does escapes the parent's rules;
  the child also starts with the rules its parent's session learnt at run time (a
  loaded skill's forbidden tools stay forbidden for the children it spawns);
* at most ``max_concurrent_subagents`` (default 4) children run at once;
* a child whose type has ``permission-mode: plan`` runs read-only: its gate says so,
  and its ``Skill`` tool loads text but runs no script, code or ``!`cmd```;
* the child's session records its type, depth, tools and whole gate (its own
  policies and the parent's rules: ``agent/store/launch.py``), so ``resume`` rebuilds that
  child and never a top-level agent with every tool.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import anyio

from skilldeck.agent.events import Event, SubagentEndEvent, SubagentStartEvent
from skilldeck.agent.permissions.gate import AllowAll, Approver, ToolGate
from skilldeck.agent.recorder import RunResult
from skilldeck.agent.spec import AgentFactory, Runtime, Scan
from skilldeck.agent.store import SessionStore
from skilldeck.agent.subagents.background import CANCEL_GRACE_SECONDS, POLL_SECONDS, BackgroundRuns
from skilldeck.agent.subagents.definitions import AgentCatalog, AgentDefinition
from skilldeck.agent.subagents.planning import Plan, child_spec, plan_child, refuse_user_only
from skilldeck.agent.subagents.task_tools import (
    ParentSession,
    SpawnOptions,
    SubagentOutcome,
    check_contract,
)
from skilldeck.agent.toolset import SPAWNING
from skilldeck.config import Settings
from skilldeck.errors import ConfigError, SkilldeckError, ToolError
from skilldeck.llm.messages import Model
from skilldeck.skills.policy.policy import ComposedSkill
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import ToolRegistry

if TYPE_CHECKING:
    from skilldeck.agent.loop import Agent

__all__ = ["SPAWN_TOOLS", "SubagentManager"]

#: the spawning tools (the one set: ``toolset.SPAWNING``); kept under its old name
SPAWN_TOOLS = SPAWNING


def _start_event(
    plan: Plan, task_id: str, description: str, *, background: bool
) -> SubagentStartEvent:
    return SubagentStartEvent(
        task_id=task_id,
        subagent_type=plan[0].name,
        description=description,
        background=background,
    )


class SubagentManager:
    """Spawns sub-agents for one parent agent. ``depth`` is the parent's depth."""

    def __init__(
        self,
        *,
        settings: Settings,
        parent_tools: ToolRegistry,
        catalog: AgentCatalog,
        registry: SkillRegistry | None,
        model_factory: Callable[[str | None], Model],
        parent_gate: ToolGate | None = None,
        depth: int = 0,
        store: SessionStore | None = None,
        approver: Approver | None = None,
        scan: dict[str, Any] | None = None,
        agent_factory: AgentFactory | None = None,
    ) -> None:
        self.settings = settings
        self.parent_tools = parent_tools
        self.catalog = catalog
        self.registry = registry
        self.model_factory = model_factory
        self.parent_gate: ToolGate = parent_gate or AllowAll()
        self.depth = depth
        self.store = store
        #: asks a human for a foreground child's ``ask`` decisions (background ones pause)
        self.approver = approver
        #: how ``registry`` was discovered (roots, no_defaults): kept with each child's
        #: session so a resumed child finds the same skills
        self.scan = dict(scan or {"roots": [], "no_defaults": False})
        #: builds each child from its spec (``agent.builder.build``): this module never
        #: imports the builder
        self.agent_factory = agent_factory
        #: foreground task ids and how they ended: TaskOutput on one says it already returned
        self._foreground: dict[str, str] = {}
        self._ids = itertools.count(1)
        self._slots = threading.BoundedSemaphore(max(1, settings.agent.max_concurrent_subagents))
        self._background = BackgroundRuns(self._slots)

    # ---- planning ----------------------------------------------------------------

    def plan(self, subagent_type: str, skills: Sequence[str]) -> Plan:
        """Resolve the type, validate and compose skills, and decide the child's tools
        (``agent/subagents/planning.py``).

        Raises PolicyError (invalid skill set) or SkillNotFoundError (unknown type).
        """
        definition = self.catalog.get(subagent_type)
        refuse_user_only(self.registry, skills)
        return plan_child(
            self.settings,
            self.registry,
            definition,
            self.parent_tools,
            depth=self.depth,
            skills=skills,
        )

    def _new_task_id(self) -> str:
        """``task_1``, ``task_2``… per manager: short for a model to repeat in TaskOutput,
        and predictable for scripted runs. Nested managers prefix their parent's depth."""
        prefix = "task" if self.depth == 0 else f"task{self.depth}"
        return f"{prefix}_{next(self._ids)}"

    # ---- running -----------------------------------------------------------------

    def _child_agent(
        self,
        plan: Plan,
        *,
        model: str | None,
        background: bool,
        task_id: str,
        emit: Callable[[Event], None] | None,
        parent: ParentSession | None,
    ) -> Agent:
        """The child agent. A background child gets its own store connection (it runs in
        another thread) and no approver (nobody can answer it there: an ``ask`` pauses
        it and the parent gets that as its result)."""
        if self.agent_factory is None:
            raise ConfigError(
                "This SubagentManager has no agent_factory; pass "
                "agent_factory=skilldeck.agent.builder.build to spawn sub-agents."
            )

        def forward(event: Event) -> None:
            if emit is not None:
                emit(event.model_copy(update={"is_sub_agent": True, "task_id": task_id}))

        runtime = Runtime(
            settings=self.settings,
            registry=self.registry,
            store=None if background else self.store,
            approver=None if background else self.approver,
            on_event=forward,
            scan=Scan(
                tuple(Path(r) for r in self.scan.get("roots") or []),
                bool(self.scan.get("no_defaults")),
            ),
        )
        spec = child_spec(
            plan,
            model=self.model_factory(model or plan[0].model),
            parent_tools=self.parent_tools,
            parent_gate=self.parent_gate,
            parent=parent,
            depth=self.depth,
            scan=self.scan,
        )
        return self.agent_factory(spec, runtime)

    def _plan_task(self, options: SpawnOptions) -> tuple[Plan, str]:
        """The plan (refused before anything runs) and a fresh task id."""
        plan = self.plan(options.get("subagent_type", "general-purpose"), options.get("skills", ()))
        return plan, self._new_task_id()

    async def spawn(self, task: str, **options: Unpack[SpawnOptions]) -> SubagentOutcome:
        """Run a sub-agent to completion. Invalid skill sets raise PolicyError first.

        ``parent`` is the spawning session: the child's session points at it, and the
        child starts with the permission rules that session learnt at run time."""
        plan, task_id = self._plan_task(options)
        while not self._slots.acquire(blocking=False):  # polled: Ctrl-C must not wait
            await anyio.sleep(POLL_SECONDS)
        try:
            outcome = await self._run(plan, task, task_id, options, background=False)
        finally:
            self._slots.release()
        self._foreground[task_id] = outcome.status
        return outcome

    def spawn_background(self, task: str, **options: Unpack[SpawnOptions]) -> str:
        """Validate now, run in a worker thread, return the task id at once."""
        plan, task_id = self._plan_task(options)
        description = options.get("description", "")
        emit = options.get("emit")

        def announce() -> None:  # in the parent's own stream, before the Task result
            if emit is not None:
                emit(_start_event(plan, task_id, description, background=True))

        self._background.start(
            task_id,
            lambda: self._run(plan, task, task_id, options, background=True),
            subagent_type=plan[0].name,
            description=description,
            announce=announce,
        )
        return task_id

    async def output(self, task_id: str, *, block: bool = True, timeout: float = 600.0) -> str:
        if task_id not in self._background:
            raise ToolError(self._no_such_task(task_id))
        return await self._background.output(task_id, block=block, timeout=timeout)

    def background_ids(self) -> list[str]:
        """The background tasks started so far (finished or not): while there is one,
        the agent offers ``TaskOutput`` to the model."""
        return self._background.ids()

    def _no_such_task(self, task_id: str) -> str:
        """What TaskOutput says for an id that is no background task: which ids exist,
        and that foreground tasks and other tools already returned their results."""
        if task_id in self._foreground:
            return (
                f"{task_id} ran in the foreground and ended {self._foreground[task_id]}; its "
                "result was returned by the Task call that started it. There is nothing to "
                "fetch: use that result."
            )
        known = ", ".join(self._background.ids())
        ids = (
            f"Background task ids: {known}."
            if known
            else "No background task was started (Task with run_in_background=true)."
        )
        done = ", ".join(f"{tid} ({status})" for tid, status in self._foreground.items())
        returned = f" Foreground tasks, already returned by Task: {done}." if done else ""
        return (
            f"No background task {task_id!r}. {ids}{returned} A foreground Task and every "
            "other tool (Write, Bash, Skill…) return their result directly in their own tool "
            "result; TaskOutput has nothing to add for them."
        )

    def cancel_all(self, *, grace: float = CANCEL_GRACE_SECONDS) -> list[str]:
        """Cancel unfinished background runs (Ctrl-C). Each child's session records
        ``cancelled``; waits up to ``grace`` seconds in all for them to do so."""
        return self._background.cancel_all(grace=grace)

    async def _run(
        self, plan: Plan, task: str, task_id: str, options: SpawnOptions, *, background: bool
    ) -> SubagentOutcome:
        definition, _, composed, _ = plan
        emit = options.get("emit")
        if emit is not None and not background:  # a background start was announced
            emit(_start_event(plan, task_id, options.get("description", ""), background=False))
        agent = self._child_agent(
            plan,
            model=options.get("model"),
            background=background,
            task_id=task_id,
            emit=emit,
            parent=options.get("parent"),
        )
        try:
            result = await agent.run(task)
            outcome = await self._enforce_contract(agent, result, composed, definition, task_id)
        except SkilldeckError as e:  # e.g. a preloaded skill refused: the child never ran
            why = f"{type(e).__name__}: {e}"
            outcome = SubagentOutcome(task_id, definition.name, "error", why)
        finally:
            agent.close()
        if emit is not None:
            emit(
                SubagentEndEvent(
                    task_id=task_id,
                    subagent_type=definition.name,
                    status=outcome.status,
                    result=outcome.text[:2000],
                )
            )
        return outcome

    async def _enforce_contract(
        self,
        agent: Agent,
        result: RunResult,
        composed: ComposedSkill | None,
        definition: AgentDefinition,
        task_id: str,
    ) -> SubagentOutcome:
        max_turns = agent.limits.max_turns
        if result.status != "completed":
            status = "max_turns" if result.status == "max_turns" else result.status
            text = result.text or (result.reason or "")
            if result.status == "paused":
                text = f"it stopped waiting for a human ({result.reason}); nothing was approved"
            elif result.status == "stuck":
                text = result.reason or "it repeated the same tool call"
            return SubagentOutcome(
                task_id, definition.name, status, text, result.session_id, max_turns
            )
        contracts = composed.output_contracts if composed else {}
        problems = check_contract(result.text, contracts) if contracts else []
        if problems:
            retry = (
                "Your final answer does not satisfy the output contract:\n"
                + "\n".join(f"- {p}" for p in problems)
                + "\nAnswer again with only the corrected JSON."
            )
            result = await agent.run(retry, session_id=result.session_id)
            problems = check_contract(result.text, contracts)
            if result.status != "completed" or problems:
                detail = "; ".join(problems) or (result.reason or result.status)
                return SubagentOutcome(
                    task_id,
                    definition.name,
                    "contract_failed",
                    f"output contract not met after one retry: {detail}",
                    result.session_id,
                    max_turns,
                )
        return SubagentOutcome(
            task_id, definition.name, "completed", result.text, result.session_id, max_turns
        )
