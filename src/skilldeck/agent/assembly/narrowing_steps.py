"""The policy each step of the tool-narrowing pipeline applies
(:func:`skilldeck.agent.toolset.narrow`; the steps are listed in ``agent/toolset.py``).

* **definition** — an AGENT.md's ``tools`` / ``disallowed-tools``
  (:func:`definition_policy`); a sub-agent type bounded by its parent's tools
  (:func:`type_policy`), read-only for a ``plan`` type (:func:`read_only_policy`);
* **skills** — the requested skills validated and composed (:func:`compose_skills`:
  the most restrictive rule wins), and what a set in which no skill declares
  ``allowed-tools`` keeps (:func:`undeclared_policy`, ``skills.undeclared_tools``);
* a set of skills that leaves no tool is refused (:func:`no_tools_error`, SD311).

Each is a :class:`~skilldeck.skills.policy.policy.ToolPolicy`: a step only removes tools.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from skilldeck.agent.permissions.permissions import PLAN_SAFE
from skilldeck.agent.subagents import AgentDefinition
from skilldeck.config import Settings
from skilldeck.errors import ConfigError, PolicyError
from skilldeck.skills.model.diagnostics import Diagnostic, Severity
from skilldeck.skills.policy.policy import ComposedSkill, ToolPolicy, compose
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.rules import SPAWNING_TOOLS, ToolRule, parse_rules
from skilldeck.tools.base import ToolRegistry

__all__ = [
    "compose_skills",
    "definition_policy",
    "is_read_only",
    "no_tools_error",
    "read_only_policy",
    "type_policy",
    "undeclared_policy",
]


def definition_policy(definition: AgentDefinition | None) -> ToolPolicy | None:
    """An agent definition's ``tools`` / ``disallowed-tools`` as a policy (None: no limit)."""
    if definition is None or (definition.tools is None and not definition.disallowed_tools):
        return None
    try:
        allow = None if definition.tools is None else tuple(parse_rules(definition.tools))
        deny = tuple(parse_rules(definition.disallowed_tools))
    except ValueError as e:
        raise ConfigError(f"Agent {definition.name!r}: {e}", path=definition.path) from e
    return ToolPolicy(allow=allow, deny=deny)


def type_policy(definition: AgentDefinition, parent_tools: set[str]) -> ToolPolicy:
    """What a sub-agent type may use, bounded by the parent's tools (a type without
    ``tools`` gets all of them but the spawning ones)."""
    deny = tuple(parse_rules(definition.disallowed_tools))
    if definition.tools is None:
        allow = tuple(ToolRule(n) for n in sorted(parent_tools - SPAWNING_TOOLS))
    else:
        allow = tuple(parse_rules(definition.tools))
    return ToolPolicy(allow=allow, deny=deny).within(parent_tools)


def read_only_policy(tools: ToolRegistry, names: Iterable[str]) -> ToolPolicy:
    """``permission-mode: plan`` on a sub-agent type: only read-only tools. Other
    modes are not applied to a child: its calls pass the parent's gate, and a
    definition must not widen what the parent's session allows."""
    keep = {n for n in names if n in PLAN_SAFE or is_read_only(tools, n)}
    return ToolPolicy(allow=tuple(ToolRule(n) for n in sorted(keep)))


def compose_skills(
    settings: Settings,
    registry: SkillRegistry,
    refs: Sequence[str],
    available: Sequence[str],
    *,
    check_names: bool = True,
) -> ComposedSkill | None:
    """Validate and compose ``refs`` (unknown names raise SkillNotFoundError with
    suggestions; an invalid set raises PolicyError with every diagnostic)."""
    if not refs:
        return None
    for ref in refs if check_names else ():
        name, _, version = ref.partition("@")
        registry.get(name, version or None)
    return compose(
        list(dict.fromkeys(refs)),
        registry,
        conflicts=settings.skills.conflicts,
        parent_tools=available,
    )


def undeclared_policy(
    settings: Settings, composed: ComposedSkill, offered: Iterable[str]
) -> ComposedSkill:
    """``skills.undeclared_tools = "parent"``: a set in which no skill declares
    ``allowed-tools`` keeps ``offered`` (never a spawning tool) minus what the skills
    forbid, and loses the "grants nothing" warnings that no longer hold. A set where
    some skill declares tools is left alone: the declared skills decide."""
    if settings.skills.undeclared_tools != "parent":
        return composed
    if any(skill.metadata.allowed_tools for skill in composed.skills):
        return composed
    allow = tuple(ToolRule(n) for n in sorted(set(offered) - SPAWNING_TOOLS))
    return replace(
        composed,
        policy=ToolPolicy(allow=allow, deny=composed.policy.deny),
        warnings=[w for w in composed.warnings if w.code != "SD307"],
    )


def no_tools_error(settings: Settings, composed: ComposedSkill) -> PolicyError:
    """SD311: the skills leave no tool; what to change."""
    names = ", ".join(composed.names)
    undeclared = [s.name for s in composed.skills if not s.metadata.allowed_tools]
    if undeclared and settings.skills.undeclared_tools == "none":
        fix = (
            f"{', '.join(undeclared)} declare(s) no allowed-tools and skills.undeclared_tools "
            'is "none": add allowed-tools to the skill, or set skills.undeclared_tools = '
            '"parent" to give it the run\'s tools'
        )
    else:
        fix = (
            "the tools they allow are not held here or are forbidden: allow them "
            "(permissions, the agent type's tools) or choose other skills"
        )
    message = f"Skills {names} leave this run no tool, so it could not act on its task; {fix}."
    diagnostic = Diagnostic(code="SD311", rule="no-tools", message=message, severity=Severity.ERROR)
    return PolicyError(message, diagnostics=[diagnostic])


def is_read_only(tools: ToolRegistry, name: str) -> bool:
    """Whether the tool ``name`` in ``tools`` changes nothing (its ``read_only`` flag)."""
    tool = tools.get(name)
    return bool(tool is not None and tool.read_only)
