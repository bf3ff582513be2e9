"""Permissions: modes plus ``allow`` / ``ask`` / ``deny`` rules, evaluated deny first.

Order of evaluation for one tool call:

1. the active skills' :class:`~skilldeck.skills.policy.ToolPolicy` (a forged call to a
   tool outside the composed set is refused before anything else);
2. ``deny`` rules (config, ``--deny``, skills' forbidden tools loaded at run time) → deny;
3. ``ask`` rules → ask (except in ``bypassPermissions``, where only deny rules bite);
4. ``allow`` rules (config, ``--allow``, "allow always" answers, skills' pre-approved
   ``allowed-tools``) → allow;
5. the mode's default: ``default`` asks for Write/Edit/MultiEdit/Bash/WebFetch and MCP
   tools, ``acceptEdits`` allows file edits but asks for Bash/WebFetch, ``plan`` allows
   read-only tools only, ``bypassPermissions`` allows everything.

Rules only ever narrow or pre-approve: nothing here can add a tool the session does
not hold, and no tool lets the model change these rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from skilldeck.agent.gate import GateDecision
from skilldeck.llm.messages import ToolCall
from skilldeck.skills.policy import ToolPolicy
from skilldeck.skills.toolrules import ToolRule, parse_rules
from skilldeck.tools.base import ToolContext

Mode = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
MODES: tuple[Mode, ...] = ("default", "acceptEdits", "plan", "bypassPermissions")

EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
ASK_BY_DEFAULT = EDIT_TOOLS | {"Bash", "WebFetch"}
#: tools that change nothing outside the conversation, always fine in plan mode
PLAN_SAFE = frozenset(
    {"Read", "Glob", "Grep", "WebSearch", "TodoWrite", "AskUserQuestion", "Skill", "TaskOutput"}
)
DENIED_MESSAGE = "The user denied this action"


class Verdict(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    reason: str = ""
    rule: str | None = None

    @property
    def allowed(self) -> bool:
        return self.verdict is Verdict.ALLOW


@dataclass
class PermissionPolicy:
    mode: Mode = "default"
    allow: list[ToolRule] = field(default_factory=list)
    ask: list[ToolRule] = field(default_factory=list)
    deny: list[ToolRule] = field(default_factory=list)
    #: the composed policy of the skills the run was started with
    skill_policy: ToolPolicy = field(default_factory=ToolPolicy.unrestricted)
    #: tools whose ``read_only`` flag is set (plan mode lets only these through)
    read_only_tools: frozenset[str] = PLAN_SAFE

    @classmethod
    def from_lists(
        cls,
        *,
        mode: Mode = "default",
        allow: Iterable[str] = (),
        ask: Iterable[str] = (),
        deny: Iterable[str] = (),
        skill_policy: ToolPolicy | None = None,
        read_only_tools: Iterable[str] = (),
    ) -> PermissionPolicy:
        if mode not in MODES:
            raise ValueError(f"Unknown permission mode {mode!r}; use one of {', '.join(MODES)}.")
        return cls(
            mode=mode,
            allow=parse_rules(allow),
            ask=parse_rules(ask),
            deny=parse_rules(deny),
            skill_policy=skill_policy or ToolPolicy.unrestricted(),
            read_only_tools=frozenset(read_only_tools) | PLAN_SAFE,
        )

    # ---- evaluation -----------------------------------------------------------

    def evaluate(
        self, tool_name: str, tool_input: Mapping[str, Any] | None, *, workspace: Path
    ) -> Decision:
        refusal = self.skill_policy.check(tool_name, tool_input, workspace=workspace)
        if refusal is not None:
            return Decision(Verdict.DENY, refusal)
        for rule in self.deny:
            if rule.matches(tool_name, tool_input, workspace=workspace, deny=True):
                return Decision(Verdict.DENY, f"denied by rule {rule}", str(rule))
        if self.mode != "bypassPermissions":
            for rule in self.ask:
                if rule.matches(tool_name, tool_input, workspace=workspace, deny=True):
                    return Decision(Verdict.ASK, f"rule {rule} asks first", str(rule))
        if self.mode == "plan" and tool_name not in self.read_only_tools:
            return Decision(
                Verdict.DENY,
                f"plan mode allows read-only tools only; {tool_name} would change something",
            )
        for rule in self.allow:
            if rule.matches(tool_name, tool_input, workspace=workspace, deny=False):
                return Decision(Verdict.ALLOW, f"allowed by rule {rule}", str(rule))
        return self._mode_default(tool_name)

    def _mode_default(self, tool_name: str) -> Decision:
        if self.mode == "bypassPermissions":
            return Decision(Verdict.ALLOW, "bypassPermissions mode")
        if self.mode == "acceptEdits" and tool_name in EDIT_TOOLS:
            return Decision(Verdict.ALLOW, "acceptEdits mode allows file edits")
        if tool_name in ASK_BY_DEFAULT or tool_name.startswith("mcp__"):
            return Decision(Verdict.ASK, f"{tool_name} needs approval in {self.mode} mode")
        return Decision(Verdict.ALLOW, f"{tool_name} is allowed by default")

    # ---- run-time narrowing / pre-approval -------------------------------------

    def allow_always(self, tool_name: str, tool_input: Mapping[str, Any] | None) -> ToolRule:
        """Record an "allow always" answer as a session rule and return it."""
        rule = ToolRule(tool_name)
        if tool_name == "Bash" and tool_input and isinstance(tool_input.get("command"), str):
            rule = ToolRule("Bash", str(tool_input["command"]).strip())
        self.allow.append(rule)
        return rule

    def preapprove_skill(self, allowed: Iterable[str], forbidden: Iterable[str]) -> None:
        """A skill loaded with the Skill tool: its allowed-tools become allow rules (never
        new tools: visibility is decided elsewhere) and its forbidden tools deny rules."""
        for rule in parse_rules(forbidden):
            if rule not in self.deny:
                self.deny.append(rule)
        for rule in parse_rules(allowed):
            if rule.tool in {"Task", "Agent", "TaskOutput"}:
                continue
            if rule not in self.allow:
                self.allow.append(rule)

    def visible_tools(self, available: Iterable[str]) -> set[str]:
        """Tools shown to the model: the skill policy's set minus wholly denied tools."""
        names = self.skill_policy.visible_tools(available)
        return {n for n in names if not any(r.whole_tool and r.names_tool(n) for r in self.deny)}


def _preview(tool_input: Mapping[str, Any], limit: int = 400) -> str:
    import json

    text = json.dumps(dict(tool_input), ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class PermissionGate:
    """The loop's :class:`~skilldeck.agent.gate.ToolGate` backed by a PermissionPolicy."""

    def __init__(self, policy: PermissionPolicy) -> None:
        self.policy = policy

    async def check(self, call: ToolCall, ctx: ToolContext) -> GateDecision:
        decision = self.policy.evaluate(call.name, call.input, workspace=ctx.workspace)
        if decision.verdict is Verdict.ALLOW:
            return GateDecision.allow()
        if decision.verdict is Verdict.DENY:
            return GateDecision.deny(f"Permission denied: {decision.reason}.")
        payload = {
            "tool": call.name,
            "input": dict(call.input),
            "preview": _preview(call.input),
            "reason": decision.reason,
        }
        return GateDecision.ask(payload, reason=decision.reason)

    def remember(self, call: ToolCall, ctx: ToolContext) -> None:
        self.policy.allow_always(call.name, call.input)
