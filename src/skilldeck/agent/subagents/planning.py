"""Planning a sub-agent before anything runs: its type, skills, tools and gate.

A plan is decided from the parent alone and refused up front when it cannot hold:

* the agent type decides the candidate tools (``explore``: Read/Glob/Grep; ``plan``:
  those plus read-only Bash; ``general-purpose``: the parent's tools minus spawning;
  AGENT.md types: their ``tools`` list, minus ``disallowed-tools``);
* injected skills are validated and composed, and narrow the set again
  (``agent/toolset.py`` :func:`~skilldeck.agent.toolset.narrow`, the pipeline every
  agent's tools go through); an invalid set raises ``PolicyError`` with its diagnostics;
* a ``disable-model-invocation`` skill is the user's to invoke: the model cannot
  preload it into a child (SD308);
* spawning again needs depth (``settings.agent.max_depth``);
* the child's spec (:func:`child_spec`) is scoped under the parent's gate, one level
  deeper, starting with the rules its parent's session learnt at run time, and records
  its type and definition so ``resume`` rebuilds that child.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from skilldeck.agent.assembly import read_only_policy, type_policy
from skilldeck.agent.permissions import SESSION_RULES_KEY, ScopedGate, ToolGate
from skilldeck.agent.spec import AgentSpec
from skilldeck.agent.store import definition_to_dict
from skilldeck.agent.subagents.definitions import AgentDefinition
from skilldeck.agent.subagents.task_tools import ParentSession
from skilldeck.agent.toolset import BOUND, SPAWNING, narrow
from skilldeck.config import Settings
from skilldeck.errors import PolicyError, SkillNotFoundError
from skilldeck.llm.messages import Model
from skilldeck.skills.model.diagnostics import Diagnostic, Severity
from skilldeck.skills.policy.policy import ComposedSkill, ToolPolicy
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import Tool, ToolRegistry

__all__ = [
    "Plan",
    "child_instructions",
    "child_spec",
    "child_tools",
    "plan_child",
    "refuse_user_only",
]

#: what a plan decides: the type, the policies (skills first), the composed set, tools
Plan = tuple[AgentDefinition, list[tuple[ToolPolicy, str | None]], ComposedSkill | None, list[str]]


def plan_child(
    settings: Settings,
    registry: SkillRegistry | None,
    definition: AgentDefinition,
    parent_tools: ToolRegistry,
    *,
    depth: int,
    skills: Sequence[str],
) -> Plan:
    """The child's tools through ``toolset.narrow``: its type's policy, read-only for a
    ``plan`` type, the composed skills, and a cap of the parent's tools minus what
    its depth and type rule out. ``depth`` is the parent's. Raises PolicyError."""
    parent_names = set(parent_tools.names())
    steps: list[tuple[ToolPolicy, str | None]] = [
        (type_policy(definition, parent_names), definition.name)
    ]
    if definition.permission_mode == "plan":  # a child's mode can only narrow
        steps.append((read_only_policy(parent_tools, parent_names), definition.name))
    removed = set(SPAWNING) if depth + 1 >= settings.agent.max_depth else set()
    if not (definition.allow_skills or definition.skills or skills):
        removed.add("Skill")
    out = narrow(
        settings,
        registry,
        parent_names,
        definition=steps,
        skills=[*definition.skills, *skills],
        cap=parent_names - removed,
        check_names=False,
    )
    composed = out.composed
    policies = [*([(composed.policy, None)] if composed else []), *out.scoped]
    return definition, policies, composed, sorted(out.names)


def refuse_user_only(registry: SkillRegistry | None, refs: Sequence[str]) -> None:
    """PolicyError when a requested skill is marked ``disable-model-invocation``: the
    model cannot load it with Skill, so it cannot preload it into a child either.
    (An agent definition's own ``skills`` are the user's choice and stay allowed.)"""
    if registry is None:
        return
    refused = []
    for ref in refs:
        name, _, version = ref.partition("@")
        try:
            skill = registry.get(name, version or None)
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


def child_instructions(definition: AgentDefinition, composed: ComposedSkill | None) -> str:
    """The child's instructions; the builder adds the composed skills' execution
    protocol, preconditions and postconditions after them."""
    parts = [definition.instructions or "You are a sub-agent. Complete the task you are given."]
    if composed is not None and composed.output_contracts:
        schemas = json.dumps(composed.output_contracts, indent=2)
        parts.append(
            "Your final answer must be a single JSON value matching the output contract "
            f"of the skill(s) below (no prose around it):\n{schemas}"
        )
    return "\n\n".join(parts)


def child_tools(parent_tools: ToolRegistry, tool_names: Sequence[str]) -> list[Tool]:
    """The parent's tool objects the child may hold, but the bound ones: the builder
    makes the child its own ``Skill`` tool (code skills then call only what the child
    holds) and its own ``Task`` tools, on a manager one level deeper that shares the
    child's store."""
    return [
        tool
        for name in tool_names
        if name not in BOUND and (tool := parent_tools.get(name)) is not None
    ]


def child_spec(
    plan: Plan,
    *,
    model: Model,
    parent_tools: ToolRegistry,
    parent_gate: ToolGate,
    parent: ParentSession | None,
    depth: int,
    scan: Mapping[str, Any],
) -> AgentSpec:
    """What the child is: the planned tools (a cap), a gate scoped under the parent's,
    one level below ``depth`` (the parent's), starting with the rules its parent learnt."""
    definition, policies, composed, tool_names = plan
    read_only = definition.permission_mode == "plan"  # a child's mode only narrows
    inherited = parent.rules if parent is not None else None
    return AgentSpec(
        model=model,
        skills=tuple(composed.names) if composed else (),
        tools=tuple(child_tools(parent_tools, tool_names)),
        bound_tools=frozenset(tool_names) & BOUND,
        only_tools=tuple(tool_names),
        gate=ScopedGate(policies, parent_gate, read_only=read_only),
        instructions=child_instructions(definition, composed),
        name=definition.name,
        max_turns=definition.max_turns,
        hints=False,
        stream_text=False,
        initial_state={SESSION_RULES_KEY: copy.deepcopy(inherited)} if inherited else None,
        parent_session=parent.session_id if parent is not None else None,
        depth=depth + 1,
        launch_extra={
            "agent_type": definition.name,
            "definition": definition_to_dict(definition),
            **scan,
        },
    )
