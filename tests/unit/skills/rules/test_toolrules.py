from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.skills.rules import (
    ToolRule,
    path_rule_matches,
    split_shell_command,
    split_tool_list,
)

WS = Path("/work/project")


def m(rule: str, tool: str, deny: bool = False, **inp: object) -> bool:
    return ToolRule.parse(rule).matches(tool, inp, workspace=WS, deny=deny)


def test_parse_whole_tool_and_specifier() -> None:
    assert ToolRule.parse("Read") == ToolRule("Read")
    assert ToolRule.parse("Bash(git diff:*)") == ToolRule("Bash", "git diff:*")
    assert ToolRule.parse("Bash(*)").whole_tool
    with pytest.raises(ValueError, match="Invalid tool rule"):
        ToolRule.parse("Bash(unclosed")


def test_split_tool_list_keeps_parentheses_together() -> None:
    assert split_tool_list("Read, Bash(git diff:*) Grep") == ["Read", "Bash(git diff:*)", "Grep"]
    assert split_tool_list("Bash(npm run *),Edit") == ["Bash(npm run *)", "Edit"]


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("Bash(git diff:*)", "git diff", True),
        ("Bash(git diff:*)", "git diff --stat HEAD", True),
        ("Bash(git diff:*)", "git difftool", False),
        ("Bash(git diff:*)", "git status", False),
        ("Bash(npm run *)", "npm run test", True),
        ("Bash(npm run *)", "npm install", False),
        ("Bash(ls)", "ls", True),
        ("Bash(ls)", "ls -la", False),
        ("Bash(opencode run:*)", "opencode run 'add a button'", True),
    ],
)
def test_bash_prefix_glob_exact(rule: str, command: str, expected: bool) -> None:
    assert m(rule, "Bash", command=command) is expected


def test_compound_commands_allow_needs_all_deny_needs_any() -> None:
    cmd = "git diff && rm -rf /"
    assert not m("Bash(git diff:*)", "Bash", command=cmd)
    assert m("Bash(rm:*)", "Bash", deny=True, command=cmd)
    # parts come back re-quoted, so judging a part again sees the same argv
    assert split_shell_command("a | b; c && 'd; e'") == ("a", "b", "c", "'d; e'")


def test_path_rules_gitignore_style() -> None:
    assert path_rule_matches("./secrets/**", WS / "secrets/a/b.txt", WS)
    assert not path_rule_matches("./secrets/**", WS / "src/secrets.txt", WS)
    assert path_rule_matches("*.env", WS / "deep/dir/.env", WS)  # * matches empty, as in git
    assert path_rule_matches("*.env", WS / "deep/dir/prod.env", WS)
    assert path_rule_matches("src/**", WS / "src/x/y.py", WS)
    assert path_rule_matches("//etc/passwd", Path("/etc/passwd"), WS)
    assert not path_rule_matches("src/**", Path("/elsewhere/src/x.py"), WS)


def test_read_rules_cover_glob_and_grep_edit_rules_cover_write() -> None:
    assert m("Read(./secrets/**)", "Read", file_path="secrets/k.pem")
    assert m("Read(./secrets/**)", "Grep", path=str(WS / "secrets"))
    assert m("Edit(src/**)", "Write", file_path=str(WS / "src/a.py"))
    assert m("Edit(src/**)", "MultiEdit", file_path="src/a.py")
    assert not m("Edit(src/**)", "Write", file_path="docs/a.md")


def test_webfetch_domain_skill_and_mcp() -> None:
    assert m("WebFetch(domain:example.com)", "WebFetch", url="https://docs.example.com/x")
    assert not m("WebFetch(domain:example.com)", "WebFetch", url="https://example.org/")
    assert m("Skill(pdf*)", "Skill", skill="pdf-tools")
    assert not m("Skill(pdf)", "Skill", skill="docx")
    assert m("mcp__github__*", "mcp__github__create_issue")
    assert m("mcp__github", "mcp__github__create_issue")
    assert not m("mcp__github__list", "mcp__github__create_issue")
