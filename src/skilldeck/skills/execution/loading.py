"""The one "load a skill" operation every front door uses.

A skill is loaded for use by the ``Skill`` tool, ``skilldeck run --skill``, chat's
``/skill``, ``skills run``, the MCP server's ``load_skill`` and the framework
integrations. They all call :func:`load_skill_for_use`, so a body means the same
thing wherever it is read: the same placeholder substitutions
(:mod:`.substitute`), the same `` !`cmd` `` dynamic context (:mod:`.dynamic`) vetted
by the same permission gate, the same grants (``allowed-tools``) and forbidden
tools, the same plan-mode refusal.

What the caller brings, as Protocols (the skills layer never imports the agent or
the tools): a :class:`CommandGate` — the session's permission gate, asked about each
dynamic-context command as a ``Bash`` call — and a :class:`CommandRunner` that runs
an allowed command (the sandboxed shell runner). Decisions:

* no gate (``gate=None``: the MCP server, the integrations) → a body with dynamic
  context is *refused*, with a message saying why; its commands are never run
  unvetted, nor handed to the reader unexpanded as if they were instructions;
* a read-only gate (plan mode) → refused with :data:`PLAN_REFUSAL`: plan mode runs
  nothing but read-only tools;
* a command the gate does not allow, or one that fails → the whole load fails
  (a skill must not run half its context), as in the ``Skill`` tool;
* ``dynamic=False`` (``skills.dynamic_context = false``) → bodies verbatim.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Awaitable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from skilldeck.errors import PermissionDeniedError, SkilldeckError
from skilldeck.skills.execution.disclosure import render_level2
from skilldeck.skills.execution.dynamic import (
    CommandOutput,
    expand_dynamic_context,
    has_dynamic_context,
)
from skilldeck.skills.model.skill import Skill, SkillKind
from skilldeck.skills.rules import ToolRule, parse_rules

__all__ = [
    "NO_GATE",
    "PLAN_REFUSAL",
    "CommandGate",
    "CommandRunner",
    "LoadStatus",
    "LoadedSkill",
    "argument_string",
    "load_skill_for_use",
]

#: what a read-only (plan mode) session gets instead of running a skill's code
PLAN_REFUSAL = "plan mode: this skill runs code; leave plan mode to run it"
#: why a front door without a permission gate refuses dynamic context
NO_GATE = (
    "its dynamic context (!`command` lines) needs a permission gate to vet the commands, "
    "and {where} has none; load it in a skilldeck session (the Skill tool, run --skill, "
    "chat /skill) or turn dynamic context off (skills.dynamic_context = false)"
)


class CommandGate(Protocol):
    """The caller's permission gate, as the loader needs it."""

    @property
    def read_only(self) -> bool:
        """True under plan mode: no command may run."""
        ...

    async def check_command(self, skill: Skill, command: str) -> str | None:
        """None when ``command`` may run as a ``Bash`` call for ``skill``, else why not
        (an *ask* may be satisfied by the skill's own ``allowed-tools``)."""
        ...


class CommandRunner(Protocol):
    """Runs one allowed dynamic-context command (e.g. :func:`.dynamic.shell_runner`)."""

    def __call__(self, command: str, /) -> Awaitable[CommandOutput]: ...


class LoadStatus(StrEnum):
    LOADED = "loaded"
    #: not loaded on purpose: plan mode, or no gate for dynamic context
    REFUSED = "refused"
    #: not loaded: a command was denied or failed, a file could not be read
    FAILED = "failed"


@dataclass(frozen=True)
class LoadedSkill:
    """What loading a skill gave: the text to show and what the skill asks for."""

    skill: Skill
    status: LoadStatus
    #: level 2 (base directory, body after substitutions and dynamic context, files);
    #: empty unless loaded
    text: str = ""
    warnings: tuple[str, ...] = ()
    #: why it was refused or failed (None when loaded)
    error: str | None = None
    #: the error that stopped the load, when one did (a denied or failed command)
    exception: SkilldeckError | None = field(default=None, compare=False, repr=False)
    allowed_tools: tuple[str, ...] = field(init=False)
    forbidden_tools: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        meta = self.skill.metadata
        object.__setattr__(self, "allowed_tools", tuple(meta.allowed_tools))
        object.__setattr__(self, "forbidden_tools", tuple(meta.forbidden))

    @property
    def ok(self) -> bool:
        return self.status is LoadStatus.LOADED

    def raise_for_status(self) -> None:
        """For a front door that cannot go on without the skill (``run --skill``):
        raise what stopped the load (PermissionDeniedError for a refusal)."""
        if self.ok:
            return
        if self.exception is not None:
            raise self.exception
        raise PermissionDeniedError(self.error or f"Skill {self.name!r} was not loaded.")

    @property
    def name(self) -> str:
        return self.skill.name

    @property
    def kind(self) -> SkillKind:
        return self.skill.kind

    @property
    def runs_code(self) -> bool:
        """Whether using this skill means running code (a script or a code skill)."""
        return self.skill.kind is not SkillKind.PROMPT

    @property
    def grants(self) -> list[ToolRule]:
        """``allowed-tools`` as rules: what the permission layer pre-approves."""
        return parse_rules(self.allowed_tools)

    @property
    def forbidden(self) -> list[ToolRule]:
        """The skill's forbidden tools as deny rules."""
        return parse_rules(self.forbidden_tools)


def argument_string(args: Any, declared: list[str]) -> str | None:
    """Arguments as the string ``$ARGUMENTS`` expects (an object's declared fields or
    a list quoted like a shell, anything else as JSON)."""
    if args is None or isinstance(args, str):
        return args
    if isinstance(args, dict) and declared and all(k in args for k in declared):
        return " ".join(shlex.quote(str(args[k])) for k in declared)
    if isinstance(args, list):
        return " ".join(shlex.quote(str(a)) for a in args)
    return json.dumps(args, ensure_ascii=False)


async def load_skill_for_use(
    skill: Skill,
    *,
    arguments: Any = None,
    session_id: str | None,
    workspace: Path | None,
    gate: CommandGate | None,
    run_command: CommandRunner | None,
    dynamic: bool = True,
    where: str = "this front door",
) -> LoadedSkill:
    """Load ``skill``'s level 2 for use (see the module docstring for the decisions).

    Never raises for the skill's own problems: a refusal or failure is the result's
    ``status`` and ``error``. ``where`` names the front door in the no-gate message.
    """
    try:
        text = render_level2(
            skill,
            arguments=argument_string(arguments, skill.metadata.arguments),
            session_id=session_id,
            project_dir=workspace,
        )
    except SkilldeckError as e:
        return LoadedSkill(skill, LoadStatus.FAILED, error=str(e), exception=e)
    if not (dynamic and has_dynamic_context(text)):
        return LoadedSkill(skill, LoadStatus.LOADED, text)
    if gate is None or run_command is None:
        why = f"Skill {skill.name!r} was not loaded: " + NO_GATE.format(where=where)
        return LoadedSkill(skill, LoadStatus.REFUSED, error=why)
    if gate.read_only:
        detail = f"{skill.name!r} runs dynamic-context commands"
        return LoadedSkill(skill, LoadStatus.REFUSED, error=f"{PLAN_REFUSAL} ({detail}).")
    return await _expand(skill, text, gate, run_command)


async def _expand(
    skill: Skill, text: str, gate: CommandGate, run_command: CommandRunner
) -> LoadedSkill:
    warnings: list[str] = []

    async def check(command: str) -> str | None:
        if gate.read_only:  # belt and braces: nothing runs in plan mode
            return PLAN_REFUSAL
        return await gate.check_command(skill, command)

    try:
        text = await expand_dynamic_context(
            text,
            run=run_command,
            check=check,
            skill_name=skill.name,
            warnings=warnings,
            skill=skill,
        )
    except SkilldeckError as e:
        failed = LoadStatus.FAILED
        return LoadedSkill(skill, failed, warnings=tuple(warnings), error=str(e), exception=e)
    return LoadedSkill(skill, LoadStatus.LOADED, text, warnings=tuple(warnings))
