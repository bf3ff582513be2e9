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
   forbid; ``"none"`` keeps nothing (``undeclared_policy``);
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

The policy of each step lives in ``agent/assembly/narrowing_steps.py`` and the
permission rules of step 4 in ``agent/assembly/permission_rules.py``; here are the
pipeline (:func:`narrow`) and one agent's tools and gate (:func:`assemble_tools`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from skilldeck.agent.assembly import (
    compose_skills,
    definition_policy,
    is_read_only,
    no_tools_error,
    permission_policy,
    undeclared_policy,
    warn_unknown_tools,
)
from skilldeck.agent.permissions import ToolGate
from skilldeck.agent.permissions.permissions import PermissionGate, PermissionPolicy, ScopedGate
from skilldeck.agent.spec import PermissionOptions
from skilldeck.agent.subagents import AgentDefinition, Spawner, TaskOutputTool, TaskTool
from skilldeck.config import Settings
from skilldeck.errors import PolicyError
from skilldeck.skills.policy.policy import ComposedSkill, ToolPolicy
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.rules import SPAWNING_TOOLS
from skilldeck.tools.base import Tool, ToolRegistry
from skilldeck.tools.builtin import builtin_tools
from skilldeck.tools.memory import MemoryTool
from skilldeck.tools.skill_tool import SkillTool

__all__ = [
    "BOUND",
    "SPAWNING",
    "ManagerFactory",
    "Narrowed",
    "Toolset",
    "assemble_tools",
    "default_bound",
    "narrow",
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
        raise no_tools_error(settings, composed)
    return Narrowed(frozenset(names), composed, tuple(definition), policy)


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
    if allow_skills and registry.usable():
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
    rules = None
    if gate is None:
        warn_unknown_tools(settings, permissions, offered)
        rules = _rules_step(settings, permissions, definition, _read_only_names(candidates, bound))
    agent_policy = definition_policy(definition)
    scoped: list[Scoped] = []
    if agent_policy is not None and definition is not None:
        scoped.append((agent_policy, definition.name))
    out = narrow(
        settings, registry, offered, definition=scoped, skills=skills, rules=rules, cap=only_tools
    )
    final_gate = _final_gate(out, gate, scoped)
    final = candidates.subset(set(out.names))
    manager = _bind_tools(final, out.names, bound, registry, manager_factory, final_gate)
    hidden = sorted(offered - out.names)
    return Toolset(final, final_gate, out.composed, out.policy, manager, hidden)


def _read_only_names(candidates: ToolRegistry, bound: frozenset[str]) -> list[str]:
    """The offered tools that change nothing (plan mode lets only these through)."""
    read_only = [n for n in candidates.names() if is_read_only(candidates, n)]
    if "Skill" in bound and SkillTool.read_only:
        read_only.append("Skill")
    return read_only


def _rules_step(
    settings: Settings,
    permissions: PermissionOptions,
    definition: AgentDefinition | None,
    read_only: list[str],
) -> RulesStep:
    """Step 4 when no gate is given: the permission policy for the composed set."""

    def rules(composed: ComposedSkill | None) -> PermissionPolicy:
        return permission_policy(
            settings,
            permissions,
            definition=definition,
            skill_policy=composed.policy if composed else None,
            read_only_tools=read_only,
        )

    return rules


def _final_gate(out: Narrowed, gate: ToolGate | None, scoped: list[Scoped]) -> ToolGate:
    """The agent's gate: the rules :func:`narrow` kept (or the given gate, behind the
    composed skills' policy), scoped by the definition's policy."""
    inner: ToolGate
    if out.policy is not None:
        inner = PermissionGate(out.policy)
    else:
        assert gate is not None, "rules are built from the settings when no gate is given"
        inner = gate
        if out.composed is not None:
            scoped.insert(0, (out.composed.policy, None))
    return ScopedGate(scoped, inner) if scoped else inner


def _bind_tools(
    final: ToolRegistry,
    names: frozenset[str],
    bound: frozenset[str],
    registry: SkillRegistry,
    manager_factory: ManagerFactory | None,
    gate: ToolGate,
) -> Spawner | None:
    """Make the bound tools over the final set: ``Skill`` (code skills call tools
    through ``final``) and ``Task`` / ``TaskOutput`` on the sub-agent manager made for
    ``final`` and ``gate``, which is returned."""
    if "Skill" in names and "Skill" in bound:
        # the catalog goes once, in the system prompt (agent/startup.py: ranked by task)
        skill_tool = SkillTool(
            registry, tools=final, available_tools=set(names), list_in_description=False
        )
        final.register(skill_tool)
    if manager_factory is None or not names & SPAWNING:
        return None
    manager = manager_factory(final, gate)
    if "Task" in names:
        final.register(TaskTool(manager), aliases=("Agent",))
    if "TaskOutput" in names:
        final.register(TaskOutputTool(manager))
    return manager
