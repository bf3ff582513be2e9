"""What a session learns at run time: the rules it adds to its configured policy.

A human's "allow always" answer (:func:`always_rule`) and a skill loaded with the
``Skill`` tool (:func:`skill_rules`: its ``allowed-tools`` pre-approved, its forbidden
tools denied) become rules kept in the session's tool state under
:data:`SESSION_RULES_KEY` — saved with the session, restored on ``resume`` in another
process, handed to the sub-agents it spawns, and never seen by another session of the
same agent. :class:`~skilldeck.agent.permissions.permissions.PermissionGate` reads them
back (:func:`session_rules`) on every check.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from skilldeck.skills.rules import ToolRule, exact_spec, parse_rules

__all__ = [
    "NEVER_PREAPPROVED",
    "SESSION_RULES_KEY",
    "always_rule",
    "lenient_rules",
    "record_rules",
    "session_rules",
    "skill_rules",
]

#: tools no skill pre-approval ever covers: spawning stays with the agent definition
NEVER_PREAPPROVED = frozenset({"Task", "Agent", "TaskOutput"})
#: where a session keeps the rules it learnt at run time (``{"allow": [...], "deny": [...]}``)
SESSION_RULES_KEY = "permission_rules"


def always_rule(tool_name: str, tool_input: Mapping[str, Any] | None) -> ToolRule:
    """The rule an "allow always" answer creates: the whole tool, or for Bash the exact
    command (approving ``make test`` must not approve ``make deploy``)."""
    if tool_name == "Bash" and tool_input and isinstance(tool_input.get("command"), str):
        return ToolRule("Bash", exact_spec(str(tool_input["command"])))
    return ToolRule(tool_name)


def skill_rules(
    allowed: Iterable[str], forbidden: Iterable[str]
) -> tuple[list[ToolRule], list[ToolRule]]:
    """(allow, deny) rules a loaded skill contributes. Unparseable entries are skipped
    (validation reports them); spawning tools are never pre-approved."""
    grant = [r for r in lenient_rules(allowed) if r.tool not in NEVER_PREAPPROVED]
    return grant, lenient_rules(forbidden)


def lenient_rules(texts: Iterable[str]) -> list[ToolRule]:
    """The rules among ``texts`` that parse; the others are skipped (validation reports them)."""
    out: list[ToolRule] = []
    for text in texts:
        try:
            out.extend(parse_rules([text]))
        except ValueError:
            continue
    return out


def session_rules(state: Mapping[str, Any]) -> tuple[list[ToolRule], list[ToolRule]]:
    """The (allow, deny) rules a session learnt at run time, from its tool state."""
    stored = state.get(SESSION_RULES_KEY)
    if not isinstance(stored, dict):
        return [], []
    allow = lenient_rules(str(r) for r in stored.get("allow", []) if isinstance(r, str))
    deny = lenient_rules(str(r) for r in stored.get("deny", []) if isinstance(r, str))
    return allow, deny


def record_rules(state: dict[str, Any], key: str, rules: Iterable[ToolRule]) -> None:
    """Add ``rules`` to the session's learnt ``key`` ("allow" or "deny") rules, once each."""
    stored = state.setdefault(SESSION_RULES_KEY, {"allow": [], "deny": []})
    bucket = stored.setdefault(key, [])
    for rule in rules:
        if str(rule) not in bucket:
            bucket.append(str(rule))
