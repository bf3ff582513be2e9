"""Rule lists: a lone string is never one rule per character; which rules name a tool
that does not exist, and the likely one."""

from __future__ import annotations

import pytest

from skilldeck.agent.permissions.permissions import PermissionPolicy
from skilldeck.skills.rules import ToolRule, parse_rules, unknown_rule_tool

KNOWN = ["Bash", "Read", "Write", "WebFetch", "Skill", "Task"]


def test_parse_rules_refuses_a_lone_string() -> None:
    with pytest.raises(ValueError, match=r"expected a list of rules, got the string 'Bash'"):
        parse_rules("Bash")


def test_parse_rules_refuses_an_item_that_is_not_a_string() -> None:
    with pytest.raises(ValueError, match="a rule is a string, not int 3"):
        parse_rules(["Bash", 3])  # type: ignore[list-item]


def test_parse_rules_still_skips_empty_items() -> None:
    assert parse_rules(["", "  ", None, "Bash"]) == [ToolRule("Bash")]  # type: ignore[list-item]


def test_a_policy_from_a_string_is_refused_not_split() -> None:
    with pytest.raises(ValueError, match="got the string 'Bash'"):
        PermissionPolicy.from_lists(mode="bypassPermissions", deny="Bash")


@pytest.mark.parametrize(
    ("rule", "guess"),
    [("bash", "Bash"), ("BASH(git:*)", "Bash"), ("Bsah", "Bash"), ("Wrte", "Write")],
)
def test_a_misspelt_tool_is_unknown_with_a_guess(rule: str, guess: str) -> None:
    assert unknown_rule_tool(ToolRule.parse(rule), KNOWN) == (True, guess)


def test_a_tool_far_from_any_is_unknown_without_a_guess() -> None:
    assert unknown_rule_tool(ToolRule.parse("Zzyzx"), KNOWN) == (True, None)


@pytest.mark.parametrize(
    "rule",
    [
        "Bash",
        "Bash(git diff:*)",
        "Skill(summarize)",
        "Task(Explore)",
        "mcp__github__create_issue",
        "mcp__github",
        "mcp__*",
        "*",
        "B*",
        "Ta?k",
    ],
)
def test_known_tools_patterns_and_mcp_names_are_not_unknown(rule: str) -> None:
    assert unknown_rule_tool(ToolRule.parse(rule), KNOWN) == (False, None)
