"""The sub-agent tools the model calls: ``Task`` (alias ``Agent``) and ``TaskOutput``.

They are thin: ``Task`` hands the call to
:class:`~skilldeck.agent.subagents.subagents.SubagentManager`
(``spawn`` or ``spawn_background``) with the calling session as the parent, and turns
a refused spawn (an invalid skill set, an unknown type) into an error result that
lists the diagnostics; ``TaskOutput`` waits for or polls a background run.

A refused spawn says what to call instead, because small models retry the same
refused call unchanged: the valid names closest to the ones given (``difflib``), a
skill's name given as ``subagent_type`` turned into the right call
(``subagent_type="general-purpose", skills=[…]``), and a ``TaskOutput`` for an id that
is no background task lists the ids there are and says that a foreground ``Task``
already returned its result.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict, Unpack

from pydantic import BaseModel, Field

from skilldeck.agent.events import Event
from skilldeck.agent.permissions import SESSION_RULES_KEY
from skilldeck.agent.subagents.definitions import AgentCatalog
from skilldeck.errors import PolicyError, SkillNotFoundError
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import Tool, ToolContext, ToolResult


@dataclass(frozen=True)
class ParentSession:
    """What a child takes from the session that spawns it: the id (the child's session
    records it as its parent) and the permission rules learnt at run time (a copy)."""

    session_id: str | None = None
    rules: dict[str, Any] | None = None

    @classmethod
    def of(cls, ctx: ToolContext) -> ParentSession:
        rules = ctx.state.get(SESSION_RULES_KEY)
        copied = copy.deepcopy(rules) if isinstance(rules, dict) else None
        return cls(ctx.session_id or None, copied)


class SpawnOptions(TypedDict, total=False):
    """The keywords of ``spawn`` and ``spawn_background`` besides the task (defaults:
    no skills, ``general-purpose``, the parent's model, no description, no events)."""

    skills: Sequence[str]
    subagent_type: str
    model: str | None
    description: str
    emit: Callable[[Event], None] | None
    parent: ParentSession | None


class Spawner(Protocol):
    """What the two tools need from :class:`~skilldeck.agent.subagents.subagents.SubagentManager`
    (a Protocol, so this module and the tool set never import the manager)."""

    catalog: AgentCatalog
    registry: SkillRegistry | None

    async def spawn(self, task: str, **options: Unpack[SpawnOptions]) -> SpawnOutcome: ...

    def spawn_background(self, task: str, **options: Unpack[SpawnOptions]) -> str: ...

    async def output(self, task_id: str, *, block: bool = True, timeout: float = 600.0) -> str: ...


class SpawnOutcome(Protocol):
    """How a finished sub-agent run reads to the ``Task`` tool."""

    task_id: str
    status: str

    @property
    def ok(self) -> bool: ...

    def render(self) -> str: ...


@dataclass
class SubagentOutcome:
    task_id: str
    subagent_type: str
    #: completed | max_turns | stuck | paused | error | contract_failed | cancelled
    status: str
    text: str
    session_id: str | None = None
    max_turns: int | None = None

    @property
    def ok(self) -> bool:
        """Only a completed child succeeded: one that hit its turn limit, went round in
        circles (stuck) or failed did not do its task, and its parent must know."""
        return self.status == "completed"

    def render(self) -> str:
        if self.status == "completed":
            return f"Sub-agent ({self.subagent_type}) finished:\n\n{self.text}"
        if self.status == "max_turns":
            return (
                f"Sub-agent ({self.subagent_type}) did not finish: it reached its turn limit "
                f"({self.max_turns}).\n\nLast output: {self.text}"
            )
        if self.status == "stuck":
            return (
                f"Sub-agent ({self.subagent_type}) did not finish: it was stopped as stuck "
                f"({self.text}). Do not count its task as done."
            )
        return f"Sub-agent ({self.subagent_type}) failed ({self.status}): {self.text}"


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
    emit = ctx.services.emit_event
    return emit if callable(emit) else None


class TaskTool(Tool):
    name = "Task"
    description = ""  # set per instance: it lists the agent types
    Input = TaskInput

    def __init__(self, manager: Spawner) -> None:
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
        options: SpawnOptions = {
            "skills": input.skills,
            "subagent_type": input.subagent_type,
            "model": input.model,
            "description": input.description,
            "emit": _emitter(ctx),
            "parent": ParentSession.of(ctx),
        }
        try:
            if input.run_in_background:
                task_id = self.manager.spawn_background(input.prompt, **options)
                return ToolResult(
                    f"Started background task {task_id} ({input.subagent_type}). "
                    f"Use TaskOutput with task_id={task_id!r} to get its result.",
                    data={"task_id": task_id},
                )
            outcome = await self.manager.spawn(input.prompt, **options)
        except PolicyError as e:
            lines = "\n".join(f"- {d.code} {d.message}" for d in e.diagnostics) or str(e)
            fix = _skill_fixes(input.skills, self.manager)
            return ToolResult.error(f"Spawn rejected: the skill set is invalid:\n{lines}{fix}")
        except SkillNotFoundError:
            return ToolResult.error(_unknown_type(input.subagent_type, input.skills, self.manager))
        return ToolResult(
            outcome.render(),
            is_error=not outcome.ok,
            data={"task_id": outcome.task_id, "status": outcome.status},
        )


def _skill_names(manager: Spawner) -> list[str]:
    registry = manager.registry
    return [s.name for s in registry.usable()] if registry is not None else []


def _closest(name: str, names: Sequence[str]) -> list[str]:
    return difflib.get_close_matches(name, names, n=3, cutoff=0.5)


def _skill_fixes(requested: Sequence[str], manager: Spawner) -> str:
    """For each requested skill that is no usable skill: the closest names, or the
    agent type it names; then the corrected ``skills`` list when there is one."""
    names = _skill_names(manager)
    types = manager.catalog.names()
    lines, fixed = [], []
    for ref in requested:
        name = ref.partition("@")[0]
        if name in names:
            fixed.append(ref)
            continue
        close = _closest(name, names)
        if name in types:
            lines.append(f"`{name}` is an agent type, not a skill: pass subagent_type={name!r}.")
        elif close:
            lines.append(f"No skill `{name}`; the closest skill names: {', '.join(close)}.")
            fixed.append(close[0])
        else:
            lines.append(f"No skill `{name}` and none close to it.")
    if not lines:
        return ""
    retry = f"Call Task again with skills={json.dumps(fixed)}, or do the work yourself."
    return "\n" + "\n".join(lines) + "\n" + retry


def _unknown_type(subagent_type: str, skills: Sequence[str], manager: Spawner) -> str:
    """Why the type is refused and the call to make instead."""
    types = manager.catalog.names()
    if subagent_type in _skill_names(manager):
        wanted = json.dumps(list(dict.fromkeys([*skills, subagent_type])))
        return (
            f"Spawn rejected: `{subagent_type}` is a skill, not an agent type. Use "
            f'subagent_type="general-purpose" with skills={wanted}.'
        )
    close = _closest(subagent_type, types)
    hint = f" The closest: {', '.join(close)}." if close else ""
    return (
        f"Spawn rejected: no agent type {subagent_type!r}.{hint} "
        f"Valid subagent_type values: {', '.join(types)}."
    )


class TaskOutputTool(Tool):
    name = "TaskOutput"
    description = (
        "Get the result of a background sub-agent started with Task(run_in_background=true), "
        "by the task id that call returned. With block=true (default) wait for it to finish. "
        "Only for background tasks: a foreground Task returns its result directly, and "
        "other tools (Write, Bash…) are never tasks."
    )
    Input = TaskOutputInput
    read_only = True

    def __init__(self, manager: Spawner) -> None:
        self.manager = manager

    async def run(self, input: TaskOutputInput, ctx: ToolContext) -> ToolResult:
        text = await self.manager.output(
            input.task_id, block=input.block, timeout=input.timeout / 1000
        )
        first = text.split("\n", 1)[0]
        failed = "failed (" in first
        return ToolResult(text, is_error=failed, data={"poll": " is still running " in first})


_FENCE = re.compile(r"^```(?:json)?\s*\n(.*?)\n```\s*$", re.DOTALL)


def check_contract(text: str, contracts: dict[str, dict[str, Any]]) -> list[str]:
    """Problems with ``text`` against every output contract (empty = satisfied)."""
    import jsonschema  # lazy: third-party, ~40 ms; only a run with output contracts needs it

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


def task_tools(manager: Spawner) -> list[Tool]:
    return [TaskTool(manager), TaskOutputTool(manager)]
