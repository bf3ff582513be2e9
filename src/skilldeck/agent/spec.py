"""What an agent is (:class:`AgentSpec`) and where it runs (:class:`Runtime`).

An agent is built in one step from these two values (``agent/builder.py``):

* the **spec** says *what*: the model, the agent definition, the skills, the
  limits, the permissions it adds, which tools it may hold at most and where it
  sits below the main agent. Two sessions built from equal specs behave alike;
* the **runtime** says *where*: the settings, the skill registry, the session
  store, who answers ``ask`` decisions, where events go and the collaborators
  tools may call. Many agents (a parent and its sub-agents, or many sessions of
  one server) share a runtime's registry and settings; nothing an agent decides is
  written back into them.

Both are frozen: a sub-agent gets a *new* spec (``dataclasses.replace``) and the
same runtime (or one with another store), never a patched object.

:class:`AgentFactory` is what :class:`~skilldeck.agent.subagents.subagents.SubagentManager`
receives to build children: it never imports the builder, so the builder can
import it (imports go down).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from skilldeck.agent.events import Event
from skilldeck.agent.permissions.gate import Approver, ToolGate
from skilldeck.agent.store import SessionStore
from skilldeck.agent.subagents import AgentDefinition
from skilldeck.config import Settings
from skilldeck.errors import ConfigError
from skilldeck.llm.messages import Model
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import Tool, ToolServices

if TYPE_CHECKING:
    from skilldeck.agent.loop import Agent

__all__ = [
    "AgentFactory",
    "AgentSpec",
    "PermissionOptions",
    "Runtime",
    "Scan",
    "SkillPreload",
    "check_max_turns",
    "names_of",
]


def names_of(value: Iterable[str] | None, param: str) -> tuple[str, ...]:
    """``value`` — a list of names or rules (``skills``, ``allow``, ``deny``…) — as a
    tuple. A lone string is a ConfigError, never split into one rule per character
    (``deny="Bash"`` would deny ``B``, ``a``, ``s``, ``h`` and let Bash run), and so is
    anything that is not an iterable of strings."""
    if value is None:
        return ()
    if isinstance(value, str | bytes):
        raise ConfigError(
            f"{param}= takes a list of strings, not the string {value!r}: "
            f"write {param}=[{value!r}]."
        )
    if not isinstance(value, Iterable):
        raise ConfigError(
            f"{param}= takes a list of strings, not {type(value).__name__} {value!r}."
        )
    items = tuple(value)
    bad = [item for item in items if not isinstance(item, str)]
    if bad:
        raise ConfigError(
            f"{param}= takes a list of strings; {bad[0]!r} is a {type(bad[0]).__name__}."
        )
    return items


def check_max_turns(value: object) -> None:
    """``max_turns`` is a whole number of at least 1 (None: the definition's or the
    configured default): ``0`` is not "the default" and ``-1`` is not "no limit"."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(
            f"max_turns={value!r} is not a turn limit: give a whole number of at least 1, "
            "or None for the configured default (agent.max_turns)."
        )


@dataclass(frozen=True)
class PermissionOptions:
    """What a caller (CLI flags, library) adds to the configured permissions."""

    mode: str | None = None
    allow: Sequence[str] = ()
    ask: Sequence[str] = ()
    deny: Sequence[str] = ()

    def __post_init__(self) -> None:
        for key in ("allow", "ask", "deny"):  # never one rule per character
            object.__setattr__(self, key, names_of(getattr(self, key), key))

    def to_dict(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "allow": list(self.allow),
            "ask": list(self.ask),
            "deny": list(self.deny),
        }


@dataclass(frozen=True)
class Scan:
    """How the registry was discovered (extra roots, defaults off): recorded with each
    session so a resumed one — or a resumed sub-agent — finds the same skills."""

    roots: tuple[Path, ...] = ()
    no_defaults: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "roots": [str(Path(r).resolve()) for r in self.roots],
            "no_defaults": self.no_defaults,
        }


@dataclass(frozen=True)
class SkillPreload:
    """Which skills every new session of the agent starts with loaded, and with what
    ``$ARGUMENTS``. Each body is loaded by the one load operation
    (:func:`skilldeck.tools.skill_tool.load_in_context`) in the new session's own
    context, so its `` !`cmd` `` dynamic context goes through the agent's own gate —
    or the session does not start, with the reason (``run --skill``, a ``Task`` with
    ``skills``, an agent definition's ``skills:``: one path for all)."""

    #: skills of the agent's composed set to preload; empty: the whole set, in its
    #: execution order (a name outside the set is a ConfigError when the agent is built)
    skills: tuple[str, ...] = ()
    #: what ``$ARGUMENTS`` is in each body (None: no arguments)
    arguments: str | None = None
    #: where a load's notices go (the sandbox fallback); None: a ``UserWarning``
    on_warning: Callable[[str], None] | None = None


@dataclass(frozen=True)
class AgentSpec:
    """What an agent is. Every field has the default a plain ``build_agent`` call has."""

    #: ``provider:model``, a ready ``Model``, or None (definition's, then configured)
    model: str | Model | None = None
    base_url: str | None = None
    #: an agent definition, or the name of one (AGENT.md or a built-in type)
    definition: str | AgentDefinition | None = None
    #: skills the run starts with (validated, composed; narrow the tools)
    skills: tuple[str, ...] = ()
    #: how the composed skills are preloaded into each new session
    preload: SkillPreload = SkillPreload()
    name: str | None = None
    instructions: str | None = None
    max_turns: int | None = None
    #: what the caller adds to the configured permissions (ignored when ``gate`` is set)
    permissions: PermissionOptions = PermissionOptions()
    #: a ready gate (a sub-agent's scope, a resumed session's record)
    gate: ToolGate | None = None
    #: the candidate tool objects (None: the built-ins and Memory)
    tools: tuple[Tool, ...] | None = None
    #: which of the tools the builder makes for this agent (``Skill``, ``Task``,
    #: ``TaskOutput``) it may offer; None: the default rule (see ``toolset``)
    bound_tools: frozenset[str] | None = None
    #: the most it may hold, by name (a parent's choice for a child, a launch record)
    only_tools: tuple[str, ...] | None = None
    #: 0 for a main agent; a sub-agent is one deeper than its parent
    depth: int = 0
    parent_session: str | None = None
    #: per-message skill hints (None: ``settings.skills.hints.enabled``)
    hints: bool | None = None
    #: text deltas as they stream (off for JSON events and sub-agents)
    stream_text: bool = True
    cwd: Path | None = None
    #: tool state every new session starts with (a child inherits learnt rules)
    initial_state: Mapping[str, Any] | None = None
    #: added to the launch record of new sessions (a sub-agent's type and depth)
    launch_extra: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "skills", names_of(self.skills, "skills"))
        if self.only_tools is not None:
            object.__setattr__(self, "only_tools", names_of(self.only_tools, "only_tools"))
        check_max_turns(self.max_turns)


@dataclass(frozen=True)
class Runtime:
    """Where an agent runs. Shared by a parent and its children."""

    settings: Settings
    #: None: discovered from ``settings`` and ``scan`` when an agent is built
    registry: SkillRegistry | None = None
    #: None: the agent opens (and closes) its own store connection
    store: SessionStore | None = None
    approver: Approver | None = None
    on_event: Callable[[Event], None] | None = None
    services: ToolServices = field(default_factory=ToolServices)
    scan: Scan = Scan()


class AgentFactory(Protocol):
    """Builds a complete agent from a spec and a runtime (``agent.factory.build``)."""

    def __call__(self, spec: AgentSpec, runtime: Runtime) -> Agent: ...
