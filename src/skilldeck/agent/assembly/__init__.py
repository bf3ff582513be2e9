"""Assembling an agent: the pieces ``agent/builder.py`` puts together from an
``AgentSpec`` and a ``Runtime`` (and sub-agent planning reuses).

What an ``Agent`` is made of (``AgentParts``), which model it runs and the model
object it gets, the instructions its system prompt starts with, what a new session
stores with it (its launch record), the policy of each step of the tool-narrowing
pipeline (``agent/toolset.py``) and the permission rules its gate starts from.

Other packages import these names from here; names load lazily, so importing the
facade costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.agent.assembly.instructions import agent_instructions, protocol_section
    from skilldeck.agent.assembly.launch_metadata import session_metadata
    from skilldeck.agent.assembly.model_choice import (
        choose_model_spec,
        make_agent_model,
        normalise_spec,
        pick_model,
        resolve_definition,
        retry_events,
        with_window,
    )
    from skilldeck.agent.assembly.narrowing_steps import (
        compose_skills,
        definition_policy,
        is_read_only,
        no_tools_error,
        read_only_policy,
        type_policy,
        undeclared_policy,
    )
    from skilldeck.agent.assembly.parts import AgentParts, Hinter, Spawning, Startup
    from skilldeck.agent.assembly.permission_rules import (
        config_rules,
        permission_policy,
        warn_unknown_tools,
    )

_HOME: dict[str, str] = {
    "AgentParts": "parts",
    "Hinter": "parts",
    "Spawning": "parts",
    "Startup": "parts",
    "agent_instructions": "instructions",
    "protocol_section": "instructions",
    "choose_model_spec": "model_choice",
    "make_agent_model": "model_choice",
    "normalise_spec": "model_choice",
    "pick_model": "model_choice",
    "resolve_definition": "model_choice",
    "retry_events": "model_choice",
    "with_window": "model_choice",
    "compose_skills": "narrowing_steps",
    "definition_policy": "narrowing_steps",
    "is_read_only": "narrowing_steps",
    "no_tools_error": "narrowing_steps",
    "read_only_policy": "narrowing_steps",
    "type_policy": "narrowing_steps",
    "undeclared_policy": "narrowing_steps",
    "session_metadata": "launch_metadata",
    "config_rules": "permission_rules",
    "permission_policy": "permission_rules",
    "warn_unknown_tools": "permission_rules",
}

__all__ = [
    "AgentParts",
    "Hinter",
    "Spawning",
    "Startup",
    "agent_instructions",
    "choose_model_spec",
    "compose_skills",
    "config_rules",
    "definition_policy",
    "is_read_only",
    "make_agent_model",
    "no_tools_error",
    "normalise_spec",
    "permission_policy",
    "pick_model",
    "protocol_section",
    "read_only_policy",
    "resolve_definition",
    "retry_events",
    "session_metadata",
    "type_policy",
    "undeclared_policy",
    "warn_unknown_tools",
    "with_window",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
