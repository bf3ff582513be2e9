"""Bash: output, exit codes, cwd persistence, timeouts that kill the whole group,
output cap, environment scrubbing."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from skilldeck.config import SandboxSettings, Settings
from skilldeck.tools.base import ToolContext, ToolResult
from skilldeck.tools.bash import CWD_STATE, BashTool, _build_argv, kill_background, scrub_env

pytestmark = pytest.mark.anyio


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    # Bash semantics without the sandbox (host pids are observable); the sandboxed
    # variant is covered in test_tool_bash_sandbox.py.
    settings = Settings(workspace=ws, sandbox=SandboxSettings(mode="off"))
    return ToolContext(session_id="sess-1", workspace=ws.resolve(), settings=settings)


async def bash(ctx: ToolContext, command: str, **args: Any) -> ToolResult:
    return await BashTool().call({"command": command, **args}, ctx)


def alive(pid: int) -> bool:
    """Running (zombies count as gone: they are dead, just not reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


async def test_runs_in_workspace_and_combines_streams(ctx: ToolContext) -> None:
    result = await bash(ctx, "pwd; echo out; echo err >&2")
    assert not result.is_error
    assert result.content.splitlines() == [str(ctx.workspace), "out", "err"]
    assert result.data["exit_code"] == 0


async def test_nonzero_exit_is_reported(ctx: ToolContext) -> None:
    result = await bash(ctx, "echo oops; exit 3")
    assert result.is_error
    assert result.content.startswith("oops")
    assert "Exit code 3" in result.content
    assert result.data["exit_code"] == 3


async def test_no_output(ctx: ToolContext) -> None:
    result = await bash(ctx, "true")
    assert result.content == "(Bash completed with no output)"


async def test_cwd_persists_between_calls(ctx: ToolContext) -> None:
    await bash(ctx, "cd sub")
    assert ctx.state[CWD_STATE] == str(ctx.workspace / "sub")
    assert (await bash(ctx, "pwd")).content == str(ctx.workspace / "sub")
    await bash(ctx, "cd .. && exit 4")  # the EXIT trap still reports the cwd
    assert (await bash(ctx, "pwd")).content == str(ctx.workspace)


async def test_cd_outside_roots_is_reset(ctx: ToolContext) -> None:
    result = await bash(ctx, "cd / && pwd")
    assert "Shell cwd was reset" in result.content
    assert (await bash(ctx, "pwd")).content == str(ctx.workspace)


async def test_deleted_cwd_falls_back_to_workspace(ctx: ToolContext) -> None:
    await bash(ctx, "mkdir gone && cd gone")
    (ctx.workspace / "gone").rmdir()
    result = await bash(ctx, "pwd")
    assert "is gone" in result.content
    assert result.content.splitlines()[-1] == str(ctx.workspace)


async def test_environment_changes_do_not_persist(ctx: ToolContext) -> None:
    await bash(ctx, "export FOO_VAR=1")
    assert (await bash(ctx, 'echo "[${FOO_VAR:-}]"')).content == "[]"


async def test_timeout_kills_the_whole_process_group(ctx: ToolContext) -> None:
    command = (
        "sleep 100 & echo $! > pids; "
        "(sleep 100 & echo $! >> pids; wait) & "
        "sh -c 'trap \"\" TERM; sleep 100' & echo $! >> pids; "
        "echo started; sleep 100"
    )
    started = time.monotonic()
    result = await bash(ctx, command, timeout=1000)
    elapsed = time.monotonic() - started
    assert result.is_error
    assert "timed out after 1s" in result.content
    assert "killed (SIGTERM, then SIGKILL)" in result.content  # one child ignores SIGTERM
    assert result.content.startswith("started")
    assert result.data["timed_out"] is True
    assert elapsed < 30
    pids = [int(p) for p in (ctx.workspace / "pids").read_text(encoding="utf-8").split()]
    assert len(pids) == 3
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)


async def test_timeout_validation(ctx: ToolContext) -> None:
    result = await bash(ctx, "true", timeout=600_001)
    assert result.is_error and "timeout" in result.content


async def test_output_is_capped_with_note(ctx: ToolContext) -> None:
    result = await bash(ctx, "seq 1 200000")
    assert len(result.content) < 31_000
    assert "output truncated" in result.content
    assert result.content.startswith("1\n2\n3\n")
    assert result.content.rstrip().endswith("200000")  # the tail is kept too


async def test_environment_is_scrubbed(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {
        "OPENAI_API_KEY": "k1",
        "GITHUB_TOKEN": "k2",
        "MY_SECRET": "k3",
        "DB_PASSWORD": "k4",
        "AWS_CREDENTIALS": "k5",
        "api_key_lower": "k6",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HARMLESS_SETTING", "visible")
    result = await bash(ctx, "env")
    for name in secrets:
        assert name not in result.content
    assert "HARMLESS_SETTING=visible" in result.content
    assert "SKILLDECK_SESSION_ID=sess-1" in result.content
    assert "OPENAI_API_KEY" not in scrub_env({"OPENAI_API_KEY": "x", "PATH": "/bin"})


async def test_stdin_is_closed(ctx: ToolContext) -> None:
    result = await bash(ctx, "cat; echo done", timeout=5000)
    assert result.content == "done"


async def test_background_job_does_not_block(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = await bash(ctx, "sleep 30 & echo $!", timeout=20_000)
    assert not result.is_error
    assert time.monotonic() - started < 10
    pid = int(result.content.strip())
    assert alive(pid)
    assert kill_background(ctx) == 1
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


async def test_user_positional_arguments_are_not_leaked(ctx: ToolContext) -> None:
    result = await bash(ctx, 'echo "[$1][$#]"')
    assert result.content == "[][0]"


def test_build_argv_is_the_sandbox_seam(ctx: ToolContext) -> None:
    argv = _build_argv("echo hi", ctx)
    assert argv[0].endswith("bash")
    assert argv[-1] == "echo hi"


async def test_cancelled_call_kills_the_group(ctx: ToolContext) -> None:
    import anyio

    with anyio.move_on_after(1.0):
        await bash(ctx, "sleep 100 & echo $! > pid; sleep 100", timeout=60_000)
    pid = int((ctx.workspace / "pid").read_text(encoding="utf-8"))
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)
