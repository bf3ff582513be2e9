"""``skilldeck run`` and ``skilldeck resume`` (:mod:`.run_cmd`), and what ``chat``
shares with them: the options and their checks (:mod:`.options`), which agent a
command asks for — a new one, or a stored session's as it was launched
(:mod:`.launch`) — and a run on the terminal: rendering its events, approvals,
retries, Ctrl-C and the exit code (:mod:`.terminal`).

Other packages import these names from here; names load lazily, so importing the
facade costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.cli.run.launch import (
        AgentRequest,
        agent_request,
        continued_agent,
        stored_session_agent,
    )
    from skilldeck.cli.run.options import (
        AgentOption,
        AllowOption,
        AskOption,
        BaseUrlOption,
        CwdOption,
        DenyOption,
        MaxTurnsOption,
        ModelOption,
        ModeOption,
        SkillOption,
        permission_flags,
    )
    from skilldeck.cli.run.terminal import (
        cancel_subagents,
        drive,
        finish,
        interactive,
        make_renderer,
        retry_reporter,
        terminal_approver,
    )

_HOME: dict[str, str] = {
    "AgentRequest": "launch",
    "agent_request": "launch",
    "continued_agent": "launch",
    "stored_session_agent": "launch",
    "AgentOption": "options",
    "AllowOption": "options",
    "AskOption": "options",
    "BaseUrlOption": "options",
    "CwdOption": "options",
    "DenyOption": "options",
    "MaxTurnsOption": "options",
    "ModelOption": "options",
    "ModeOption": "options",
    "SkillOption": "options",
    "permission_flags": "options",
    "cancel_subagents": "terminal",
    "drive": "terminal",
    "finish": "terminal",
    "interactive": "terminal",
    "make_renderer": "terminal",
    "retry_reporter": "terminal",
    "terminal_approver": "terminal",
}

__all__ = [
    "AgentOption",
    "AgentRequest",
    "AllowOption",
    "AskOption",
    "BaseUrlOption",
    "CwdOption",
    "DenyOption",
    "MaxTurnsOption",
    "ModeOption",
    "ModelOption",
    "SkillOption",
    "agent_request",
    "cancel_subagents",
    "continued_agent",
    "drive",
    "finish",
    "interactive",
    "make_renderer",
    "permission_flags",
    "retry_reporter",
    "stored_session_agent",
    "terminal_approver",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
