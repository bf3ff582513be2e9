from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skilldeck.agent.permissions import PermissionPolicy, Verdict
from skilldeck.skills.policy.policy import ToolPolicy
from skilldeck.skills.rules import ToolRule

WS = Path("/ws")


def verdict(policy: PermissionPolicy, tool: str, **inp: object) -> Verdict:
    return policy.evaluate(tool, inp, workspace=WS).verdict


@pytest.mark.parametrize(
    ("mode", "tool", "expected"),
    [
        ("default", "Read", Verdict.ALLOW),
        ("default", "Write", Verdict.ASK),
        ("default", "Bash", Verdict.ASK),
        ("default", "WebFetch", Verdict.ASK),
        ("default", "mcp__gh__x", Verdict.ASK),
        ("acceptEdits", "Edit", Verdict.ALLOW),
        ("acceptEdits", "Bash", Verdict.ASK),
        ("plan", "Read", Verdict.ALLOW),
        ("plan", "Write", Verdict.DENY),
        ("plan", "Bash", Verdict.DENY),
        ("bypassPermissions", "Bash", Verdict.ALLOW),
    ],
)
def test_mode_defaults(mode: str, tool: str, expected: Verdict) -> None:
    policy = PermissionPolicy.from_lists(mode=mode)  # type: ignore[arg-type]
    assert verdict(policy, tool, command="ls", file_path="a") is expected


def test_deny_beats_ask_beats_allow() -> None:
    policy = PermissionPolicy.from_lists(
        allow=["Bash", "Read"], ask=["Bash(git push:*)"], deny=["Bash(rm:*)", "Read(./secrets/**)"]
    )
    assert verdict(policy, "Bash", command="ls") is Verdict.ALLOW
    assert verdict(policy, "Bash", command="git push origin") is Verdict.ASK
    assert verdict(policy, "Bash", command="ls && rm -rf x") is Verdict.DENY
    assert verdict(policy, "Read", file_path="secrets/key") is Verdict.DENY
    assert verdict(policy, "Read", file_path="src/key") is Verdict.ALLOW


def test_bypass_still_honours_deny() -> None:
    policy = PermissionPolicy.from_lists(
        mode="bypassPermissions", deny=["WebFetch(domain:evil.com)"]
    )
    assert verdict(policy, "WebFetch", url="https://evil.com/x") is Verdict.DENY
    assert verdict(policy, "WebFetch", url="https://good.com/x") is Verdict.ALLOW


def test_skill_policy_refuses_forged_calls_first() -> None:
    skill_policy = ToolPolicy(allow=(ToolRule("Read"),), deny=())
    policy = PermissionPolicy.from_lists(mode="bypassPermissions", skill_policy=skill_policy)
    decision = policy.evaluate("Bash", {"command": "ls"}, workspace=WS)
    assert decision.verdict is Verdict.DENY
    assert "not allowed by the active skills" in decision.reason


def test_allow_always_and_skill_preapproval() -> None:
    policy = PermissionPolicy.from_lists()
    policy.allow_always("Bash", {"command": "make test"})
    assert verdict(policy, "Bash", command="make test") is Verdict.ALLOW
    assert verdict(policy, "Bash", command="make deploy") is Verdict.ASK
    policy.preapprove_skill(["Write", "Task"], ["WebFetch"])
    assert verdict(policy, "Write", file_path="x") is Verdict.ALLOW
    assert verdict(policy, "WebFetch", url="https://a.b") is Verdict.DENY
    assert all(r.tool != "Task" for r in policy.allow)
    assert policy.visible_tools(["Write", "WebFetch", "Read"]) == {"Write", "Read"}


def test_unknown_mode_rejected() -> None:
    with pytest.raises(ValueError, match="Unknown permission mode"):
        PermissionPolicy.from_lists(mode="yolo")  # type: ignore[arg-type]


rules = st.sampled_from(
    ["Bash", "Bash(git:*)", "Bash(rm:*)", "Read", "Write", "Edit(src/**)", "WebFetch"]
)


@settings(max_examples=300, deadline=None)
@given(
    allow=st.lists(rules, max_size=4),
    ask=st.lists(rules, max_size=3),
    deny=st.lists(rules, max_size=3),
    mode=st.sampled_from(["default", "acceptEdits", "plan", "bypassPermissions"]),
    tool=st.sampled_from(["Bash", "Read", "Write", "WebFetch"]),
    command=st.sampled_from(["git log", "rm -r x", "git log; rm x"]),
)
def test_property_denied_call_is_never_allowed(
    allow: list[str], ask: list[str], deny: list[str], mode: str, tool: str, command: str
) -> None:
    policy = PermissionPolicy.from_lists(mode=mode, allow=allow, ask=ask, deny=deny)  # type: ignore[arg-type]
    inp = {"command": command, "file_path": "src/a.py", "url": "https://x.y"}
    denied = any(ToolRule.parse(r).matches(tool, inp, workspace=WS, deny=True) for r in deny)
    result = policy.evaluate(tool, inp, workspace=WS)
    if denied:
        assert result.verdict is Verdict.DENY
