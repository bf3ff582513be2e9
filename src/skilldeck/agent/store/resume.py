"""Rebuilding a stored session's agent: ``skilldeck resume`` and the library resume.

A session created by this version carries a launch record (``agent/store/launch.py``);
its agent is rebuilt from that record alone:

* the **settings** it was started with (sandbox, skills and code-skill policy, skill
  roots, model, limits) — no config file or environment variable is read again, so
  nothing a model wrote into ``./.skilldeck/config.toml`` since can relax them;
* the **gate** it ran behind, whole: mode, allow/ask/deny rules, the composed skill
  policy, an agent definition's or sub-agent type's tool policies and, for a
  sub-agent, its parent's rules — never re-derived from AGENT.md or SKILL.md files;
* the **tools** it held (a cap: a tool that cannot be rebuilt is simply missing),
  its type, its depth below the main agent, and its turn limit.

A session another process is running now (it holds the session's lease,
``agent/store/lease.py``) is refused at once with
:class:`~skilldeck.errors.SessionBusyError` naming that process.

What the caller adds can only narrow: a stricter ``permission_mode``, more ``ask`` and
``deny`` rules. ``allow`` rules and a wider mode are refused (ConfigError): start a
new run to widen. A session stored before launch records existed is rebuilt from its
metadata and the settings the caller passes (the old behaviour), narrowing only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skilldeck.agent.builder import build_agent
from skilldeck.agent.loop import Agent
from skilldeck.agent.permissions import ToolGate
from skilldeck.agent.store.launch import (
    gate_from_dict,
    narrow_gate,
    narrower_mode,
    restore_settings,
)
from skilldeck.agent.store.session import SessionRecord, SessionStore
from skilldeck.config import Settings, load_settings
from skilldeck.errors import ConfigError, SessionBusyError
from skilldeck.llm.messages import Model
from skilldeck.skills.registry import SkillRegistry

__all__ = ["build_agent_for_session", "refuse_if_running_elsewhere", "session_settings"]


def session_settings(session: SessionRecord, *, home: Path) -> Settings:
    """The settings ``session`` runs with: the recorded ones, or — for a session stored
    before launch records — the settings of its working directory now."""
    workspace = Path(session.cwd)
    snapshot = session.launch.get("settings")
    if isinstance(snapshot, dict):
        return restore_settings(snapshot, home=home, workspace=workspace)
    return load_settings(workspace=workspace, home=home)


def build_agent_for_session(
    settings: Settings,
    session: SessionRecord,
    *,
    model: str | Model | None = None,
    base_url: str | None = None,
    permission_mode: str | None = None,
    allow: Sequence[str] = (),
    ask: Sequence[str] = (),
    deny: Sequence[str] = (),
    gate: ToolGate | None = None,
    **kwargs: Any,
) -> Agent:
    """The agent ``session`` ran as (see the module docstring). ``settings`` gives the
    home folder (and, for an old session, the settings). ``gate`` replaces a recorded
    gate skilldeck cannot rebuild (a library's own). Raises ConfigError when asked to
    widen, SessionError when the record cannot be restored, SessionBusyError when
    another process is running the session."""
    refuse_if_running_elsewhere(settings, session, kwargs.get("session_store"))
    if allow:
        raise ConfigError(
            f"A resumed session keeps the permissions it was started with; allow rules "
            f"({', '.join(allow)}) cannot be added. Approve the pending call with "
            "--approve, or start a new run with --allow."
        )
    launch = session.launch
    if not launch.get("version"):
        return _legacy(settings, session, model, base_url, permission_mode, ask, deny, kwargs)
    frozen = restore_settings(launch["settings"], home=settings.home, workspace=Path(session.cwd))
    restored = gate if gate is not None else gate_from_dict(launch.get("gate") or {})
    roots = [Path(r) for r in launch.get("roots") or []]
    no_defaults = bool(launch.get("no_defaults"))
    registry = kwargs.pop("registry", None) or SkillRegistry.discover(
        frozen, roots=roots, no_defaults=no_defaults
    )
    keep = ("agent_type", "definition", "roots", "no_defaults")
    return build_agent(
        frozen,
        model=model or str(launch.get("model_spec") or session.model),
        cwd=Path(session.cwd),
        max_turns=kwargs.pop("max_turns", None) or launch.get("max_turns"),
        registry=registry,
        roots=roots,
        no_defaults=no_defaults,
        base_url=base_url or launch.get("base_url"),
        agent_name=session.agent,
        gate=narrow_gate(restored, mode=permission_mode, ask=ask, deny=deny),
        only_tools=list(launch.get("tools") or []),
        depth=int(launch.get("depth") or 0),
        parent_session=session.parent_id,
        launch_extra={k: launch[k] for k in keep if k in launch},
        **kwargs,
    )


def refuse_if_running_elsewhere(
    settings: Settings, session: SessionRecord, store: SessionStore | None = None
) -> None:
    """Raise SessionBusyError when another live process holds ``session``'s lease."""
    if store is None:
        with SessionStore(settings.sessions_db) as own:
            lease = own.lease(session.id)
    else:
        lease = store.lease(session.id)
    if lease is not None and lease.blocks():
        raise SessionBusyError(lease.message(), owner=lease.owner)


def _legacy(
    settings: Settings,
    session: SessionRecord,
    model: str | Model | None,
    base_url: str | None,
    mode: str | None,
    ask: Sequence[str],
    deny: Sequence[str],
    kwargs: dict[str, Any],
) -> Agent:
    """A session from before launch records: rebuilt from its metadata, narrowing only."""
    meta = session.metadata
    stored = meta.get("permissions") or {}
    stored_mode = stored.get("mode") or settings.permissions.mode
    return build_agent(
        settings,
        model=model or str(meta.get("model_spec") or session.model),
        skills=list(meta.get("skills") or []),
        cwd=Path(session.cwd),
        max_turns=kwargs.pop("max_turns", None) or meta.get("max_turns"),
        roots=[Path(r) for r in meta.get("roots") or []],
        no_defaults=bool(meta.get("no_defaults")),
        base_url=base_url or meta.get("base_url"),
        agent_name=session.agent,
        agent=meta.get("agent_definition"),
        permission_mode=narrower_mode(stored_mode, mode),
        allow=list(stored.get("allow") or []),
        ask=[*(stored.get("ask") or []), *ask],
        deny=[*(stored.get("deny") or []), *deny],
        **kwargs,
    )
