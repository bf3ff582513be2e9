"""Which tools a run gets, and the gate that keeps it to them (least privilege).

One pipeline decides a tool set, for the main agent and for every sub-agent
(:func:`narrow`); each step only removes tools:

1. **offered** — the candidates: the tools passed in, or the built-ins and
   ``Memory``; plus the tools the builder makes for this agent (*bound* tools):
   ``Skill`` (only when the agent definition allows skills *and* a skill is usable)
   and, when ``agent.max_depth`` allows sub-agents, ``Task`` (alias ``Agent``) and
   ``TaskOutput``. For a sub-agent: its parent's tools;
2. **definition** — an AGENT.md's ``tools`` (None = all offered; for a sub-agent
   type, all its parent's tools but the spawning ones) minus its
   ``disallowed-tools``; a ``plan`` sub-agent type keeps only read-only tools;
3. **skills** — a run started with skills gets exactly the composed tool set: the
   tools some skill lists in ``allowed-tools``, minus every tool any skill forbids
   (:func:`skilldeck.skills.policy.policy.compose`: the most restrictive rule wins, and no
   skill can grant ``Task``). When *no* skill of the set declares ``allowed-tools``
   (94% of real skills), ``skills.undeclared_tools`` decides: ``"parent"`` (default)
   keeps the tools offered so far but the spawning ones, minus what the skills
   forbid; ``"none"`` keeps nothing (:func:`undeclared_policy`);
4. **rules** — tools a ``deny`` rule removes entirely are not shown either (a
   sub-agent's calls pass its parent's gate instead);
5. **cap** — the parent's choice for a child (depth, ``Skill``), or a resumed
   session's launch record: it never holds a tool it did not hold before.

A set of skills that leaves a run or a sub-agent without any tool is refused up front
(``PolicyError``, SD311, naming the skills and the fix): such a run could only answer
in text and report a task as done that it never did.

Every narrowing is applied twice: the model is never *shown* a tool outside the set
(the registry handed to the ``Agent`` is filtered), and a forged call to one is never
*executed* (the gate refuses it first: "tool X is not allowed by the active skills").
The one set of spawning tool names is :data:`SPAWNING`
(``skills.toolrules.SPAWNING_TOOLS``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from skilldeck.agent.permissions import ToolGate
from skilldeck.agent.permissions.permissions import (
    MODES,
    PLAN_SAFE,
    Mode,
    PermissionGate,
    PermissionPolicy,
    ScopedGate,
)
from skilldeck.agent.spec import PermissionOptions
from skilldeck.agent.subagents import AgentDefinition, Spawner, TaskOutputTool, TaskTool
from skilldeck.config import Settings
from skilldeck.errors import ConfigError, PolicyError
from skilldeck.settings.precedence import file_rules
from skilldeck.skills.model.diagnostics import Diagnostic, Severity
from skilldeck.skills.policy.policy import ComposedSkill, ToolPolicy, compose
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.rules import SPAWNING_TOOLS, ToolRule, parse_rules
from skilldeck.tools.base import Tool, ToolRegistry
from skilldeck.tools.builtin import builtin_tools
from skilldeck.tools.memory import MemoryTool
from skilldeck.tools.skill_tool import SkillTool

__all__ = [
    "BOUND",
    "SPAWNING",
    "ManagerFactory",
    "Narrowed",
    "PermissionOptions",
    "Toolset",
    "assemble_tools",
    "compose_skills",
    "config_rules",
    "definition_policy",
    "narrow",
    "permission_policy",
    "protocol_section",
    "read_only_policy",
    "type_policy",
    "undeclared_policy",
]

#: the sub-agent tools (``Agent`` is an alias of ``Task``): the one set, everywhere
SPAWNING = SPAWNING_TOOLS
#: tools the builder makes for each agent (bound to its own tools, gate and store)
BOUND = frozenset({"Skill"}) | SPAWNING

#: builds the sub-agent manager for the final tools and gate (the builder wires it)
ManagerFactory = Callable[[ToolRegistry, ToolGate], Spawner]

#: a policy the gate enforces on top of its rules, and the agent type it comes from
Scoped = tuple[ToolPolicy, str | None]


@dataclass
class Toolset:
    """The result: the tools the model sees, the gate, and what decided them."""

    tools: ToolRegistry
    gate: ToolGate
    composed: ComposedSkill | None = None
    policy: PermissionPolicy | None = None
    manager: Spawner | None = None
    hidden: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Narrowed:
    """What :func:`narrow` decided: the names, the composed skill set, the scoped
    (definition) policies and the permission policy whose visible tools it kept."""

    names: frozenset[str]
    composed: ComposedSkill | None
    scoped: tuple[Scoped, ...]
    policy: PermissionPolicy | None


#: step 4: the permission policy for the composed set (None: a given gate rules)
RulesStep = Callable[[ComposedSkill | None], PermissionPolicy | None]


def narrow(
    settings: Settings,
    registry: SkillRegistry | None,
    offered: Iterable[str],
    *,
    definition: Sequence[Scoped] = (),
    skills: Sequence[str] = (),
    rules: RulesStep | None = None,
    cap: Iterable[str] | None = None,
    check_names: bool = True,
) -> Narrowed:
    """Steps 2-5 of the module docstring, for a main agent and a sub-agent alike.
    ``check_names`` False reports an unknown skill inside the PolicyError (SD301), as
    a refused spawn lists it, instead of raising SkillNotFoundError."""
    names = set(offered)
    for scope, _ in definition:
        names = scope.visible_tools(names)
    composed = None
    if skills:
        if registry is None:
            raise PolicyError("Skills were requested but no skill registry is available.")
        composed = compose_skills(
            settings, registry, skills, sorted(names), check_names=check_names
        )
    if composed is not None:
        composed = undeclared_policy(settings, composed, names)
        names = composed.policy.visible_tools(names)
    policy = rules(composed) if rules is not None else None
    if policy is not None:
        names = policy.visible_tools(names)
    if cap is not None:
        names &= set(cap)
    if composed is not None and not names:
        raise _no_tools(settings, composed)
    return Narrowed(frozenset(names), composed, tuple(definition), policy)


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
    allow = tuple(ToolRule(n) for n in sorted(set(offered) - SPAWNING))
    return replace(
        composed,
        policy=ToolPolicy(allow=allow, deny=composed.policy.deny),
        warnings=[w for w in composed.warnings if w.code != "SD307"],
    )


def _no_tools(settings: Settings, composed: ComposedSkill) -> PolicyError:
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


def permission_policy(
    settings: Settings,
    options: PermissionOptions,
    *,
    definition: AgentDefinition | None = None,
    skill_policy: ToolPolicy | None = None,
    read_only_tools: Sequence[str] = (),
) -> PermissionPolicy:
    """Config rules plus the caller's; the mode is the caller's, else the agent
    definition's, else the config's. Bad rules or modes raise ConfigError."""
    conf = settings.permissions
    mode = options.mode or (definition.permission_mode if definition else None) or conf.mode
    if mode not in MODES:
        raise ConfigError(f"Unknown permission mode {mode!r}; use one of {', '.join(MODES)}.")
    try:
        return PermissionPolicy.from_lists(
            mode=_as_mode(mode),
            allow=[*config_rules(settings, "allow"), *options.allow],
            ask=[*config_rules(settings, "ask"), *options.ask],
            deny=[*config_rules(settings, "deny"), *options.deny],
            skill_policy=skill_policy,
            read_only_tools=read_only_tools,
        )
    except ValueError as e:
        raise ConfigError(f"Invalid permission rule: {e}") from e


def config_rules(settings: Settings, key: str) -> list[str]:
    """``permissions.<key>`` from every config file, merged: a workspace config's
    ``deny = []`` must not erase the user's deny rules (settings merging replaces
    lists, so each file's list counts, as :mod:`skilldeck.settings.precedence` says),
    plus what the environment or the arguments set. The files as loaded, not re-read."""
    rules = [str(r) for r in getattr(settings.permissions, key)]
    rules += file_rules(settings.layers.files, key)  # the workspace's only when trusted
    return list(dict.fromkeys(rules))


def _as_mode(mode: str) -> Mode:
    for known in MODES:
        if known == mode:
            return known
    raise ConfigError(f"Unknown permission mode {mode!r}; use one of {', '.join(MODES)}.")


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


def protocol_section(composed: ComposedSkill | None) -> str:
    """The composed skills' execution protocol, preconditions and postconditions."""
    if composed is None:
        return ""
    parts = []
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
    if not parts:
        return ""
    names = ", ".join(composed.names)
    return f"# Active skills: {names}\n" + "\n\n".join(parts)


def type_policy(definition: AgentDefinition, parent_tools: set[str]) -> ToolPolicy:
    """What a sub-agent type may use, bounded by the parent's tools (a type without
    ``tools`` gets all of them but the spawning ones)."""
    deny = tuple(parse_rules(definition.disallowed_tools))
    if definition.tools is None:
        allow = tuple(ToolRule(n) for n in sorted(parent_tools - SPAWNING))
    else:
        allow = tuple(parse_rules(definition.tools))
    return ToolPolicy(allow=allow, deny=deny).within(parent_tools)


def read_only_policy(tools: ToolRegistry, names: Iterable[str]) -> ToolPolicy:
    """``permission-mode: plan`` on a sub-agent type: only read-only tools. Other
    modes are not applied to a child: its calls pass the parent's gate, and a
    definition must not widen what the parent's session allows."""
    keep = {n for n in names if n in PLAN_SAFE or _read_only(tools, n)}
    return ToolPolicy(allow=tuple(ToolRule(n) for n in sorted(keep)))


def default_bound(
    settings: Settings,
    registry: SkillRegistry,
    *,
    definition: AgentDefinition | None,
    spawning: bool,
) -> frozenset[str]:
    """The bound tools a main (or resumed) agent is offered: ``Skill`` when the
    definition allows skills and one is usable; the spawning tools when sub-agents
    are allowed at all."""
    bound: set[str] = set()
    allow_skills = definition.allow_skills if definition is not None else True
    if allow_skills and any(s.available for s in registry.list()):
        bound.add("Skill")
    if spawning and settings.agent.max_depth >= 1:
        bound |= {"Task", "TaskOutput"}
    return frozenset(bound)


def assemble_tools(
    settings: Settings,
    registry: SkillRegistry,
    *,
    tools: Sequence[Tool] | None,
    definition: AgentDefinition | None,
    skills: Sequence[str],
    gate: ToolGate | None,
    permissions: PermissionOptions,
    manager_factory: ManagerFactory | None,
    only_tools: Sequence[str] | None = None,
    bound: frozenset[str] | None = None,
) -> Toolset:
    """The pipeline for one agent, then its bound tools made over the final set."""
    if tools is None:
        candidates = ToolRegistry([*builtin_tools(), MemoryTool()])
        if bound is None:
            bound = default_bound(
                settings, registry, definition=definition, spawning=manager_factory is not None
            )
    else:
        candidates = ToolRegistry(list(tools))
    bound = frozenset(bound or ()) - set(candidates.names())
    if manager_factory is None:
        bound -= SPAWNING
    offered = set(candidates.names()) | bound
    read_only = [n for n in offered if _read_only(candidates, n)]
    if "Skill" in bound and SkillTool.read_only:
        read_only.append("Skill")
    rules: RulesStep | None = None
    if gate is None:

        def rules(composed: ComposedSkill | None) -> PermissionPolicy:
            return permission_policy(
                settings,
                permissions,
                definition=definition,
                skill_policy=composed.policy if composed else None,
                read_only_tools=read_only,
            )

    agent_policy = definition_policy(definition)
    scoped: list[Scoped] = []
    if agent_policy is not None and definition is not None:
        scoped.append((agent_policy, definition.name))
    out = narrow(
        settings, registry, offered, definition=scoped, skills=skills, rules=rules, cap=only_tools
    )
    names = set(out.names)
    inner: ToolGate
    if out.policy is not None:
        inner = PermissionGate(out.policy)
    else:
        assert gate is not None, "rules are built from the settings when no gate is given"
        inner = gate
        if out.composed is not None:
            scoped.insert(0, (out.composed.policy, None))
    final_gate: ToolGate = ScopedGate(scoped, inner) if scoped else inner
    final = candidates.subset(names)
    if "Skill" in names and "Skill" in bound:  # code skills call tools through ``final``
        # the catalog goes once, in the system prompt (agent/startup.py: ranked by task)
        skill_tool = SkillTool(
            registry, tools=final, available_tools=set(names), list_in_description=False
        )
        final.register(skill_tool)
    manager = None
    if manager_factory is not None and names & SPAWNING:
        manager = manager_factory(final, final_gate)
        if "Task" in names:
            final.register(TaskTool(manager), aliases=("Agent",))
        if "TaskOutput" in names:
            final.register(TaskOutputTool(manager))
    return Toolset(final, final_gate, out.composed, out.policy, manager, sorted(offered - names))


def _read_only(tools: ToolRegistry, name: str) -> bool:
    tool = tools.get(name)
    return bool(tool is not None and tool.read_only)
