"""Building the agent of one service run: a new session's, or a stored session's.

Each run gets a fresh agent (``agent/builder.py`` for a new session, the launch record
through ``agent/store/resume.py`` for a stored one), so nothing a run learns lives in
memory between runs: a session's state is what the store holds, whichever process
wrote it last. The agents share the service's settings and skill registry, which
carry no session's state.

Each agent gets its own store connection (:class:`WatchedStore`): the loop creates a
new session's id itself, and the connection reports it as soon as the row exists, so
``start()`` can return the id before the first model call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.agent.builder import build
from skilldeck.agent.loop import Agent
from skilldeck.agent.spec import AgentSpec, PermissionOptions, Runtime, Scan
from skilldeck.agent.store import (
    SessionRecord,
    SessionStore,
    build_agent_for_session,
    session_settings,
)
from skilldeck.config import Settings
from skilldeck.llm.messages import Message, Model
from skilldeck.skills.registry import SkillRegistry

__all__ = ["AgentOptions", "WatchedStore", "new_session_agent", "stored_session_agent"]


class WatchedStore(SessionStore):
    """A store connection that remembers the first top-level session created through it
    (sub-agents' sessions, which have a parent, are not it)."""

    created: str | None = None

    def create(self, **kwargs: Any) -> SessionRecord:
        record = super().create(**kwargs)
        if self.created is None and kwargs.get("parent_id") is None:
            self.created = record.id
        return record


@dataclass(frozen=True)
class AgentOptions:
    """What a new session is started with (the service's defaults fill the gaps)."""

    model: str | Model | None = None
    skills: tuple[str, ...] = ()
    permission_mode: str | None = None
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    agent: str | None = None
    max_turns: int | None = None
    cwd: Path | None = None
    base_url: str | None = None
    instructions: str | None = None
    preload: Sequence[Message] = field(default=())


def new_session_agent(
    options: AgentOptions,
    *,
    settings: Settings,
    registry: SkillRegistry,
    store: WatchedStore,
    scan: Scan,
) -> Agent:
    """The agent of a new session (``skilldeck run``'s, with no terminal approver: an
    ``ask`` pauses the session until :meth:`SessionService.approve`)."""
    spec = AgentSpec(
        model=options.model,
        base_url=options.base_url,
        definition=options.agent,
        skills=tuple(options.skills),
        instructions=options.instructions,
        max_turns=options.max_turns,
        permissions=PermissionOptions(
            mode=options.permission_mode,
            allow=options.allow,
            ask=options.ask,
            deny=options.deny,
        ),
        stream_text=True,
        cwd=options.cwd,
    )
    return build(spec, Runtime(settings=settings, registry=registry, store=store, scan=scan))


def stored_session_agent(
    record: SessionRecord,
    *,
    settings: Settings,
    store: SessionStore,
    registry: SkillRegistry | None,
    model: Model | None,
    permission_mode: str | None = None,
) -> Agent:
    """The agent ``record`` ran as, from its launch record (``skilldeck resume``'s rule:
    what is given here may only narrow it). ``registry`` is shared when the session
    was started by this service; otherwise the launch record's roots are discovered.
    ``model``: a ready model object for a session whose model cannot be rebuilt from
    its name (a library's own)."""
    extra: dict[str, Any] = {"session_store": store}
    if registry is not None:
        extra["registry"] = registry
    return build_agent_for_session(
        session_settings(record, home=settings.home),
        record,
        model=model,
        permission_mode=permission_mode,
        **extra,
    )
