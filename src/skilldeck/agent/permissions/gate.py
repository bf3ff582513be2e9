"""The seam the loop consults before every tool call: allow, deny or ask.

The loop knows nothing about permission rules, modes or skill policies; it asks a
:class:`ToolGate` and acts on the :class:`GateDecision`:

* ``allow`` — run the tool;
* ``deny(message)`` — do not run it; the model gets ``message`` as an error result;
* ``ask(payload)`` — a human must decide: the injected :data:`Approver` is called when
  the run is interactive, otherwise the session pauses (status ``paused``) and
  ``Agent.resume(session_id, approve=True|False)`` continues it, from any process.

:class:`AllowAll` is the default; ``agent/permissions/permissions.py`` provides the real gate.
A gate that can remember an "allow always" answer implements :class:`RememberingGate`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

from skilldeck.llm.messages import ToolCall
from skilldeck.tools.base import ToolContext

#: what the model is told when a human (or a rule) says no
DENIED_BY_USER = "The user denied this action. Do not retry it; ask or choose another way."


@dataclass(frozen=True)
class GateDecision:
    """The verdict on one tool call. Build with :meth:`allow`, :meth:`deny`, :meth:`ask`."""

    kind: Literal["allow", "deny", "ask"]
    message: str = ""
    #: what a human is shown for ``ask`` (tool, input preview, reason, suggested rule…)
    payload: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def allow(cls) -> GateDecision:
        return _ALLOW

    @classmethod
    def deny(cls, message: str) -> GateDecision:
        return cls("deny", message=message)

    @classmethod
    def ask(cls, payload: dict[str, Any] | None = None, *, reason: str = "") -> GateDecision:
        return cls("ask", message=reason, payload=dict(payload or {}))


_ALLOW = GateDecision("allow")


@runtime_checkable
class ToolGate(Protocol):
    """Decides whether one tool call may run. Must not have side effects on ``call``."""

    async def check(self, call: ToolCall, ctx: ToolContext) -> GateDecision: ...


@runtime_checkable
class RememberingGate(ToolGate, Protocol):
    """A gate that turns an "allow always" answer into a rule for the rest of the session."""

    def remember(self, call: ToolCall, ctx: ToolContext) -> None: ...


class AllowAll:
    """The default gate: every call runs (no permission system configured)."""

    async def check(self, call: ToolCall, ctx: ToolContext) -> GateDecision:
        return GateDecision.allow()


class Approval(StrEnum):
    """A human's answer to an ``ask``."""

    ALLOW = "allow"  # this call only
    ALWAYS = "always"  # this call, and the gate remembers (RememberingGate)
    DENY = "deny"


@dataclass(frozen=True)
class ApprovalRequest:
    """What an interactive approver is shown."""

    call: ToolCall
    payload: dict[str, Any]
    reason: str
    session_id: str


#: an interactive approver: sync or async, returning an Approval or a plain bool
Approver = Callable[[ApprovalRequest], "Approval | bool | Awaitable[Approval | bool]"]


async def ask_approver(approver: Approver, request: ApprovalRequest) -> Approval:
    """Call ``approver`` whatever its flavour and normalise its answer."""
    answer = approver(request)
    if inspect.isawaitable(answer):
        answer = await answer
    if isinstance(answer, Approval):
        return answer
    if isinstance(answer, bool):
        return Approval.ALLOW if answer else Approval.DENY
    return Approval(str(answer))
