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
from dataclasses import replace
from pathlib import Path
from typing import Any

from skilldeck.agent.builder import build
from skilldeck.agent.loop import Agent
from skilldeck.agent.permissions import ToolGate
from skilldeck.agent.spec import AgentSpec, PermissionOptions, Runtime, Scan, SkillPreload
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
from skilldeck.tools.base import ToolServices

__all__ = ["build_agent_for_session", "refuse_if_running_elsewhere", "session_settings"]

#: ``build_agent`` keywords a caller may add to a resume that say *where* the agent
#: runs, and the :class:`Runtime` field each fills
_RUNTIME_KEYWORDS = {
    "session_store": "store",
    "registry": "registry",
    "approver": "approver",
    "on_event": "on_event",
    "services": "services",
}
#: ``build_agent`` keywords a caller may add that are :class:`AgentSpec` fields of the
#: same name (``json_events`` is the spec's ``stream_text``, inverted)
_SPEC_KEYWORDS = frozenset({"hints", "instructions", "initial_state", "preload", "tools"})


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
    gate skilldeck cannot rebuild (a library's own). ``kwargs`` are ``build_agent``
    keywords that do not widen: ``session_store``, ``registry``, ``approver``,
    ``on_event``, ``services``, ``json_events``, ``hints``, ``instructions``,
    ``initial_state``, ``preload``, ``tools``, ``max_turns``. Raises ConfigError when
    asked to widen, SessionError when the record cannot be restored, SessionBusyError
    when another process is running the session."""
    extra_spec, extra_runtime = _caller_parts(kwargs)
    refuse_if_running_elsewhere(settings, session, extra_runtime.get("store"))
    if allow:
        raise ConfigError(
            f"A resumed session keeps the permissions it was started with; allow rules "
            f"({', '.join(allow)}) cannot be added. Approve the pending call with "
            "--approve, or start a new run with --allow."
        )
    launch = session.launch
    if not launch.get("version"):
        spec, runtime = _legacy(settings, session, model, base_url, permission_mode, ask, deny)
    else:
        restored = gate if gate is not None else gate_from_dict(launch.get("gate") or {})
        narrowed = narrow_gate(restored, mode=permission_mode, ask=ask, deny=deny)
        spec, runtime = _recorded(session, settings.home, model, base_url, narrowed)
    max_turns = extra_spec.pop("max_turns", None) or spec.max_turns
    spec = replace(spec, max_turns=max_turns, **extra_spec)
    runtime = replace(runtime, **extra_runtime)
    if runtime.registry is None and launch.get("version"):
        scan = runtime.scan
        registry = SkillRegistry.discover(
            runtime.settings, roots=list(scan.roots), no_defaults=scan.no_defaults
        )
        runtime = replace(runtime, registry=registry)
    return build(spec, runtime)


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


def _caller_parts(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The caller's ``build_agent`` keywords as spec fields and runtime fields. A
    keyword a resume does not take is a TypeError, as for any function."""
    known = {*_RUNTIME_KEYWORDS, *_SPEC_KEYWORDS, "json_events", "max_turns"}
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise TypeError(f"build_agent_for_session() got unexpected keywords: {unknown}")
    spec = {key: kwargs[key] for key in _SPEC_KEYWORDS if key in kwargs}
    if spec.get("tools") is not None:
        spec["tools"] = tuple(spec["tools"])
    if "preload" in spec:
        spec["preload"] = spec["preload"] or SkillPreload()
    if "json_events" in kwargs:
        spec["stream_text"] = not kwargs["json_events"]
    spec["max_turns"] = kwargs.get("max_turns")
    runtime = {_RUNTIME_KEYWORDS[k]: v for k, v in kwargs.items() if k in _RUNTIME_KEYWORDS}
    if "services" in runtime:
        runtime["services"] = ToolServices.of(runtime["services"])
    return spec, runtime


def _recorded(
    session: SessionRecord,
    home: Path,
    model: str | Model | None,
    base_url: str | None,
    gate: ToolGate,
) -> tuple[AgentSpec, Runtime]:
    """The spec and runtime of a session with a launch record: its own settings,
    tools, depth and scan, read from the record alone (no config file), behind
    ``gate`` (the recorded one, narrowed by the caller)."""
    launch = session.launch
    frozen = restore_settings(launch["settings"], home=home, workspace=Path(session.cwd))
    keep = ("agent_type", "definition", "roots", "no_defaults")
    spec = AgentSpec(
        model=model or str(launch.get("model_spec") or session.model),
        base_url=base_url or launch.get("base_url"),
        name=session.agent,
        max_turns=launch.get("max_turns"),
        gate=gate,
        only_tools=tuple(launch.get("tools") or []),
        depth=int(launch.get("depth") or 0),
        parent_session=session.parent_id,
        cwd=Path(session.cwd),
        launch_extra={k: launch[k] for k in keep if k in launch},
    )
    roots = tuple(Path(r) for r in launch.get("roots") or [])
    scan = Scan(roots, bool(launch.get("no_defaults")))
    return spec, Runtime(settings=frozen, scan=scan)


def _legacy(
    settings: Settings,
    session: SessionRecord,
    model: str | Model | None,
    base_url: str | None,
    mode: str | None,
    ask: Sequence[str],
    deny: Sequence[str],
) -> tuple[AgentSpec, Runtime]:
    """A session from before launch records: rebuilt from its metadata, narrowing only."""
    meta = session.metadata
    stored = meta.get("permissions") or {}
    stored_mode = stored.get("mode") or settings.permissions.mode
    spec = AgentSpec(
        model=model or str(meta.get("model_spec") or session.model),
        base_url=base_url or meta.get("base_url"),
        definition=meta.get("agent_definition"),
        skills=tuple(meta.get("skills") or []),
        name=session.agent,
        max_turns=meta.get("max_turns"),
        permissions=PermissionOptions(
            narrower_mode(stored_mode, mode),
            tuple(stored.get("allow") or []),
            (*(stored.get("ask") or []), *ask),
            (*(stored.get("deny") or []), *deny),
        ),
        cwd=Path(session.cwd),
    )
    roots = tuple(Path(r) for r in meta.get("roots") or [])
    scan = Scan(roots, bool(meta.get("no_defaults")))
    return spec, Runtime(settings=settings, scan=scan)
