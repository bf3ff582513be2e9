"""The gate the loop consults: permission modes and allow/ask/deny rules (deny first),
scoped and remembering gates, and the rules a session learns at run time.

Other packages import these names from here; names load lazily, so importing the
facade costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.agent.permissions.gate import (
        AllowAll,
        Approval,
        ApprovalRequest,
        GateDecision,
        RememberingGate,
        ToolGate,
        ask_approver,
    )
    from skilldeck.agent.permissions.learnt_rules import (
        SESSION_RULES_KEY,
        always_rule,
        session_rules,
        skill_rules,
    )
    from skilldeck.agent.permissions.permissions import (
        Decision,
        PermissionGate,
        PermissionPolicy,
        ScopedGate,
        SkillAwareGate,
        Verdict,
        gate_is_read_only,
    )

_HOME: dict[str, str] = {
    "Verdict": "permissions",
    "Decision": "permissions",
    "PermissionPolicy": "permissions",
    "SESSION_RULES_KEY": "learnt_rules",
    "always_rule": "learnt_rules",
    "skill_rules": "learnt_rules",
    "session_rules": "learnt_rules",
    "SkillAwareGate": "permissions",
    "PermissionGate": "permissions",
    "ScopedGate": "permissions",
    "gate_is_read_only": "permissions",
    "GateDecision": "gate",
    "ToolGate": "gate",
    "RememberingGate": "gate",
    "AllowAll": "gate",
    "Approval": "gate",
    "ApprovalRequest": "gate",
    "ask_approver": "gate",
}

__all__ = [
    "SESSION_RULES_KEY",
    "AllowAll",
    "Approval",
    "ApprovalRequest",
    "Decision",
    "GateDecision",
    "PermissionGate",
    "PermissionPolicy",
    "RememberingGate",
    "ScopedGate",
    "SkillAwareGate",
    "ToolGate",
    "Verdict",
    "always_rule",
    "ask_approver",
    "gate_is_read_only",
    "session_rules",
    "skill_rules",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
