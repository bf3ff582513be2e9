"""Which tools a run gets, and the gate that keeps it to them (least privilege).

``build_agent`` calls :func:`assemble_tools`; the steps, in order:

1. **candidates** — the tools passed in, or the defaults: the built-ins, ``Memory``,
   ``Skill`` (only when the agent definition allows skills *and* a skill is usable)
   and, when ``agent.max_depth`` allows sub-agents, ``Task`` (alias ``Agent``) and
   ``TaskOutput``;
2. **agent definition** — an AGENT.md's ``tools`` (None = all candidates) minus its
   ``disallowed-tools``;
3. **skills** — a run started with skills gets exactly the composed tool set: the
   tools some skill lists in ``allowed-tools``, minus every tool any skill forbids
   (:func:`skilldeck.skills.policy.compose`: the most restrictive rule wins, and no
   skill can grant ``Task``);
4. **permissions** — tools a ``deny`` rule removes entirely are not shown either;
5. **only_tools** — a resumed session never holds a tool it did not hold before
   (its launch record lists them).

Every narrowing is applied twice: the model is never *shown* a tool outside the set
(the registry handed to the ``Agent`` is filtered), and a forged call to one is never
*executed* (the gate refuses it first: "tool X is not allowed by the active skills").
Nothing here can widen a set: each step only removes tools.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from skilldeck.agent.definitions import AgentDefinition
from skilldeck.agent.gate import ToolGate
from skilldeck.agent.permissions import MODES, Mode, PermissionGate, PermissionPolicy, ScopedGate
from skilldeck.errors import ConfigError
from skilldeck.skills.policy import ComposedSkill, ToolPolicy, compose
from skilldeck.skills.toolrules import parse_rules
from skilldeck.tools.base import Tool, ToolRegistry

if TYPE_CHECKING:
    from skilldeck.agent.subagents import SubagentManager
    from skilldeck.config import Settings
    from skilldeck.skills.registry import SkillRegistry
    from skilldeck.tools.skill_tool import SkillTool

#: builds the sub-agent manager for the final tools and gate (``build_agent`` wires it)
ManagerFactory = Callable[[ToolRegistry, ToolGate], "SubagentManager"]


@dataclass(frozen=True)
class PermissionOptions:
    """What a caller (CLI flags, library) adds to the configured permissions."""

    mode: str | None = None
    allow: Sequence[str] = ()
    ask: Sequence[str] = ()
    deny: Sequence[str] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "allow": list(self.allow),
            "ask": list(self.ask),
            "deny": list(self.deny),
        }


@dataclass
class Toolset:
    """The result: the tools the model sees, the gate, and what decided them."""

    tools: ToolRegistry
    gate: ToolGate
    composed: ComposedSkill | None = None
    policy: PermissionPolicy | None = None
    manager: SubagentManager | None = None
    hidden: list[str] = field(default_factory=list)


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
    lists, so each file is read again here), plus what the environment set."""
    rules = [str(r) for r in getattr(settings.permissions, key)]
    for table in settings.config_tables():  # the workspace's only when trusted
        section = table.get("permissions")
        found = section.get(key) if isinstance(section, dict) else None
        if isinstance(found, list):
            rules.extend(str(r) for r in found)
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
    settings: Settings, registry: SkillRegistry, refs: Sequence[str], available: Sequence[str]
) -> ComposedSkill | None:
    """Validate and compose ``refs`` (unknown names raise SkillNotFoundError with
    suggestions; an invalid set raises PolicyError with every diagnostic)."""
    if not refs:
        return None
    for ref in refs:
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


def default_candidates(
    registry: SkillRegistry, *, allow_skills: bool
) -> tuple[ToolRegistry, SkillTool | None]:
    """The built-ins, Memory, and Skill when skills are allowed and one is usable."""
    from skilldeck.tools.builtin import builtin_tools
    from skilldeck.tools.memory import MemoryTool

    tools = ToolRegistry([*builtin_tools(), MemoryTool()])
    skill_tool = None
    if allow_skills and any(s.available for s in registry.list()):
        from skilldeck.tools.skill_tool import SkillTool

        skill_tool = SkillTool(registry, tools=tools)
        tools.register(skill_tool)
    return tools, skill_tool


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
) -> Toolset:
    """Steps 1–5 of the module docstring; see there."""
    skill_tool: SkillTool | None = None
    if tools is not None:
        candidates = ToolRegistry(list(tools))
    else:
        allow_skills = definition.allow_skills if definition is not None else True
        candidates, skill_tool = default_candidates(registry, allow_skills=allow_skills)
    offered = set(candidates.names())
    if tools is None and manager_factory is not None and settings.agent.max_depth >= 1:
        offered |= SPAWNING  # registered below, once the final tools and gate exist
    names = set(offered)
    scoped: list[tuple[ToolPolicy, str | None]] = []
    agent_policy = definition_policy(definition)
    if agent_policy is not None and definition is not None:
        names = agent_policy.visible_tools(names)
        scoped.append((agent_policy, definition.name))
    composed = compose_skills(settings, registry, skills, sorted(names))
    if composed is not None:
        names = composed.policy.visible_tools(names)
    policy = None
    if gate is None:
        policy = permission_policy(
            settings,
            permissions,
            definition=definition,
            skill_policy=composed.policy if composed else None,
            read_only_tools=[n for n in offered if _read_only(candidates, n)],
        )
        names = policy.visible_tools(names)
        inner: ToolGate = PermissionGate(policy)
    else:
        inner = gate
        if composed is not None:
            scoped.insert(0, (composed.policy, None))
    if only_tools is not None:
        names &= set(only_tools)
    final = candidates.subset(names)
    final_gate: ToolGate = ScopedGate(scoped, inner) if scoped else inner
    if skill_tool is not None and "Skill" in final:
        skill_tool.tools = final  # code skills call tools through this registry
        skill_tool.available_tools = set(names)
    manager = None
    if manager_factory is not None and names & SPAWNING:
        manager = _register_spawning(final, names, manager_factory(final, final_gate))
    return Toolset(final, final_gate, composed, policy, manager, sorted(offered - names))


#: the sub-agent tools (``Agent`` is an alias of ``Task``)
SPAWNING = frozenset({"Task", "TaskOutput"})


def _register_spawning(
    final: ToolRegistry, names: set[str], manager: SubagentManager
) -> SubagentManager:
    """``Task`` (alias ``Agent``) and ``TaskOutput``, on the manager that holds ``final``
    as the parent's tools: a child never holds a tool this run does not."""
    from skilldeck.agent.subagents import TaskOutputTool, TaskTool

    if "Task" in names:
        final.register(TaskTool(manager), aliases=("Agent",))
    if "TaskOutput" in names:
        final.register(TaskOutputTool(manager))
    return manager


def _read_only(tools: ToolRegistry, name: str) -> bool:
    tool = tools.get(name)
    return bool(tool is not None and tool.read_only)
