"""The gate the loop consults: permission modes and allow/ask/deny rules (deny first),
scoped and remembering gates.

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
    from skilldeck.agent.permissions.permissions import (
        Decision,
        PermissionGate,
        PermissionPolicy,
        ScopedGate,
        SkillAwareGate,
        Verdict,
        always_rule,
        gate_is_read_only,
        session_rules,
        skill_rules,
    )

_HOME: dict[str, str] = {
    "Verdict": "permissions",
    "Decision": "permissions",
    "PermissionPolicy": "permissions",
    "always_rule": "permissions",
    "skill_rules": "permissions",
    "session_rules": "permissions",
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
