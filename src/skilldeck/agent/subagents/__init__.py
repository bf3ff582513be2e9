"""Sub-agents: planning and spawning children (Task/TaskOutput), their event sink into
the parent's stream, and agent type definitions (AGENT.md and built-ins).

Other packages import these names from here; names load lazily, so importing the
facade costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.agent.subagents.definitions import (
        AgentCatalog,
        AgentDefinition,
        agent_roots,
        discover_agents,
        load_definition,
    )
    from skilldeck.agent.subagents.sink import (
        EventSink,
        flush_sink,
    )
    from skilldeck.agent.subagents.subagents import (
        ParentSession,
        SpawnOptions,
        SubagentManager,
        SubagentOutcome,
        TaskInput,
        TaskOutputInput,
        TaskOutputTool,
        TaskTool,
        check_contract,
    )
    from skilldeck.agent.subagents.task_tools import (
        Spawner,
        SpawnOutcome,
    )

_HOME: dict[str, str] = {
    "ParentSession": "subagents",
    "SpawnOptions": "subagents",
    "SubagentManager": "subagents",
    "SubagentOutcome": "subagents",
    "TaskInput": "subagents",
    "TaskOutputInput": "subagents",
    "TaskOutputTool": "subagents",
    "TaskTool": "subagents",
    "check_contract": "subagents",
    "task_tools": "subagents",
    "Spawner": "task_tools",
    "SpawnOutcome": "task_tools",
    "EventSink": "sink",
    "flush_sink": "sink",
    "AgentDefinition": "definitions",
    "agent_roots": "definitions",
    "load_definition": "definitions",
    "AgentCatalog": "definitions",
    "discover_agents": "definitions",
}

__all__ = [
    "AgentCatalog",
    "AgentDefinition",
    "EventSink",
    "ParentSession",
    "SpawnOptions",
    "SpawnOutcome",
    "Spawner",
    "SubagentManager",
    "SubagentOutcome",
    "TaskInput",
    "TaskOutputInput",
    "TaskOutputTool",
    "TaskTool",
    "agent_roots",
    "check_contract",
    "discover_agents",
    "flush_sink",
    "load_definition",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
