"""Sub-agents: planning children (type, skills, tools, gate), spawning them in the
foreground or in background threads (Task/TaskOutput), their event sink into the
parent's stream, and agent type definitions (AGENT.md and built-ins).

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
    from skilldeck.agent.subagents.subagents import SubagentManager
    from skilldeck.agent.subagents.task_tools import (
        ParentSession,
        Spawner,
        SpawnOptions,
        SpawnOutcome,
        SubagentOutcome,
        TaskInput,
        TaskOutputInput,
        TaskOutputTool,
        TaskTool,
        check_contract,
    )

_HOME: dict[str, str] = {
    "SubagentManager": "subagents",
    "ParentSession": "task_tools",
    "SpawnOptions": "task_tools",
    "SubagentOutcome": "task_tools",
    "TaskInput": "task_tools",
    "TaskOutputInput": "task_tools",
    "TaskOutputTool": "task_tools",
    "TaskTool": "task_tools",
    "check_contract": "task_tools",
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
