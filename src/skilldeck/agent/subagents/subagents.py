"""Sub-agents: the ``Task`` tool (alias ``Agent``), ``TaskOutput``, and ``spawn()``.

(The two tool classes live in ``agent/subagents/task_tools.py`` and are re-exported here.)

A sub-agent starts from its own system prompt and the prompt alone — never the
parent's history — and holds only tools its parent holds:

* the agent type decides the candidate set (``explore``: Read/Glob/Grep; ``plan``:
  those plus read-only Bash; ``general-purpose``: the parent's tools minus spawning;
  AGENT.md types: their ``tools`` list, minus ``disallowed-tools``);
* injected skills are validated first (``skills.policy.validate_skill_set``); an
  invalid set is refused with its diagnostics and nothing is spawned; a valid one is
  composed and its :class:`~skilldeck.skills.policy.policy.ToolPolicy` narrows the set again
  (the most restrictive rule wins);
* every call of the child still passes the parent's gate (its deny rules, asks and
  the parent's own skill policy), so nothing a child does escapes the parent's rules;
  the child also starts with the rules its parent's session learnt at run time (a
  loaded skill's forbidden tools stay forbidden for the children it spawns);
* spawning again needs depth: ``settings.agent.max_depth`` (default 1) levels below
  the main agent; at most ``max_concurrent_subagents`` (default 4) run at once;
* the model cannot preload a ``disable-model-invocation`` skill into a child
  (``Task(skills=[…])``): that skill is the user's to invoke, refused like a direct call;
* a child whose type has ``permission-mode: plan`` runs read-only: its gate says so,
  and its ``Skill`` tool loads text but runs no script, code or ``!`cmd```;
* the child's session records its type, depth, tools and whole gate (its own
  policies and the parent's rules: ``agent/store/launch.py``), so ``resume`` rebuilds that
  child and never a top-level agent with every tool.

Background runs return a task id at once and run in a worker thread with their own
event loop and session-store connection; ``TaskOutput`` waits for or polls them, and
:meth:`SubagentManager.cancel_all` (Ctrl-C) cancels them, recording ``cancelled``.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread

from skilldeck.agent.events import Event, SubagentEndEvent, SubagentStartEvent
from skilldeck.agent.permissions.gate import AllowAll, Approver, ToolGate
from skilldeck.agent.permissions import SESSION_RULES_KEY, ScopedGate
from skilldeck.agent.recorder import RunResult
from skilldeck.agent.spec import AgentFactory, AgentSpec, Runtime, Scan
from skilldeck.agent.store import SessionStore, definition_to_dict
from skilldeck.agent.subagents.definitions import AgentCatalog, AgentDefinition
from skilldeck.agent.subagents.task_tools import (
    ParentSession,
    SpawnOptions,
    SubagentOutcome,
    TaskInput,
    TaskOutputInput,
    TaskOutputTool,
    TaskTool,
    check_contract,
    task_tools,
)
from skilldeck.agent.toolset import BOUND, SPAWNING, narrow, read_only_policy, type_policy
from skilldeck.config import Settings
from skilldeck.errors import (
    ConfigError,
    PolicyError,
    SkilldeckError,
    SkillNotFoundError,
    ToolError,
)
from skilldeck.llm.messages import Model
from skilldeck.skills.model.diagnostics import Diagnostic, Severity
from skilldeck.skills.policy.policy import ComposedSkill, ToolPolicy
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import Tool, ToolRegistry

if TYPE_CHECKING:
    from skilldeck.agent.loop import Agent

__all__ = [
    "ParentSession",
    "SpawnOptions",
    "SubagentManager",
    "SubagentOutcome",
    "TaskInput",
    "TaskOutputInput",
    "TaskOutputTool",
    "TaskTool",
    "check_contract",
    "task_tools",
]

#: the spawning tools (the one set: ``toolset.SPAWNING``); kept under its old name
SPAWN_TOOLS = SPAWNING
#: how often a waiting parent checks a background run (TaskOutput, a free slot)
POLL_SECONDS = 0.05
#: how long cancel_all waits for a cancelled background run to record its status
CANCEL_GRACE_SECONDS = 5.0

#: what plan() decides: the type, the policies (skills first), the composed set, tools
Plan = tuple[AgentDefinition, list[tuple[ToolPolicy, str | None]], ComposedSkill | None, list[str]]


@dataclass
class _Background:
    thread: threading.Thread
    subagent_type: str = "?"
    done: threading.Event = field(default_factory=threading.Event)
    outcome: SubagentOutcome | None = None
    description: str = ""
    #: set by the worker thread once its event loop runs: how to cancel it from outside
    scope: anyio.CancelScope | None = None
    token: anyio.lowlevel.EventLoopToken | None = None


def _start_event(
    plan: Plan, task_id: str, description: str, *, background: bool
) -> SubagentStartEvent:
    return SubagentStartEvent(
        task_id=task_id,
        subagent_type=plan[0].name,
        description=description,
        background=background,
    )


_type_policy = type_policy  # the old private name


def _instructions(definition: AgentDefinition, composed: ComposedSkill | None) -> str:
    """The child's instructions; ``build_agent`` adds the composed skills' execution
    protocol, preconditions and postconditions after them."""
    parts = [definition.instructions or "You are a sub-agent. Complete the task you are given."]
    if composed is not None and composed.output_contracts:
        schemas = json.dumps(composed.output_contracts, indent=2)
        parts.append(
            "Your final answer must be a single JSON value matching the output contract "
            f"of the skill(s) below (no prose around it):\n{schemas}"
        )
    return "\n\n".join(parts)


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
        self._background: dict[str, _Background] = {}
        #: foreground task ids and how they ended: TaskOutput on one says it already returned
        self._foreground: dict[str, str] = {}
        self._ids = itertools.count(1)
        self._slots = threading.BoundedSemaphore(max(1, settings.agent.max_concurrent_subagents))

    # ---- planning ----------------------------------------------------------------

    def plan(self, subagent_type: str, skills: Sequence[str]) -> Plan:
        """Resolve the type, validate and compose skills, and decide the child's tools
        (``toolset.narrow``, the pipeline every agent's tools go through).

        Raises PolicyError (invalid skill set) or SkillNotFoundError (unknown type).
        """
        definition = self.catalog.get(subagent_type)
        parent_names = set(self.parent_tools.names())
        self._refuse_user_only(skills)
        steps: list[tuple[ToolPolicy, str | None]] = [
            (type_policy(definition, parent_names), definition.name)
        ]
        if definition.permission_mode == "plan":  # a child's mode can only narrow
            steps.append((read_only_policy(self.parent_tools, parent_names), definition.name))
        removed = set(SPAWNING) if self.depth + 1 >= self.settings.agent.max_depth else set()
        if not (definition.allow_skills or definition.skills or skills):
            removed.add("Skill")
        out = narrow(
            self.settings,
            self.registry,
            parent_names,
            definition=steps,
            skills=[*definition.skills, *skills],
            cap=parent_names - removed,
            check_names=False,
        )
        composed = out.composed
        policies = [*([(composed.policy, None)] if composed else []), *out.scoped]
        return definition, policies, composed, sorted(out.names)

    def _refuse_user_only(self, refs: Sequence[str]) -> None:
        """PolicyError when a requested skill is marked ``disable-model-invocation``: the
        model cannot load it with Skill, so it cannot preload it into a child either.
        (An agent definition's own ``skills`` are the user's choice and stay allowed.)"""
        if self.registry is None:
            return
        refused = []
        for ref in refs:
            name, _, version = ref.partition("@")
            try:
                skill = self.registry.get(name, version or None)
            except SkillNotFoundError:
                continue  # reported by compose (SD301)
            if skill.metadata.disable_model_invocation:
                refused.append(
                    Diagnostic(
                        code="SD308",
                        rule="user-only-skill",
                        message=f"Skill {name!r} can only be invoked by the user "
                        "(disable-model-invocation: true); a sub-agent cannot preload it. "
                        "Remove it from `skills`.",
                        severity=Severity.ERROR,
                    )
                )
        if refused:
            raise PolicyError("; ".join(d.message for d in refused), diagnostics=refused)

    def _new_task_id(self) -> str:
        """``task_1``, ``task_2``… per manager: short for a model to repeat in TaskOutput,
        and predictable for scripted runs. Nested managers prefix their parent's depth."""
        prefix = "task" if self.depth == 0 else f"task{self.depth}"
        return f"{prefix}_{next(self._ids)}"

    # ---- running -----------------------------------------------------------------

    def _child_tools(self, tool_names: list[str]) -> list[Tool]:
        """The parent's tool objects the child may hold, but the bound ones: the
        builder makes the child its own ``Skill`` tool (code skills then call only
        what the child holds) and its own ``Task`` tools, on a manager one level
        deeper that shares the child's store."""
        return [
            tool
            for name in tool_names
            if name not in BOUND and (tool := self.parent_tools.get(name)) is not None
        ]

    def _child_spec(
        self, plan: Plan, *, model: str | None, parent: ParentSession | None
    ) -> AgentSpec:
        """What the child is: the planned tools (a cap), a gate scoped under the
        parent's, one level deeper, starting with the rules its parent learnt."""
        definition, policies, composed, tool_names = plan
        read_only = definition.permission_mode == "plan"  # a child's mode only narrows
        inherited = parent.rules if parent is not None else None
        return AgentSpec(
            model=self.model_factory(model or definition.model),
            skills=tuple(composed.names) if composed else (),
            tools=tuple(self._child_tools(tool_names)),
            bound_tools=frozenset(tool_names) & BOUND,
            only_tools=tuple(tool_names),
            gate=ScopedGate(policies, self.parent_gate, read_only=read_only),
            instructions=_instructions(definition, composed),
            name=definition.name,
            max_turns=definition.max_turns,
            hints=False,
            stream_text=False,
            initial_state={SESSION_RULES_KEY: copy.deepcopy(inherited)} if inherited else None,
            parent_session=parent.session_id if parent is not None else None,
            depth=self.depth + 1,
            launch_extra={
                "agent_type": definition.name,
                "definition": definition_to_dict(definition),
                **self.scan,
            },
        )

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
        return self.agent_factory(self._child_spec(plan, model=model, parent=parent), runtime)

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

        async def cancellable() -> SubagentOutcome:
            entry.token = anyio.lowlevel.current_token()
            with anyio.CancelScope() as scope:
                entry.scope = scope
                if entry.outcome is not None:  # cancelled before it started
                    scope.cancel()
                return await self._run(plan, task, task_id, options, background=True)
            return SubagentOutcome(task_id, plan[0].name, "cancelled", "cancelled by the user")

        def work() -> None:
            with self._slots:
                if entry.outcome is not None:  # cancelled while waiting for a slot
                    entry.done.set()
                    return
                try:
                    outcome = anyio.run(cancellable)
                except Exception as e:  # reported to the parent through TaskOutput
                    outcome = SubagentOutcome(
                        task_id, plan[0].name, "error", f"{type(e).__name__}: {e}"
                    )
            if entry.outcome is None:
                entry.outcome = outcome
            entry.done.set()

        thread = threading.Thread(target=work, name=f"skilldeck-{task_id}", daemon=True)
        entry = _Background(thread=thread, subagent_type=plan[0].name, description=description)
        self._background[task_id] = entry
        if emit is not None:  # in the parent's own stream, before the Task result
            emit(_start_event(plan, task_id, description, background=True))
        thread.start()
        return task_id

    async def output(self, task_id: str, *, block: bool = True, timeout: float = 600.0) -> str:
        entry = self._background.get(task_id)
        if entry is None:
            raise ToolError(self._no_such_task(task_id))
        deadline = time.monotonic() + timeout
        while block and not entry.done.is_set() and time.monotonic() < deadline:
            await anyio.sleep(POLL_SECONDS)  # polled, so a cancelled parent stops waiting
        if entry.outcome is None:
            return f"Task {task_id} is still running ({entry.description or 'no description'})."
        return entry.outcome.render()

    def background_ids(self) -> list[str]:
        """The background tasks started so far (finished or not): while there is one,
        the agent offers ``TaskOutput`` to the model."""
        return sorted(self._background)

    def _no_such_task(self, task_id: str) -> str:
        """What TaskOutput says for an id that is no background task: which ids exist,
        and that foreground tasks and other tools already returned their results."""
        if task_id in self._foreground:
            return (
                f"{task_id} ran in the foreground and ended {self._foreground[task_id]}; its "
                "result was returned by the Task call that started it. There is nothing to "
                "fetch: use that result."
            )
        known = ", ".join(sorted(self._background))
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
        cancelled = [tid for tid, e in self._background.items() if not e.done.is_set()]
        for task_id in cancelled:
            entry = self._background[task_id]
            entry.outcome = SubagentOutcome(
                task_id, entry.subagent_type, "cancelled", "cancelled by the user"
            )
            if entry.scope is not None and entry.token is not None:
                with contextlib.suppress(RuntimeError):  # its event loop already ended
                    anyio.from_thread.run_sync(entry.scope.cancel, token=entry.token)
        deadline = time.monotonic() + grace
        for task_id in cancelled:
            self._background[task_id].thread.join(max(0.0, deadline - time.monotonic()))
        return cancelled

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
