"""Sub-agents: the ``Task`` tool (alias ``Agent``), ``TaskOutput``, and ``spawn()``.

A sub-agent starts from its own system prompt and the prompt alone — never the
parent's history — and holds only tools its parent holds:

* the agent type decides the candidate set (``explore``: Read/Glob/Grep; ``plan``:
  those plus read-only Bash; ``general-purpose``: the parent's tools minus spawning;
  AGENT.md types: their ``tools`` list, minus ``disallowed-tools``);
* injected skills are validated first (``skills.policy.validate_skill_set``); an
  invalid set is refused with its diagnostics and nothing is spawned; a valid one is
  composed and its :class:`~skilldeck.skills.policy.ToolPolicy` narrows the set again
  (the most restrictive rule wins);
* every call of the child still passes the parent's gate (its deny rules, asks and
  the parent's own skill policy), so nothing a child does escapes the parent's rules;
* spawning again needs depth: ``settings.agent.max_depth`` (default 1) levels below
  the main agent; at most ``max_concurrent_subagents`` (default 4) run at once.

Background runs return a task id at once and run in a worker thread with their own
event loop and session-store connection; ``TaskOutput`` waits for or polls them.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from pydantic import BaseModel, Field

from skilldeck.agent.definitions import AgentCatalog, AgentDefinition
from skilldeck.agent.events import Event, SubagentEndEvent, SubagentStartEvent
from skilldeck.agent.gate import AllowAll, GateDecision, ToolGate
from skilldeck.errors import PolicyError, SkillNotFoundError, ToolError
from skilldeck.llm.messages import Model, ToolCall
from skilldeck.skills.policy import ComposedSkill, ToolPolicy, compose
from skilldeck.skills.toolrules import ToolRule, parse_rules
from skilldeck.tools.base import Tool, ToolContext, ToolRegistry, ToolResult

if TYPE_CHECKING:
    from skilldeck.agent.loop import Agent, RunResult
    from skilldeck.agent.session import SessionStore
    from skilldeck.config import Settings
    from skilldeck.skills.registry import SkillRegistry

SPAWN_TOOLS = frozenset({"Task", "Agent", "TaskOutput"})


@dataclass
class SubagentOutcome:
    task_id: str
    subagent_type: str
    status: str  # completed | max_turns | paused | error | contract_failed | cancelled
    text: str
    session_id: str | None = None
    max_turns: int | None = None

    @property
    def ok(self) -> bool:
        return self.status in {"completed", "max_turns"}

    def render(self) -> str:
        if self.status == "completed":
            return f"Sub-agent ({self.subagent_type}) finished:\n\n{self.text}"
        if self.status == "max_turns":
            return (
                f"Sub-agent ({self.subagent_type}) reached its turn limit ({self.max_turns}):"
                f"\n\nLast output: {self.text}"
            )
        return f"Sub-agent ({self.subagent_type}) failed ({self.status}): {self.text}"


@dataclass
class _Background:
    thread: threading.Thread
    done: threading.Event = field(default_factory=threading.Event)
    outcome: SubagentOutcome | None = None
    description: str = ""


class _PolicyGate:
    """Child gate: the type's and the skills' policies first, then the parent's gate."""

    def __init__(self, policies: Sequence[ToolPolicy], parent: ToolGate) -> None:
        self.policies = list(policies)
        self.parent = parent

    async def check(self, call: ToolCall, ctx: ToolContext) -> GateDecision:
        for policy in self.policies:
            refusal = policy.check(call.name, call.input, workspace=ctx.workspace)
            if refusal is not None:
                return GateDecision.deny(refusal)
        return await self.parent.check(call, ctx)


def _type_policy(definition: AgentDefinition, parent_tools: set[str]) -> ToolPolicy:
    """What the agent type may use, bounded by the parent's tools."""
    deny = tuple(parse_rules(definition.disallowed_tools))
    if definition.tools is None:
        allow = tuple(ToolRule(n) for n in sorted(parent_tools - SPAWN_TOOLS))
    else:
        allow = tuple(parse_rules(definition.tools))
    return ToolPolicy(allow=allow, deny=deny).within(parent_tools)


def _instructions(definition: AgentDefinition, composed: ComposedSkill | None) -> str:
    parts = [definition.instructions or "You are a sub-agent. Complete the task you are given."]
    if composed is not None:
        if composed.execution_protocol:
            steps = "\n".join(f"{i}. {s}" for i, s in enumerate(composed.execution_protocol, 1))
            parts.append(f"Follow this execution protocol, in order:\n{steps}")
        if composed.preconditions:
            items = "\n".join(f"- {c}" for c in composed.preconditions)
            parts.append(f"Preconditions (true before you start; check them first):\n{items}")
        if composed.postconditions:
            items = "\n".join(f"- {c}" for c in composed.postconditions)
            parts.append(
                "Before you finish, check each postcondition and say for each whether it "
                f"holds:\n{items}"
            )
        if composed.output_contracts:
            schemas = json.dumps(composed.output_contracts, indent=2)
            parts.append(
                "Your final answer must be a single JSON value matching the output contract "
                f"of the skill(s) below (no prose around it):\n{schemas}"
            )
    return "\n\n".join(parts)


_FENCE = re.compile(r"^```(?:json)?\s*\n(.*?)\n```\s*$", re.DOTALL)


def check_contract(text: str, contracts: dict[str, dict[str, Any]]) -> list[str]:
    """Problems with ``text`` against every output contract (empty = satisfied)."""
    import jsonschema

    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        value = json.loads(body)
    except json.JSONDecodeError as e:
        return [f"the final answer is not valid JSON ({e.msg} at line {e.lineno})"]
    problems: list[str] = []
    for skill, schema in contracts.items():
        validator = jsonschema.Draft202012Validator(schema)
        for error in sorted(validator.iter_errors(value), key=lambda e: list(e.path)):
            where = "/".join(str(p) for p in error.path) or "(root)"
            problems.append(f"{skill}: {where}: {error.message}")
    return problems


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
    ) -> None:
        self.settings = settings
        self.parent_tools = parent_tools
        self.catalog = catalog
        self.registry = registry
        self.model_factory = model_factory
        self.parent_gate: ToolGate = parent_gate or AllowAll()
        self.depth = depth
        self.store = store
        self._background: dict[str, _Background] = {}
        self._slots = threading.BoundedSemaphore(max(1, settings.agent.max_concurrent_subagents))

    # ---- planning ----------------------------------------------------------------

    def plan(
        self, subagent_type: str, skills: Sequence[str]
    ) -> tuple[AgentDefinition, list[ToolPolicy], ComposedSkill | None, list[str]]:
        """Resolve the type, validate and compose skills, and decide the child's tools.

        Raises PolicyError (invalid skill set) or SkillNotFoundError (unknown type).
        """
        definition = self.catalog.get(subagent_type)
        parent_names = set(self.parent_tools.names())
        policies = [_type_policy(definition, parent_names)]
        composed = None
        wanted = [*definition.skills, *skills]
        if wanted:
            if self.registry is None:
                raise PolicyError("Skills were requested but no skill registry is available.")
            composed = compose(
                list(dict.fromkeys(wanted)),
                self.registry,
                conflicts=self.settings.skills.conflicts,
                parent_tools=parent_names,
            )
            policies.append(composed.policy)
        names = parent_names
        for policy in policies:
            names = policy.visible_tools(names)
        if self.depth + 1 >= self.settings.agent.max_depth:
            names -= SPAWN_TOOLS
        if not (definition.allow_skills or composed is not None):
            names.discard("Skill")
        return definition, policies, composed, sorted(names)

    # ---- running -----------------------------------------------------------------

    def _child_agent(
        self,
        definition: AgentDefinition,
        policies: list[ToolPolicy],
        composed: ComposedSkill | None,
        tool_names: list[str],
        *,
        model: str | None,
        store: SessionStore | None,
        task_id: str,
        emit: Callable[[Event], None] | None,
    ) -> Agent:
        from skilldeck.agent.builder import build_agent

        tools: list[Tool] = []
        for name in tool_names:
            tool = self.parent_tools.get(name)
            if tool is not None and name not in SPAWN_TOOLS:
                tools.append(tool)
        child_gate = _PolicyGate(policies, self.parent_gate)
        if {"Task", "Agent"} & set(tool_names):
            child_manager = SubagentManager(
                settings=self.settings,
                parent_tools=ToolRegistry(tools),
                catalog=self.catalog,
                registry=self.registry,
                model_factory=self.model_factory,
                parent_gate=child_gate,
                depth=self.depth + 1,
            )
            tools.extend(task_tools(child_manager))

        def forward(event: Event) -> None:
            if emit is not None:
                emit(event.model_copy(update={"is_sub_agent": True, "task_id": task_id}))

        return build_agent(
            self.settings,
            model=self.model_factory(model or definition.model),
            skills=composed.names if composed else (),
            tools=tools,
            gate=child_gate,
            registry=self.registry,
            instructions=_instructions(definition, composed),
            agent_name=definition.name,
            max_turns=definition.max_turns,
            session_store=store,
            hints=False,
            json_events=True,
            on_event=forward,
        )

    async def spawn(
        self,
        task: str,
        *,
        skills: Sequence[str] = (),
        subagent_type: str = "general-purpose",
        model: str | None = None,
        description: str = "",
        emit: Callable[[Event], None] | None = None,
    ) -> SubagentOutcome:
        """Run a sub-agent to completion. Invalid skill sets raise PolicyError first."""
        plan = self.plan(subagent_type, skills)
        task_id = f"task_{uuid.uuid4().hex[:10]}"
        await anyio.to_thread.run_sync(self._slots.acquire)
        try:
            return await self._run(plan, task, task_id, model, description, emit, self.store)
        finally:
            self._slots.release()

    def spawn_background(
        self,
        task: str,
        *,
        skills: Sequence[str] = (),
        subagent_type: str = "general-purpose",
        model: str | None = None,
        description: str = "",
        emit: Callable[[Event], None] | None = None,
    ) -> str:
        """Validate now, run in a worker thread, return the task id at once."""
        plan = self.plan(subagent_type, skills)
        task_id = f"task_{uuid.uuid4().hex[:10]}"

        def work() -> None:
            with self._slots:
                try:
                    outcome = anyio.run(
                        self._run, plan, task, task_id, model, description, emit, None
                    )
                except Exception as e:  # reported to the parent through TaskOutput
                    outcome = SubagentOutcome(
                        task_id, plan[0].name, "error", f"{type(e).__name__}: {e}"
                    )
            entry.outcome = outcome
            entry.done.set()

        thread = threading.Thread(target=work, name=f"skilldeck-{task_id}", daemon=True)
        entry = _Background(thread=thread, description=description)
        self._background[task_id] = entry
        thread.start()
        return task_id

    async def output(self, task_id: str, *, block: bool = True, timeout: float = 600.0) -> str:
        entry = self._background.get(task_id)
        if entry is None:
            known = ", ".join(sorted(self._background)) or "none"
            raise ToolError(f"No background task {task_id!r}. Known task ids: {known}.")
        if block and not entry.done.is_set():
            await anyio.to_thread.run_sync(entry.done.wait, timeout)
        if entry.outcome is None:
            return f"Task {task_id} is still running ({entry.description or 'no description'})."
        return entry.outcome.render()

    def cancel_all(self) -> list[str]:
        """Mark unfinished background tasks cancelled (their threads are daemons)."""
        cancelled = []
        for task_id, entry in self._background.items():
            if not entry.done.is_set():
                entry.outcome = SubagentOutcome(task_id, "?", "cancelled", "cancelled by the user")
                entry.done.set()
                cancelled.append(task_id)
        return cancelled

    async def _run(
        self,
        plan: tuple[AgentDefinition, list[ToolPolicy], ComposedSkill | None, list[str]],
        task: str,
        task_id: str,
        model: str | None,
        description: str,
        emit: Callable[[Event], None] | None,
        store: SessionStore | None,
    ) -> SubagentOutcome:
        definition, policies, composed, tool_names = plan
        background = store is None
        if emit is not None:
            emit(
                SubagentStartEvent(
                    task_id=task_id,
                    subagent_type=definition.name,
                    description=description,
                    background=background,
                )
            )
        agent = self._child_agent(
            definition,
            policies,
            composed,
            tool_names,
            model=model,
            store=store,
            task_id=task_id,
            emit=emit,
        )
        try:
            result = await agent.run(task)
            outcome = await self._enforce_contract(agent, result, composed, definition, task_id)
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


# ---- the tools -------------------------------------------------------------------


class TaskInput(BaseModel):
    description: str = Field(description="A short (3-5 word) description of the task")
    prompt: str = Field(description="The task for the sub-agent, complete and self-contained")
    subagent_type: str = Field(default="general-purpose", description="The agent type to use")
    skills: list[str] = Field(default_factory=list, description="Skills to inject (validated)")
    model: str | None = Field(default=None, description="Model override, provider:name")
    run_in_background: bool = Field(default=False, description="Return a task id at once")


class TaskOutputInput(BaseModel):
    task_id: str
    block: bool = True
    timeout: float = Field(default=600_000, description="Milliseconds to wait when blocking")


def _emitter(ctx: ToolContext) -> Callable[[Event], None] | None:
    emit = ctx.services.get("emit_event")
    return emit if callable(emit) else None


class TaskTool(Tool):
    name = "Task"
    description = ""  # set per instance: it lists the agent types
    Input = TaskInput

    def __init__(self, manager: SubagentManager) -> None:
        self.manager = manager
        types = "\n".join(
            f"- {d.name}: {d.description}"
            for d in sorted(manager.catalog.agents.values(), key=lambda d: d.name)
        )
        self.description = (  # type: ignore[misc]
            "Launch a sub-agent for a self-contained task. It starts fresh (it does not see "
            "this conversation), so the prompt must say everything. Pass `skills` to inject "
            "skills; the set is validated and composed, and the sub-agent gets only the tools "
            "they allow. Use run_in_background to continue while it works, then TaskOutput."
            f"\n\nAgent types:\n{types}"
        )

    async def run(self, input: TaskInput, ctx: ToolContext) -> ToolResult:
        emit = _emitter(ctx)
        try:
            if input.run_in_background:
                task_id = self.manager.spawn_background(
                    input.prompt,
                    skills=input.skills,
                    subagent_type=input.subagent_type,
                    model=input.model,
                    description=input.description,
                    emit=emit,
                )
                return ToolResult(
                    f"Started background task {task_id} ({input.subagent_type}). "
                    f"Use TaskOutput with task_id={task_id!r} to get its result.",
                    data={"task_id": task_id},
                )
            outcome = await self.manager.spawn(
                input.prompt,
                skills=input.skills,
                subagent_type=input.subagent_type,
                model=input.model,
                description=input.description,
                emit=emit,
            )
        except PolicyError as e:
            lines = "\n".join(f"- {d.code} {d.message}" for d in e.diagnostics) or str(e)
            return ToolResult.error(f"Spawn rejected: the skill set is invalid:\n{lines}")
        except SkillNotFoundError as e:
            return ToolResult.error(f"Spawn rejected: unknown agent type. {e}")
        return ToolResult(
            outcome.render(),
            is_error=not outcome.ok,
            data={"task_id": outcome.task_id, "status": outcome.status},
        )


class TaskOutputTool(Tool):
    name = "TaskOutput"
    description = (
        "Get the result of a background sub-agent started with Task(run_in_background=true). "
        "With block=true (default) wait for it to finish."
    )
    Input = TaskOutputInput
    read_only = True

    def __init__(self, manager: SubagentManager) -> None:
        self.manager = manager

    async def run(self, input: TaskOutputInput, ctx: ToolContext) -> ToolResult:
        text = await self.manager.output(
            input.task_id, block=input.block, timeout=input.timeout / 1000
        )
        failed = "failed (" in text.split("\n", 1)[0]
        return ToolResult(text, is_error=failed)


def task_tools(manager: SubagentManager) -> list[Tool]:
    return [TaskTool(manager), TaskOutputTool(manager)]
