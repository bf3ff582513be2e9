"""Dynamic context: finding commands, permission checks, failures, and real shell runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.config import SandboxSettings
from skilldeck.errors import PermissionDeniedError, SkillExecutionError
from skilldeck.sandbox import ProbeResult, Sandbox
from skilldeck.skills.execution import (
    CommandOutput,
    expand_dynamic_context,
    find_commands,
    has_dynamic_context,
    shell_runner,
)

pytestmark = pytest.mark.anyio

BODY = """\
# Review

Branch: !`git branch --show-current`
Not a command: x!`echo glued` and `plain code`

```bash
!`echo inside a normal fence`
```

```!
git status --short
git log -1
```

Done.
"""


class FakeShell:
    def __init__(self, outputs: dict[str, CommandOutput] | None = None) -> None:
        self.outputs = outputs or {}
        self.ran: list[str] = []

    async def __call__(self, command: str) -> CommandOutput:
        self.ran.append(command)
        return self.outputs.get(command, CommandOutput(0, f"<{command}>\n"))


def test_find_commands_inline_and_block_but_not_in_code() -> None:
    found = [(c.command, c.block) for c in find_commands(BODY)]
    assert found == [
        ("git branch --show-current", False),
        ("git status --short\ngit log -1", True),
    ]
    assert has_dynamic_context(BODY) and not has_dynamic_context("plain `code` only")


def test_inline_at_line_start_counts() -> None:
    assert [c.command for c in find_commands("!`date`\ntext")] == ["date"]


async def test_commands_are_replaced_by_their_output() -> None:
    shell = FakeShell()
    out = await expand_dynamic_context(BODY, run=shell)
    assert "Branch: <git branch --show-current>\n" in out
    assert "<git status --short\ngit log -1>\n\nDone." in out
    assert "```!" not in out
    assert "x!`echo glued`" in out and "!`echo inside a normal fence`" in out
    assert shell.ran == ["git branch --show-current", "git status --short\ngit log -1"]


async def test_denied_command_aborts_before_anything_runs() -> None:
    shell = FakeShell()
    checked: list[str] = []

    async def check(command: str) -> str | None:
        checked.append(command)
        return "denied by rule Bash(git log:*)" if "git log" in command else None

    with pytest.raises(PermissionDeniedError, match=r"not allowed \(denied by rule"):
        await expand_dynamic_context(BODY, run=shell, check=check, skill_name="review")
    assert shell.ran == []  # nothing ran: the check happens first for every command
    assert len(checked) == 2


async def test_allowed_commands_run() -> None:
    async def allow(command: str) -> str | None:
        return None

    out = await expand_dynamic_context("a !`echo hi`", run=FakeShell(), check=allow)
    assert out == "a <echo hi>"


async def test_failing_command_aborts_with_exit_code_and_stderr() -> None:
    shell = FakeShell({"make info": CommandOutput(2, "", "make: *** No rule")})
    with pytest.raises(SkillExecutionError, match=r"(?s)`make info` exited with status 2.*No rule"):
        await expand_dynamic_context("x !`make info`", run=shell, skill_name="m")


@pytest.mark.parametrize(
    "command",
    [
        "grep -r TODO src",
        "find . -name '*.orig'",
        "diff a b",
        "git log | grep fix",
        "LC_ALL=C grep x f",
    ],
)
async def test_exit_one_of_search_tools_is_fine(command: str) -> None:
    shell = FakeShell({command: CommandOutput(1, "")})
    assert await expand_dynamic_context(f"r: !`{command}`", run=shell) == "r: "


async def test_exit_one_of_other_programs_aborts() -> None:
    shell = FakeShell({"false": CommandOutput(1, "")})
    with pytest.raises(SkillExecutionError, match="status 1"):
        await expand_dynamic_context("!`false`", run=shell)


async def test_grep_exit_two_still_aborts() -> None:
    shell = FakeShell({"grep x missing": CommandOutput(2, "", "No such file")})
    with pytest.raises(SkillExecutionError):
        await expand_dynamic_context("!`grep x missing`", run=shell)


async def test_timeout_aborts() -> None:
    shell = FakeShell({"sleep 99": CommandOutput(None, "", timed_out=True)})
    with pytest.raises(SkillExecutionError, match="timed out"):
        await expand_dynamic_context("!`sleep 99`", run=shell)


async def test_disabled_leaves_body_verbatim() -> None:
    shell = FakeShell()
    assert await expand_dynamic_context(BODY, run=shell, enabled=False) == BODY
    assert shell.ran == []


async def test_real_shell_runner(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    run = shell_runner(cwd=tmp_path, timeout=30, cap=4096)
    body = "Count: !`wc -l < notes.txt`\nMissing: !`grep gamma notes.txt`\n```!\nls\necho done\n```"
    out = await expand_dynamic_context(body, run=run)
    assert out == "Count: 2\nMissing: \nnotes.txt\ndone"


async def test_shell_runner_reports_sandbox_fallback_once(tmp_path: Path) -> None:
    box = Sandbox(SandboxSettings(mode="auto"), probe=lambda: ProbeResult(False, "no bwrap"))
    run = shell_runner(cwd=tmp_path, timeout=30, cap=4096, sandbox=box)
    warnings: list[str] = []
    out = await expand_dynamic_context("!`echo a` !`echo b`", run=run, warnings=warnings)
    assert out == "a b"
    assert len(warnings) == 1 and "no bwrap" in warnings[0]
