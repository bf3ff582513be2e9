"""Composing skill sets under least privilege.

**The rule, written down once:** a run (or sub-agent) started with skills gets
exactly the tools that *some* skill in the set lists in ``allowed-tools``, minus every
tool that *any* skill forbids (``forbidden-tools`` or ``disallowed-tools``), and never
more than its parent holds. The most restrictive rule wins: a forbid always beats an
allow. A skill with no ``allowed-tools`` grants nothing. No skill can grant ``Task`` /
``Agent`` (spawning) — that stays with the agent definition.

``validate_skill_set`` reports every problem at once as diagnostics (codes SD3xx);
``compose`` returns the :class:`ComposedSkill` with its effective :class:`ToolPolicy`,
or raises :class:`~skilldeck.errors.PolicyError` carrying the same diagnostics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from skilldeck.errors import PolicyError, SkillNotFoundError
from skilldeck.skills.model.diagnostics import Diagnostic, Severity
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.rules import SPAWNING_TOOLS, ToolRule, parse_rules

#: tools a skill can never grant: spawning stays with the agent definition
UNGRANTABLE = SPAWNING_TOOLS

ConflictMode = Literal["resolve", "reject"]


class SkillLookup(Protocol):
    """What composition needs from a registry: the skill a name means, and the
    registry's view of whether it can be used (None: it can)."""

    def get(self, name: str, version: str | None = None) -> Skill: ...

    def why_unavailable(self, skill: Skill) -> str | None: ...


@dataclass(frozen=True)
class ToolPolicy:
    """The effective tool policy of a composed skill set.

    ``allow`` is None when nothing restricts the tool set (no skills active);
    otherwise a call must match an allow rule and no deny rule.
    """

    allow: tuple[ToolRule, ...] | None = None
    deny: tuple[ToolRule, ...] = ()

    @classmethod
    def unrestricted(cls) -> ToolPolicy:
        return cls()

    def visible_tools(self, available: Iterable[str]) -> set[str]:
        """Tools the model may see: named by some allow rule, not wholly denied."""
        names = set(available)
        if self.allow is not None:
            names = {n for n in names if any(_grants(r, n) for r in self.allow)}
        wholly_denied = {
            n for n in names if any(r.whole_tool and r.names_tool(n) for r in self.deny)
        }
        return names - wholly_denied

    def check(
        self, tool_name: str, tool_input: Mapping[str, Any] | None, *, workspace: Path
    ) -> str | None:
        """None when the call is permitted; otherwise the reason it is not."""
        for rule in self.deny:
            if rule.matches(tool_name, tool_input, workspace=workspace, deny=True):
                return f"tool {tool_name} is forbidden by the active skills (rule {rule})"
        if self.allow is None:
            return None
        granting = [r for r in self.allow if _grants(r, tool_name)]
        if not granting:
            return f"tool {tool_name} is not allowed by the active skills"
        if any(
            r.matches(tool_name, tool_input, workspace=workspace, deny=False, family=False)
            for r in granting
        ):
            return None
        allowed = ", ".join(str(r) for r in granting)
        return f"this {tool_name} call is not allowed by the active skills (allowed: {allowed})"

    def within(self, parent_tools: Iterable[str]) -> ToolPolicy:
        """Never exceed the parent: drop allow rules for tools the parent lacks."""
        parent = set(parent_tools)
        if self.allow is None:
            allow = tuple(ToolRule(name) for name in sorted(parent))
        else:
            allow = tuple(r for r in self.allow if any(_grants(r, p) for p in parent))
        return ToolPolicy(allow=allow, deny=self.deny)


def _grants(rule: ToolRule, tool_name: str) -> bool:
    """Whether an allow rule grants ``tool_name``: only the tool it names (no family),
    and a spawning tool only when named literally (``*`` never grants ``Task``)."""
    return rule.names_tool(tool_name, family=False, grant=True)


@dataclass
class ValidationResult:
    valid: bool
    errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "errors": [d.to_dict() for d in self.errors],
            "warnings": [d.to_dict() for d in self.warnings],
        }


@dataclass
class ComposedSkill:
    skills: list[Skill]
    policy: ToolPolicy
    #: steps in execution order, each prefixed with its skill: "[spec] write acceptance criteria"
    execution_protocol: list[str]
    preconditions: list[str]
    postconditions: list[str]
    output_contracts: dict[str, dict[str, Any]]
    warnings: list[Diagnostic] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.skills]

    def tools(self, available: Iterable[str]) -> set[str]:
        return self.policy.visible_tools(available)


def _diag(code: str, rule: str, message: str, severity: Severity = Severity.ERROR) -> Diagnostic:
    return Diagnostic(code=code, rule=rule, message=message, severity=severity)


def _split_version(ref: str) -> tuple[str, str | None]:
    name, _, version = ref.partition("@")
    return name, (version or None)


def _resolve(refs: Sequence[str], lookup: SkillLookup, out: list[Diagnostic]) -> list[Skill]:
    skills: list[Skill] = []
    seen: dict[str, Skill] = {}
    for ref in refs:
        name, version = _split_version(ref)
        try:
            skill = lookup.get(name, version)
        except SkillNotFoundError as e:
            out.append(_diag("SD301", "unknown-skill", str(e)))
            continue
        reason = lookup.why_unavailable(skill)
        if reason is not None:
            out.append(
                _diag("SD308", "skill-unavailable", f"Skill {name!r} cannot be used: {reason}.")
            )
            continue
        if name in seen:
            other = seen[name]
            what = (
                f"two versions of skill {name!r} ({other.version} and {skill.version})"
                if other.version != skill.version
                else f"skill {name!r} twice"
            )
            out.append(
                _diag(
                    "SD306",
                    "redundant-skill",
                    f"The set lists {what}; only the first is used.",
                    Severity.WARNING,
                )
            )
            continue
        seen[name] = skill
        skills.append(skill)
    return skills


def _check_relations(skills: list[Skill], out: list[Diagnostic]) -> None:
    names = {s.name for s in skills}
    for skill in skills:
        for companion in skill.metadata.requires:
            if companion not in names:
                out.append(
                    _diag(
                        "SD302",
                        "missing-companion",
                        f"Skill {skill.name!r} requires {companion!r}, which is not in the set "
                        f"{sorted(names)}; add it.",
                    )
                )
        for other in skill.metadata.conflicts:
            if other in names and other != skill.name:
                out.append(
                    _diag(
                        "SD303",
                        "declared-conflict",
                        f"Skills {skill.name!r} and {other!r} conflict "
                        f"({skill.name!r} declares it); use one of them.",
                    )
                )


def _order(skills: list[Skill], out: list[Diagnostic]) -> list[Skill]:
    """Topological order from ``before``/``after``; listed order breaks ties."""
    by_name = {s.name: s for s in skills}
    edges: dict[str, set[str]] = {s.name: set() for s in skills}  # a -> b: a runs before b
    for s in skills:
        for later in s.metadata.before:
            if later in by_name:
                edges[s.name].add(later)
        for earlier in s.metadata.after:
            if earlier in by_name:
                edges[earlier].add(s.name)
    indegree = {n: 0 for n in edges}
    for targets in edges.values():
        for t in targets:
            indegree[t] += 1
    listed = [s.name for s in skills]
    ready = [n for n in listed if indegree[n] == 0]
    ordered: list[str] = []
    while ready:
        current = ready.pop(0)
        ordered.append(current)
        for t in sorted(edges[current], key=listed.index):
            indegree[t] -= 1
            if indegree[t] == 0:
                ready.append(t)
        ready.sort(key=listed.index)
    if len(ordered) != len(listed):
        cycle = sorted(n for n in listed if n not in ordered)
        out.append(
            _diag(
                "SD305",
                "ordering-cycle",
                f"Skills {cycle} have contradictory before/after constraints; remove one of them.",
            )
        )
        ordered += [n for n in listed if n not in ordered]
    return [by_name[n] for n in ordered]


def _tool_rules(skills: list[Skill], mode: ConflictMode, out: list[Diagnostic]) -> ToolPolicy:
    allow: list[ToolRule] = []
    deny: list[ToolRule] = []
    for skill in skills:
        try:
            allowed = parse_rules(skill.metadata.allowed_tools)
            forbidden = parse_rules(skill.metadata.forbidden)
        except ValueError as e:
            out.append(_diag("SD309", "bad-tool-rule", f"Skill {skill.name!r}: {e}"))
            continue
        if not allowed:
            out.append(
                _diag(
                    "SD307",
                    "grants-nothing",
                    f"Skill {skill.name!r} has no allowed-tools, so it grants no tool in this set.",
                    Severity.WARNING,
                )
            )
        for rule in allowed:
            if rule.tool in UNGRANTABLE:
                out.append(
                    _diag(
                        "SD310",
                        "ungrantable-tool",
                        f"Skill {skill.name!r} lists {rule} in allowed-tools; skills cannot grant "
                        "sub-agent tools, so it is ignored.",
                        Severity.WARNING,
                    )
                )
                continue
            if rule.is_pattern and any(rule.names_tool(t, family=False) for t in UNGRANTABLE):
                out.append(
                    _diag(
                        "SD310",
                        "ungrantable-tool",
                        f"Skill {skill.name!r} lists {rule} in allowed-tools; the pattern "
                        "grants the tools it matches except the sub-agent tools "
                        f"({', '.join(sorted(UNGRANTABLE))}), which skills cannot grant.",
                        Severity.WARNING,
                    )
                )
            allow.append(rule)
        deny.extend(forbidden)
    _report_clashes(skills, allow, deny, mode, out)
    return ToolPolicy(allow=tuple(dict.fromkeys(allow)), deny=tuple(dict.fromkeys(deny)))


def _report_clashes(
    skills: list[Skill],
    allow: list[ToolRule],
    deny: list[ToolRule],
    mode: ConflictMode,
    out: list[Diagnostic],
) -> None:
    owners_allow = {
        str(r): [s.name for s in skills if str(r) in _rule_texts(s.metadata.allowed_tools)]
        for r in allow
    }
    owners_deny = {
        str(r): [s.name for s in skills if str(r) in _rule_texts(s.metadata.forbidden)]
        for r in deny
    }
    for a in allow:
        for d in deny:
            if (d.whole_tool and d.names_tool(a.tool)) or str(a) == str(d):
                who_allows = ", ".join(owners_allow.get(str(a), []))
                who_denies = ", ".join(owners_deny.get(str(d), []))
                severity = Severity.ERROR if mode == "reject" else Severity.WARNING
                fix = (
                    "remove one of the skills or the conflicting rule"
                    if mode == "reject"
                    else "the most restrictive rule wins, so it is removed"
                )
                out.append(
                    _diag(
                        "SD304",
                        "tool-clash",
                        f"{a} is allowed by {who_allows} but {d} is forbidden by "
                        f"{who_denies}; {fix}.",
                        severity,
                    )
                )
                break  # one report per allowed rule is enough


def _rule_texts(values: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for v in values:
        try:
            out.add(str(ToolRule.parse(v)))
        except ValueError:
            continue
    return out


def _names(refs: Sequence[str]) -> list[str]:
    """``refs`` as a list: one name alone (a str) is a set of one, never its letters."""
    names = [refs] if isinstance(refs, str) else list(refs)
    if bad := [r for r in names if not isinstance(r, str)]:
        raise TypeError(f"A skill set holds names ('pdf', 'pdf@1.2'), not {bad[0]!r:.80}.")
    return names


def _analyse(
    refs: Sequence[str], lookup: SkillLookup, mode: ConflictMode
) -> tuple[list[Skill], ToolPolicy, list[Diagnostic]]:
    diagnostics: list[Diagnostic] = []
    skills = _resolve(_names(refs), lookup, diagnostics)
    _check_relations(skills, diagnostics)
    ordered = _order(skills, diagnostics)
    policy = _tool_rules(ordered, mode, diagnostics)
    return ordered, policy, diagnostics


def validate_skill_set(
    refs: Sequence[str], lookup: SkillLookup, *, conflicts: ConflictMode = "resolve"
) -> ValidationResult:
    """Every problem with using ``refs`` (names or ``name@version``; a str is one) together."""
    _, _, diagnostics = _analyse(refs, lookup, conflicts)
    errors = [d for d in diagnostics if d.is_error]
    return ValidationResult(
        valid=not errors, errors=errors, warnings=[d for d in diagnostics if not d.is_error]
    )


def compose(
    refs: Sequence[str],
    lookup: SkillLookup,
    *,
    conflicts: ConflictMode = "resolve",
    parent_tools: Iterable[str] | None = None,
) -> ComposedSkill:
    """The composed skill, or PolicyError with every diagnostic when the set is invalid."""
    refs = _names(refs)
    ordered, policy, diagnostics = _analyse(refs, lookup, conflicts)
    errors = [d for d in diagnostics if d.is_error]
    if errors:
        summary = "; ".join(f"{d.code} {d.message}" for d in errors)
        raise PolicyError(f"Cannot compose skills {refs}: {summary}", diagnostics=errors)
    if parent_tools is not None:
        policy = policy.within(parent_tools)
    return ComposedSkill(
        skills=ordered,
        policy=policy,
        execution_protocol=[
            f"[{s.name}] {step}" for s in ordered for step in s.metadata.execution_protocol
        ],
        preconditions=[f"[{s.name}] {c}" for s in ordered for c in s.metadata.preconditions],
        postconditions=[f"[{s.name}] {c}" for s in ordered for c in s.metadata.postconditions],
        output_contracts={
            s.name: s.metadata.output_contract for s in ordered if s.metadata.output_contract
        },
        warnings=[d for d in diagnostics if not d.is_error],
    )
