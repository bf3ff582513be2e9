"""What a new session stores with it: how it was asked for (model, skills, roots,
permissions, agent definition) and its **launch record** (``agent/store/launch.py``):
the effective settings, the whole gate, the tools it held, its type and depth —
what :func:`skilldeck.agent.store.resume.build_agent_for_session` needs to rebuild
exactly that agent in another process, reading no config file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck.agent.recorder import Limits
from skilldeck.agent.spec import AgentSpec, Runtime
from skilldeck.agent.store import (
    LAUNCH_KEY,
    LAUNCH_VERSION,
    definition_to_dict,
    gate_to_dict,
    snapshot_settings,
)
from skilldeck.agent.subagents import AgentDefinition

if TYPE_CHECKING:
    from skilldeck.agent.toolset import Toolset

__all__ = ["session_metadata"]


def session_metadata(
    spec: AgentSpec,
    runtime: Runtime,
    definition: AgentDefinition | None,
    toolset: Toolset,
    model_spec: str,
    limits: Limits,
) -> dict[str, Any]:
    """What a new session stores with it: how it was asked for, and its launch record
    (``agent/store/launch.py``: what it needs to be resumed as itself)."""
    scan = runtime.scan.to_dict()
    launch = {
        "version": LAUNCH_VERSION,
        "settings": snapshot_settings(runtime.settings),
        "gate": gate_to_dict(toolset.gate),
        "tools": toolset.tools.names(),
        "agent_type": definition.name if definition else None,
        "definition": definition_to_dict(definition),
        "skills": toolset.composed.names if toolset.composed else [],
        "depth": spec.depth,
        "model_spec": model_spec,
        **scan,
        "max_turns": limits.max_turns,
        "base_url": spec.base_url,
        **(spec.launch_extra or {}),
    }
    return {
        "model_spec": model_spec,
        "base_url": spec.base_url,
        "skills": list(spec.skills),
        **scan,
        "max_turns": spec.max_turns,
        "agent_definition": definition.name if definition else None,
        "permissions": spec.permissions.to_dict(),
        LAUNCH_KEY: launch,
    }
