"""What an agent is made of: :class:`AgentParts`, one complete value decided before
the :class:`~skilldeck.agent.loop.Agent` is constructed (``agent/builder.py`` makes
it from a spec and a runtime; tests and benchmarks may make one by hand), and the
shapes of the callables it holds (a per-message skill hinter, what a new session
starts with, the sub-agent manager as the loop sees it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from skilldeck.agent.context import ContextManager
from skilldeck.agent.events import Event
from skilldeck.agent.permissions.gate import Approver, ToolGate
from skilldeck.agent.recorder import Limits
from skilldeck.agent.store import SessionStore
from skilldeck.config import Settings
from skilldeck.llm.messages import Message, Model
from skilldeck.skills.policy.policy import ComposedSkill
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import ToolContext, ToolRegistry, ToolServices

__all__ = ["AgentParts", "Hinter", "Spawning", "Startup"]

#: (hint text, skill names) for a user message, or None
Hinter = Callable[[str], "tuple[str, list[str]] | None"]
#: the messages a new session starts with after its system prompt (preloaded skills),
#: made in that session's own tool context (its gate vets their dynamic context)
Startup = Callable[[ToolContext], Awaitable[list[Message]]]


class Spawning(Protocol):
    """What callers use of an agent's sub-agent manager (``SubagentManager``): the
    CLI cancels background children on Ctrl-C; the loop offers ``TaskOutput`` only
    while a background task exists."""

    def cancel_all(self, *, grace: float = ...) -> list[str]: ...

    def background_ids(self) -> list[str]: ...


@dataclass(frozen=True)
class AgentParts:
    """Everything an :class:`~skilldeck.agent.loop.Agent` is made of, decided before
    it is constructed (by ``agent.builder.build``): one complete value instead of two
    dozen keywords."""

    model: Model
    tools: ToolRegistry
    settings: Settings
    store: SessionStore
    #: the text, or a function of the session id that makes it
    system_prompt: str | Callable[[str], str]
    cwd: Path
    name: str = "main"
    #: None: the limits of ``settings``
    limits: Limits | None = None
    #: None: allow every call
    gate: ToolGate | None = None
    approver: Approver | None = None
    hinter: Hinter | None = None
    #: None: the context manager for the model's window
    context: ContextManager | None = None
    skills: SkillRegistry | None = None
    services: ToolServices | Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] | None = None
    #: None: the model's name
    model_spec: str | None = None
    stream_text: bool = False
    on_event: Callable[[Event], None] | None = None
    startup: Startup | None = None
    #: close ``store`` when the agent is closed
    owns_store: bool = False
    initial_state: Mapping[str, Any] | None = None
    parent_session: str | None = None
    subagents: Spawning | None = None
    composed: ComposedSkill | None = None
