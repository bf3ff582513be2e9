"""What one use of a skill needs from its session: the session's gate, and memory.

* **The gate.** :class:`ContextGate` vets a skill's dynamic-context commands as
  ``Bash`` calls through the session's gate (:func:`check_permission`), and
  :class:`GatedDispatcher` is how a code skill calls tools when the agent wired no
  dispatcher; :func:`runs_read_only` says whether the session may only read.
  :func:`load_in_context` is the one load operation with that gate and the session's
  runner — what the ``Skill`` tool, ``run --skill`` and chat ``/skill`` all call.
* **What was loaded.** Small models load the same skill again and again (7 identical
  loads in a row in one real run). A skill already loaded in this session with the
  same arguments is not loaded again: :func:`already_loaded` answers instead, saying
  when it was loaded (Claude Code dedupes identical re-invocations the same way). The
  memory lives in the session's tool state (``ctx.state``), never on a shared object,
  so it survives a resume; the loop forgets it (:func:`forget_loads`) when context
  trimming may have hidden an earlier load from the model. A skill the session
  started with (``--skill``, a sub-agent's ``skills=[…]``) is noted too, as
  ``preloaded`` — only a mark, never its body, which is in the conversation once.
"""

from __future__ import annotations

import inspect
import json
from typing import TYPE_CHECKING, Any

from skilldeck.llm.messages import ToolCall
from skilldeck.sandbox import Sandbox
from skilldeck.skills.execution import (
    LoadedSkill,
    ShellRunner,
    load_skill_for_use,
    shell_runner,
)
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.rules import parse_rules
from skilldeck.tools.base import ToolContext, ToolRegistry, ToolResult

if TYPE_CHECKING:
    from skilldeck.config import Settings

__all__ = [
    "LOADED_KEY",
    "TURN_KEY",
    "ContextGate",
    "GatedDispatcher",
    "already_loaded",
    "check_permission",
    "context_runner",
    "forget_loads",
    "load_in_context",
    "remember_load",
    "runs_read_only",
]

#: ``ctx.state`` key: the skills loaded in this session, by name and arguments
LOADED_KEY = "skills_loaded"
#: ``ctx.state`` key the loop sets before running a turn's tools: that turn's number
TURN_KEY = "turn"


def _load_key(skill: Skill, raw_args: Any) -> str:
    args = json.dumps(raw_args, sort_keys=True, ensure_ascii=False, default=str)
    return f"{skill.name}@{skill.version or ''} {args}"


def already_loaded(skill: Skill, raw_args: Any, ctx: ToolContext) -> str | None:
    """The answer to a repeated load (None: not loaded yet with these arguments)."""
    loads = ctx.state.get(LOADED_KEY)
    entry = loads.get(_load_key(skill, raw_args)) if isinstance(loads, dict) else None
    if not isinstance(entry, dict):
        return None
    turn = entry.get("turn")
    same = " with the same arguments" if raw_args not in (None, "") else ""
    if entry.get("preloaded"):
        when, where = "when this conversation started", "the skill message at its start"
    else:
        when = f"at turn {turn} in this conversation" if isinstance(turn, int) else "earlier"
        where = "that Skill result above"
    return (
        f"Skill {skill.name} is already loaded: it was loaded {when}{same}, and its "
        f"instructions are in {where}. Do not load it again: follow those instructions "
        "with the other tools, or give your final answer."
    )


def remember_load(
    skill: Skill, raw_args: Any, ctx: ToolContext, *, preloaded: bool = False
) -> None:
    """Note a successful load in the session's state (JSON: it is stored with it):
    the turn it was loaded at, or ``preloaded`` for a skill the session started with.
    Only this mark is kept — the body is in the conversation, once."""
    loads = ctx.state.setdefault(LOADED_KEY, {})
    if isinstance(loads, dict):
        turn = ctx.state.get(TURN_KEY)
        entry: dict[str, Any] = {"turn": turn if isinstance(turn, int) else None}
        if preloaded:
            entry = {"turn": None, "preloaded": True}
        loads[_load_key(skill, raw_args)] = entry


def forget_loads(state: dict[str, Any]) -> None:
    """Forget every load: the model may no longer see them (context trimmed)."""
    state.pop(LOADED_KEY, None)


class ContextGate:
    """The :class:`~skilldeck.skills.execution.loading.CommandGate` of a session, from its
    :class:`ToolContext`: dynamic-context commands are vetted as ``Bash`` calls by
    :func:`check_permission` (the loop's gate, or ``permission_check``), and plan mode
    is read from the gate (:func:`runs_read_only`). Every skilldeck front door that
    has a session (Skill tool, ``run --skill``, chat ``/skill``) uses this one."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx

    @property
    def read_only(self) -> bool:
        return runs_read_only(self.ctx)

    async def check_command(self, skill: Skill, command: str) -> str | None:
        return await check_permission(skill, "Bash", {"command": command}, self.ctx)


def context_runner(ctx: ToolContext, settings: Settings) -> ShellRunner:
    """The session's dynamic-context runner: ``bash -c`` in the workspace, under the
    session's sandbox, with the skills' timeout and output cap."""
    return shell_runner(
        cwd=ctx.workspace,
        timeout=settings.skills.script_timeout,
        cap=settings.skills.output_cap,
        sandbox=Sandbox.for_state(ctx.state, settings),
        workspace=ctx.workspace,
    )


async def load_in_context(
    skill: Skill, raw_args: Any, ctx: ToolContext, *, settings: Settings
) -> LoadedSkill:
    """:func:`~skilldeck.skills.execution.loading.load_skill_for_use` with the session's gate and
    runner: what the Skill tool, ``run --skill`` and chat ``/skill`` all call."""
    return await load_skill_for_use(
        skill,
        arguments=raw_args,
        session_id=ctx.session_id,
        workspace=ctx.workspace,
        gate=ContextGate(ctx),
        run_command=context_runner(ctx, settings),
        dynamic=settings.skills.dynamic_context,
    )


async def check_permission(
    skill: Skill, tool: str, tool_input: dict[str, Any], ctx: ToolContext
) -> str | None:
    """None when the call may run, else why not. Uses ``services["permission_check"]``
    or ``services["tool_gate"]``; an ``ask`` is satisfied by the skill's own
    ``allowed-tools`` (Claude Code's pre-approval), else refused (no one to ask here).
    With neither service wired (no permission system), everything is allowed."""
    check = ctx.services.get("permission_check")
    if check is not None:
        answer = check(tool, tool_input)
        reason: str | None = await answer if inspect.isawaitable(answer) else answer
        return reason
    gate = ctx.services.get("tool_gate")
    if gate is None:
        return None
    decision = await gate.check(ToolCall(id="skill-internal", name=tool, input=tool_input), ctx)
    if decision.kind == "allow":
        return None
    if decision.kind == "deny":
        return str(decision.message or "denied by a permission rule")
    for rule in parse_rules(skill.metadata.allowed_tools):
        if rule.matches(tool, tool_input, workspace=ctx.workspace, deny=False, family=False):
            return None
    return (
        f"{tool} needs approval; pre-approve it in the skill's allowed-tools or a permission rule"
    )


class GatedDispatcher:
    """``call(name, input)`` for code skills when the agent did not wire one: the tool
    registry, behind :func:`check_permission` and the skill's forbidden tools."""

    def __init__(self, tools: ToolRegistry, ctx: ToolContext, owner: object, skill: Skill) -> None:
        self.tools, self.ctx, self.owner, self.skill = tools, ctx, owner, skill

    async def call(self, name: str, input: dict[str, Any]) -> ToolResult:
        for rule in parse_rules(self.skill.metadata.forbidden):
            if rule.matches(name, input, workspace=self.ctx.workspace, deny=True):
                return ToolResult.error(f"Skill {self.skill.name!r} forbids {rule}.")
        reason = await check_permission(self.skill, name, input, self.ctx)
        if reason is not None:
            return ToolResult.error(f"Permission denied for {name}: {reason}")
        return await self.tools.dispatch(name, input, self.ctx)


def runs_read_only(ctx: ToolContext) -> bool:
    """Whether this session may only read (plan mode): said by the loop's gate (its
    ``read_only`` attribute, set by a plan-mode permission gate or a plan sub-agent's
    scope) or by ``services["read_only"]``. Duck-typed: tools/ never imports agent/."""
    if ctx.services.get("read_only"):
        return True
    return bool(getattr(ctx.services.get("tool_gate"), "read_only", False))
