"""The instructions an agent's system prompt starts with (``agent/startup.py`` adds the
environment, the tools and the skills catalog around them).

The caller's instructions, else the agent definition's, else skilldeck's default
(its compact form for small models); then, for a run started with skills, their
execution protocol, preconditions and postconditions (:func:`protocol_section`).
"""

from __future__ import annotations

from skilldeck.agent.prompt import COMPACT_INSTRUCTIONS, DEFAULT_INSTRUCTIONS
from skilldeck.agent.subagents import AgentDefinition
from skilldeck.skills.policy.policy import ComposedSkill

__all__ = ["agent_instructions", "protocol_section"]


def agent_instructions(
    explicit: str | None,
    definition: AgentDefinition | None,
    composed: ComposedSkill | None,
    *,
    compact: bool,
) -> str:
    """The caller's (``explicit``), the definition's or the default instructions, with
    the composed skills' protocol section after them."""
    base = explicit or (definition.instructions if definition else "")
    base = base or (COMPACT_INSTRUCTIONS if compact else DEFAULT_INSTRUCTIONS)
    protocol = protocol_section(composed)
    return f"{base.rstrip()}\n\n{protocol}" if protocol else base


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
