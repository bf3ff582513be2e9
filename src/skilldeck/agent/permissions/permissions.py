"""Permissions: modes plus ``allow`` / ``ask`` / ``deny`` rules, evaluated deny first.

Order of evaluation for one tool call:

1. the active skills' :class:`~skilldeck.skills.policy.policy.ToolPolicy` (a forged call to a
   tool outside the composed set is refused before anything else);
2. ``deny`` rules (config, ``--deny``, skills' forbidden tools loaded at run time) → deny;
   in ``plan`` mode, any tool that is not read-only → deny (no rule or human reopens it);
3. ``ask`` rules → ask (except in ``bypassPermissions``, where only deny rules bite);
4. ``allow`` rules (config, ``--allow``, "allow always" answers, skills' pre-approved
   ``allowed-tools``) → allow;
5. the mode's default: ``default`` asks for Write/Edit/MultiEdit/Bash/WebFetch and MCP
   tools, ``acceptEdits`` allows file edits but asks for Bash/WebFetch, ``plan`` allows
   read-only tools only, ``bypassPermissions`` allows everything.

Rules only ever narrow or pre-approve: nothing here can add a tool the session does
not hold, and no tool lets the model change these rules. What a session learns at run
time — a human's "allow always", a loaded skill's pre-approved and forbidden tools —
is kept in the session's tool state (``ctx.state["permission_rules"]``), so it is
saved with the session, survives ``resume`` in another process, and is handed to the
sub-agents the session spawns; it never leaks into another session of the same agent
(``agent/permissions/learnt_rules.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from skilldeck.agent.permissions.gate import GateDecision, RememberingGate, ToolGate
from skilldeck.agent.permissions.learnt_rules import (
    always_rule,
    record_rules,
    session_rules,
    skill_rules,
)
from skilldeck.llm.messages import ToolCall
from skilldeck.skills.policy.policy import ToolPolicy
from skilldeck.skills.rules import (
    ToolRule,
    bash_allow_refusal,
    bash_opaque_reason,
    parse_rules,
    split_shell_command,
)
from skilldeck.tools.base import ToolContext

Mode = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
MODES: tuple[Mode, ...] = ("default", "acceptEdits", "plan", "bypassPermissions")

EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
ASK_BY_DEFAULT = EDIT_TOOLS | {"Bash", "WebFetch"}
#: tools that change nothing outside the conversation, always fine in plan mode. The
#: ``Skill`` tool is here to *load* a prompt skill's text: under a read-only gate it
#: refuses to run a script skill, a code skill or dynamic context (``gate_is_read_only``)
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
                why = _bash_rule_reason(f"denied by rule {rule}", rule, tool_name, tool_input)
                return Decision(Verdict.DENY, why, str(rule))
        if self.mode == "plan" and tool_name not in self.read_only_tools:
            return Decision(
                Verdict.DENY,
                f"plan mode allows read-only tools only; {tool_name} would change something",
            )
        if self.mode != "bypassPermissions":
            for rule in self.ask:
                if rule.matches(tool_name, tool_input, workspace=workspace, deny=True):
                    why = _bash_rule_reason(f"rule {rule} asks first", rule, tool_name, tool_input)
                    return Decision(Verdict.ASK, why, str(rule))
        # Bash allow rules approve only literal simple commands (shellrules decides;
        # `Bash(git diff:*)` never vouches for `git diff $(rm -rf ~)` or `> file`)
        for rule in self.allow:
            if rule.matches(tool_name, tool_input, workspace=workspace, deny=False):
                return Decision(Verdict.ALLOW, f"allowed by rule {rule}", str(rule))
        if self._each_part_allowed(tool_name, tool_input, workspace):
            return Decision(Verdict.ALLOW, "every part of the command is allowed by a rule")
        default = self._mode_default(tool_name)
        hidden = _hides_commands(tool_name, tool_input)
        if default.verdict is Verdict.ASK and hidden and self._has_bash_rules(self.allow):
            reason = f"{default.reason}; no Bash rule can approve it: {hidden}"
            return replace(default, reason=reason)
        return default

    @staticmethod
    def _has_bash_rules(rules: Sequence[ToolRule]) -> bool:
        return any(r.specifier is not None and r.names_tool("Bash") for r in rules)

    def _each_part_allowed(
        self, tool_name: str, tool_input: Mapping[str, Any] | None, workspace: Path
    ) -> bool:
        """A compound Bash command (``a && b``) is allowed when each simple command in
        it is allowed by some rule (``Bash(a:*)`` and ``Bash(b)``); one rule never
        approves a command it does not cover."""
        if tool_name != "Bash" or not tool_input or not self.allow:
            return False
        parts = split_shell_command(str(tool_input.get("command", "")))
        if len(parts) < 2:
            return False
        return all(
            any(
                r.matches("Bash", {"command": part}, workspace=workspace, deny=False)
                for r in self.allow
            )
            for part in parts
        )

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
        """Record an "allow always" answer as a rule of this policy and return it."""
        rule = always_rule(tool_name, tool_input)
        self.allow.append(rule)
        return rule

    def preapprove_skill(self, allowed: Iterable[str], forbidden: Iterable[str]) -> None:
        """A skill loaded with the Skill tool: its allowed-tools become allow rules (never
        new tools: visibility is decided elsewhere) and its forbidden tools deny rules."""
        grant, refuse = skill_rules(allowed, forbidden)
        self.deny.extend(r for r in refuse if r not in self.deny)
        self.allow.extend(r for r in grant if r not in self.allow)

    def extended(
        self, *, allow: Sequence[ToolRule] = (), deny: Sequence[ToolRule] = ()
    ) -> PermissionPolicy:
        """A copy with extra rules (a session's run-time rules); ``self`` is unchanged."""
        return replace(self, allow=[*self.allow, *allow], deny=[*self.deny, *deny])

    def visible_tools(self, available: Iterable[str]) -> set[str]:
        """Tools shown to the model: the skill policy's set minus wholly denied tools."""
        names = self.skill_policy.visible_tools(available)
        return {n for n in names if not any(r.whole_tool and r.names_tool(n) for r in self.deny)}


#: shell syntax that runs a command inside another (kept for callers; the analysis in
#: skills/rules/shellrules.py refuses these and every other non-literal construct)
_SUBSTITUTIONS = ("$(", "`", "<(", ">(")


def _hides_commands(tool_name: str, tool_input: Mapping[str, Any] | None) -> str | None:
    """Why no ``Bash(...)`` rule can approve this command (expansions, redirections to
    files, comments, parse errors…), or None when one could."""
    if tool_name != "Bash" or not tool_input:
        return None
    return bash_allow_refusal(str(tool_input.get("command", "")))


def _bash_rule_reason(
    base: str, rule: ToolRule, tool_name: str, tool_input: Mapping[str, Any] | None
) -> str:
    """A deny/ask reason that says so when a Bash rule matched because the command
    could not be analysed (fail closed), and how to get past that honestly."""
    if tool_name != "Bash" or rule.specifier is None or not tool_input:
        return base
    opaque = bash_opaque_reason(str(tool_input.get("command", "")))
    if opaque is None:
        return base
    return (
        f"{base}: the command cannot be fully analysed ({opaque}), so it might run a "
        "program that rule covers; rewrite it as plain commands with literal words"
    )


@runtime_checkable
class SkillAwareGate(Protocol):
    """A gate that learns from a skill loaded with the Skill tool (see the loop)."""

    def preapprove_skill(
        self, ctx: ToolContext, allowed: Sequence[str], forbidden: Sequence[str]
    ) -> None: ...


def _preview(tool_input: Mapping[str, Any], limit: int = 400) -> str:
    import json

    text = json.dumps(dict(tool_input), ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class PermissionGate:
    """The loop's :class:`~skilldeck.agent.permissions.gate.ToolGate` backed by a PermissionPolicy.

    The policy holds what was configured (config files, CLI flags, the agent's skills);
    each session adds the rules it learnt at run time, kept in its own tool state.
    """

    def __init__(self, policy: PermissionPolicy) -> None:
        self.policy = policy

    @property
    def read_only(self) -> bool:
        """Plan mode: tools that may run must not run code either (the Skill tool reads
        this to load a prompt skill's text but refuse scripts, code and ``!`cmd```)."""
        return self.policy.mode == "plan"

    def effective(self, ctx: ToolContext) -> PermissionPolicy:
        """The configured policy plus this session's run-time rules."""
        allow, deny = session_rules(ctx.state)
        if not (allow or deny):
            return self.policy
        return self.policy.extended(allow=allow, deny=deny)

    async def check(self, call: ToolCall, ctx: ToolContext) -> GateDecision:
        policy = self.effective(ctx)
        decision = policy.evaluate(call.name, call.input, workspace=ctx.workspace)
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
        """A human answered "allow always": allow it for the rest of this session."""
        record_rules(ctx.state, "allow", [always_rule(call.name, call.input)])

    def preapprove_skill(
        self, ctx: ToolContext, allowed: Sequence[str], forbidden: Sequence[str]
    ) -> None:
        """A skill was loaded: pre-approve its allowed-tools and deny its forbidden tools
        for the rest of this session. Pre-approval never reaches past the skill policy
        or adds a tool the session lacks (it only turns an ``ask`` into an ``allow``)."""
        grant, refuse = skill_rules(allowed, forbidden)
        record_rules(ctx.state, "deny", refuse)
        record_rules(ctx.state, "allow", grant)


class ScopedGate:
    """Tool policies checked before an inner gate: a sub-agent's skills and type, a
    run's composed skills, an agent definition's ``tools``. A call outside any of them
    is refused with that policy's reason (``label`` names an agent definition); the rest
    go to ``inner``, which keeps its modes, rules and asks."""

    def __init__(
        self,
        policies: Sequence[tuple[ToolPolicy, str | None]],
        inner: ToolGate,
        *,
        read_only: bool = False,
    ) -> None:
        self.policies = list(policies)
        self.inner = inner
        #: a ``permission-mode: plan`` sub-agent: read-only whatever the parent's mode
        self._read_only = read_only

    @property
    def read_only(self) -> bool:
        """Read-only when this scope says so or any gate inside it does (plan mode)."""
        return self._read_only or gate_is_read_only(self.inner)

    async def check(self, call: ToolCall, ctx: ToolContext) -> GateDecision:
        for policy, label in self.policies:
            refusal = policy.check(call.name, call.input, workspace=ctx.workspace)
            if refusal is not None:
                if label is not None:
                    refusal = refusal.replace("the active skills", f"agent {label!r}")
                return GateDecision.deny(refusal)
        return await self.inner.check(call, ctx)

    def remember(self, call: ToolCall, ctx: ToolContext) -> None:
        if isinstance(self.inner, RememberingGate):
            self.inner.remember(call, ctx)

    def preapprove_skill(
        self, ctx: ToolContext, allowed: Sequence[str], forbidden: Sequence[str]
    ) -> None:
        if isinstance(self.inner, SkillAwareGate):
            self.inner.preapprove_skill(ctx, allowed, forbidden)

    def visible_tools(self, available: Iterable[str]) -> set[str]:
        names = set(available)
        for policy, _ in self.policies:
            names = policy.visible_tools(names)
        return names


def gate_is_read_only(gate: object) -> bool:
    """Whether ``gate`` runs its session read-only (plan mode, or a plan sub-agent):
    then no tool may run code, not even one plan mode lets through (``Skill``)."""
    return bool(getattr(gate, "read_only", False))
