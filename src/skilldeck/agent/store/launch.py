"""What a session was launched with, kept so ``resume`` rebuilds exactly that.

A session is created with a **launch record** (``sessions.launch``, written once,
never updated by a turn): the effective settings (sandbox, skills policy and roots,
code-skill policy, model, limits…), the whole gate it ran behind (permission mode,
allow/ask/deny rules, the composed skill policy, an agent definition's or a
sub-agent type's tool policies, the parent's gate for a sub-agent), the tools it
held, its agent type and its depth.

Why: between a pause and a ``resume`` the model may have written
``./.skilldeck/config.toml`` (``[sandbox] mode = "off"``, ``allow = ["Bash"]``), an
AGENT.md or a SKILL.md's ``allowed-tools``. Settings read again from files at resume
time would be settings the model chose. So a resume restores the record and reads
no file; the command line may only **narrow** it (a stricter mode, more ask or deny
rules — :func:`narrow_gate`), never widen it. A sub-agent's session is rebuilt as
the sub-agent it was (an ``explore`` child stays Read/Glob/Grep behind its parent's
rules), not as a top-level agent with every tool.

A gate this module cannot describe (a library's own ``ToolGate``) is recorded as
``opaque``; resuming such a session needs that gate passed in again (fail closed).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from skilldeck.agent.permissions import AllowAll, ToolGate
from skilldeck.agent.permissions.permissions import (
    MODES,
    Mode,
    PermissionGate,
    PermissionPolicy,
    ScopedGate,
)
from skilldeck.agent.subagents import AgentDefinition
from skilldeck.config import Settings
from skilldeck.errors import ConfigError, SessionError
from skilldeck.skills.policy.policy import ToolPolicy
from skilldeck.skills.rules import ToolRule, parse_rules

__all__ = [
    "LAUNCH_KEY",
    "LAUNCH_VERSION",
    "MODE_STRICTNESS",
    "definition_from_dict",
    "definition_to_dict",
    "gate_from_dict",
    "gate_to_dict",
    "narrow_gate",
    "narrower_mode",
    "restore_settings",
    "snapshot_settings",
]

#: the metadata key the builder hands the launch record to the store under (the store
#: moves it to its own write-once column; the loop never needs to know it)
LAUNCH_KEY = "launch"
LAUNCH_VERSION = 1
#: permission modes, least strict first: a resume may move only to the right
MODE_STRICTNESS: dict[str, int] = {
    "bypassPermissions": 0,
    "acceptEdits": 1,
    "default": 2,
    "plan": 3,
}
#: settings sections not kept: MCP server definitions carry environment values
#: (tokens) and no agent run uses them; a restored session gets none
_NOT_KEPT = {"home", "workspace", "mcp"}


# ---- settings ----------------------------------------------------------------------


def snapshot_settings(settings: Settings) -> dict[str, Any]:
    """The effective settings as plain JSON (what every file and variable resolved to)."""
    return settings.model_dump(mode="json", exclude=_NOT_KEPT)


def restore_settings(snapshot: Mapping[str, Any], *, home: Path, workspace: Path) -> Settings:
    """Settings exactly as recorded, for ``workspace`` under ``home``; no file and no
    environment variable is read. SessionError when this version cannot read them."""
    try:
        return Settings.model_validate({**snapshot, "home": home, "workspace": workspace})
    except ValidationError as e:
        raise SessionError(
            f"The settings stored with this session cannot be read by this version of "
            f"skilldeck ({e.errors()[0]['msg']}); start a new run instead of resuming."
        ) from e


# ---- policies and gates ----------------------------------------------------------------


def _rules(rules: Sequence[ToolRule]) -> list[str]:
    return [str(r) for r in rules]


def _tool_policy_to_dict(policy: ToolPolicy) -> dict[str, Any]:
    allow = None if policy.allow is None else _rules(policy.allow)
    return {"allow": allow, "deny": _rules(policy.deny)}


def _tool_policy_from_dict(data: Mapping[str, Any]) -> ToolPolicy:
    allow = data.get("allow")
    return ToolPolicy(
        allow=None if allow is None else tuple(parse_rules(allow)),
        deny=tuple(parse_rules(data.get("deny") or ())),
    )


def _permission_to_dict(policy: PermissionPolicy) -> dict[str, Any]:
    return {
        "mode": policy.mode,
        "allow": _rules(policy.allow),
        "ask": _rules(policy.ask),
        "deny": _rules(policy.deny),
        "skill_policy": _tool_policy_to_dict(policy.skill_policy),
        "read_only_tools": sorted(policy.read_only_tools),
    }


def _permission_from_dict(data: Mapping[str, Any]) -> PermissionPolicy:
    return PermissionPolicy.from_lists(
        mode=_mode(str(data.get("mode"))),
        allow=data.get("allow") or (),
        ask=data.get("ask") or (),
        deny=data.get("deny") or (),
        skill_policy=_tool_policy_from_dict(data.get("skill_policy") or {}),
        read_only_tools=data.get("read_only_tools") or (),
    )


def gate_to_dict(gate: ToolGate) -> dict[str, Any]:
    """``gate`` (and every gate inside it) as plain JSON; unknown gates are ``opaque``."""
    if isinstance(gate, ScopedGate):
        return {
            "kind": "scoped",
            "policies": [[_tool_policy_to_dict(p), label] for p, label in gate.policies],
            "read_only": gate.read_only and not _inner_read_only(gate),
            "inner": gate_to_dict(gate.inner),
        }
    if isinstance(gate, PermissionGate):
        return {"kind": "permission", "policy": _permission_to_dict(gate.policy)}
    if type(gate) is AllowAll:
        return {"kind": "allow_all"}
    return {"kind": "opaque", "class": type(gate).__qualname__}


def _inner_read_only(gate: ScopedGate) -> bool:
    return bool(getattr(gate.inner, "read_only", False))


def gate_from_dict(data: Mapping[str, Any]) -> ToolGate:
    """The gate :func:`gate_to_dict` described. SessionError for an opaque gate."""
    kind = data.get("kind")
    if kind == "scoped":
        policies = [
            (_tool_policy_from_dict(p), None if label is None else str(label))
            for p, label in data.get("policies") or []
        ]
        inner = gate_from_dict(data.get("inner") or {})
        return ScopedGate(policies, inner, read_only=bool(data.get("read_only")))
    if kind == "permission":
        return PermissionGate(_permission_from_dict(data.get("policy") or {}))
    if kind == "allow_all":
        return AllowAll()
    raise SessionError(
        f"This session ran behind a gate skilldeck cannot rebuild ({data.get('class', kind)}); "
        "resume it from Python with build_agent_for_session(..., gate=<that gate>)."
    )


# ---- narrowing --------------------------------------------------------------------------


def _mode(mode: str) -> Mode:
    for known in MODES:
        if known == mode:
            return known
    raise ConfigError(f"Unknown permission mode {mode!r}; use one of {', '.join(MODES)}.")


def narrower_mode(stored: str, requested: str | None) -> Mode:
    """``requested`` when it is as strict as ``stored`` or stricter, else ConfigError:
    a resume can narrow a session's permissions, never widen them."""
    if requested is None:
        return _mode(stored)
    wanted = _mode(requested)
    if MODE_STRICTNESS[wanted] < MODE_STRICTNESS[_mode(stored)]:
        raise ConfigError(
            f"--permission-mode {requested} would widen this session's mode ({stored}); "
            "a resumed session keeps the permissions it was started with and can only be "
            "narrowed. Start a new run to use a wider mode."
        )
    return wanted


def narrow_gate(
    gate: ToolGate,
    *,
    mode: str | None = None,
    ask: Sequence[str] = (),
    deny: Sequence[str] = (),
) -> ToolGate:
    """``gate`` with a stricter mode and more ask/deny rules applied to every
    permission policy inside it. Nothing here can add an allow rule."""
    if mode is None and not ask and not deny:
        return gate
    ask_rules, deny_rules = parse_rules(ask), parse_rules(deny)
    if isinstance(gate, ScopedGate):
        inner = narrow_gate(gate.inner, mode=mode, ask=ask, deny=deny)
        return ScopedGate(gate.policies, inner, read_only=gate.read_only)
    if isinstance(gate, PermissionGate):
        policy = gate.policy
        return PermissionGate(
            dataclasses.replace(
                policy,
                mode=narrower_mode(policy.mode, mode),
                ask=[*policy.ask, *ask_rules],
                deny=[*policy.deny, *deny_rules],
            )
        )
    if type(gate) is AllowAll:  # no rules at all: as open as bypassPermissions
        policy = PermissionPolicy(mode=narrower_mode("bypassPermissions", mode))
        return PermissionGate(
            dataclasses.replace(policy, ask=list(ask_rules), deny=list(deny_rules))
        )
    raise SessionError(
        f"Cannot narrow a {type(gate).__qualname__} gate; pass the rules to that gate instead."
    )


# ---- agent definitions ------------------------------------------------------------------


def definition_to_dict(definition: AgentDefinition | None) -> dict[str, Any] | None:
    """All of a definition (instructions included), as it was when the run started."""
    if definition is None:
        return None
    data = dataclasses.asdict(definition)
    data["path"] = str(definition.path) if definition.path else None
    return data


def definition_from_dict(data: Mapping[str, Any] | None) -> AgentDefinition | None:
    """The recorded definition, never the file as it is now (a model may have edited it)."""
    if not data:
        return None
    known = {f.name for f in dataclasses.fields(AgentDefinition)}
    values = {k: v for k, v in data.items() if k in known}
    if values.get("path"):
        values["path"] = Path(values["path"])
    return AgentDefinition(**values)
