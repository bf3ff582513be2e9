from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skilldeck.errors import PolicyError, SkillNotFoundError
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.model.spec import SkillMetadata
from skilldeck.skills.policy.policy import ToolPolicy, compose, validate_skill_set

WS = Path("/ws")


def mk(name: str, **fields: Any) -> Skill:
    meta = SkillMetadata(name=name, description=f"{name} skill", **fields)
    return Skill(
        metadata=meta, folder=Path(f"/skills/{name}"), skill_md=Path(f"/skills/{name}/SKILL.md")
    )


class Lookup:
    def __init__(self, *skills: Skill) -> None:
        self.skills: dict[tuple[str, str | None], Skill] = {}
        for s in skills:
            self.skills.setdefault((s.name, None), s)
            self.skills[(s.name, s.version)] = s

    def get(self, name: str, version: str | None = None) -> Skill:
        try:
            return self.skills[(name, version)]
        except KeyError:
            names = sorted({n for n, _ in self.skills})
            raise SkillNotFoundError(
                name, suggestions=difflib.get_close_matches(name, names)
            ) from None

    def why_unavailable(self, skill: Skill) -> str | None:
        return None


SPEC = mk(
    "specification-engine",
    allowed_tools=["Read", "Grep", "Write"],
    before=["opencode-implementer"],
    execution_protocol=["write the spec", "list acceptance criteria"],
)
IMPL = mk(
    "opencode-implementer",
    allowed_tools=["Bash(opencode run:*)", "Read"],
    forbidden_tools=["Write", "Edit"],
    requires=["specification-engine"],
    execution_protocol=["run opencode"],
)


def test_compose_orders_and_applies_most_restrictive() -> None:
    composed = compose(["opencode-implementer", "specification-engine"], Lookup(SPEC, IMPL))
    assert composed.names == ["specification-engine", "opencode-implementer"]
    assert composed.execution_protocol[0].startswith("[specification-engine]")
    assert composed.execution_protocol[-1] == "[opencode-implementer] run opencode"
    tools = composed.tools(["Read", "Grep", "Write", "Edit", "Bash", "Task"])
    assert tools == {"Read", "Grep", "Bash"}
    assert composed.policy.check("Bash", {"command": "opencode run 'x'"}, workspace=WS) is None
    assert composed.policy.check("Bash", {"command": "rm -rf /"}, workspace=WS) is not None
    assert "not allowed" in (composed.policy.check("WebFetch", {}, workspace=WS) or "")
    assert any(w.code == "SD304" for w in composed.warnings)


def test_reject_mode_turns_clash_into_error() -> None:
    result = validate_skill_set(
        ["specification-engine", "opencode-implementer"], Lookup(SPEC, IMPL), conflicts="reject"
    )
    assert not result.valid
    assert [e.code for e in result.errors] == ["SD304"]
    assert "specification-engine" in result.errors[0].message


def test_unknown_missing_companion_conflict_cycle() -> None:
    a = mk("a", allowed_tools=["Read"], conflicts=["b"], before=["c"])
    b = mk("b", allowed_tools=["Read"])
    c = mk("c", allowed_tools=["Read"], before=["a"], requires=["zz"])
    result = validate_skill_set(["a", "b", "c", "nope"], Lookup(a, b, c))
    codes = sorted(e.code for e in result.errors)
    assert codes == ["SD301", "SD302", "SD303", "SD305"]
    with pytest.raises(PolicyError) as info:
        compose(["a", "b"], Lookup(a, b))
    assert info.value.diagnostics[0].code == "SD303"


def test_redundant_and_grants_nothing_are_warnings() -> None:
    v1 = mk("tool", version="1.0", allowed_tools=["Read"])
    v2 = mk("tool", version="2.0", allowed_tools=["Read"])
    bare = mk("bare")
    result = validate_skill_set(["tool@1.0", "tool@2.0", "bare", "bare"], Lookup(v1, v2, bare))
    assert result.valid
    assert sorted(w.code for w in result.warnings) == ["SD306", "SD306", "SD307"]


def test_skills_cannot_grant_task_and_never_exceed_parent() -> None:
    sneaky = mk("sneaky", allowed_tools=["Task", "Bash", "Read"])
    composed = compose(["sneaky"], Lookup(sneaky), parent_tools=["Read", "Grep"])
    assert composed.tools(["Task", "Bash", "Read", "Grep"]) == {"Read"}


TOOLS = ["Read", "Write", "Edit", "Bash", "Grep", "Glob", "WebFetch", "Task", "mcp__s__t"]
rule_st = st.sampled_from([*TOOLS, "Bash(git:*)", "Read(src/**)", "mcp__s__*", "Edit(src/**)"])


@settings(max_examples=200, deadline=None)
@given(
    skills=st.lists(
        st.tuples(st.lists(rule_st, max_size=4), st.lists(rule_st, max_size=3)),
        min_size=1,
        max_size=5,
    ),
    parent=st.sets(st.sampled_from(TOOLS)),
    call_tool=st.sampled_from(TOOLS),
    command=st.sampled_from(["git status", "rm x", "git diff && rm x"]),
)
def test_property_composed_set_never_contains_forbidden_nor_exceeds_parent(
    skills: list[tuple[list[str], list[str]]], parent: set[str], call_tool: str, command: str
) -> None:
    made = [mk(f"s{i}", allowed_tools=a, forbidden_tools=f) for i, (a, f) in enumerate(skills)]
    composed = compose([s.name for s in made], Lookup(*made), parent_tools=parent)
    visible = composed.tools(TOOLS)
    assert visible <= parent
    assert "Task" not in visible
    whole_forbidden = {
        t
        for s in made
        for rule in s.metadata.forbidden_tools
        for t in TOOLS
        if "(" not in rule
        and (
            rule == t
            or (rule == "Edit" and t in {"Write", "Edit"})
            or (rule == "Read" and t in {"Read", "Glob", "Grep"})
            or (rule.endswith("*") and t.startswith(rule[:-1]))
        )
    }
    assert not visible & whole_forbidden
    inp = {"command": command, "file_path": "src/a.py", "path": "src"}
    if call_tool not in parent or call_tool in whole_forbidden:
        assert composed.policy.check(call_tool, inp, workspace=WS) is not None


def test_unrestricted_policy_allows_everything() -> None:
    assert ToolPolicy.unrestricted().check("Bash", {"command": "x"}, workspace=WS) is None
    assert ToolPolicy.unrestricted().visible_tools(TOOLS) == set(TOOLS)
