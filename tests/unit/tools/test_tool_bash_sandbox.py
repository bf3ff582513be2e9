"""Bash under bubblewrap: writes outside the workspace fail, the network is gone, a
timeout still ends everything the command started, and `required` without bwrap refuses."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from skilldeck.config import SandboxSettings, Settings
from skilldeck.sandbox import ProbeResult, Sandbox, probe_sandbox
from skilldeck.tools.base import ToolContext
from skilldeck.tools.bash import BashTool

pytestmark = pytest.mark.anyio

needs_bwrap = pytest.mark.skipif(
    not probe_sandbox().available, reason=f"bubblewrap unusable here: {probe_sandbox().reason}"
)


def make_ctx(tmp_path: Path, mode: str) -> ToolContext:
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = Settings(workspace=ws, sandbox=SandboxSettings(mode=mode))  # type: ignore[arg-type]
    return ToolContext(session_id="s", workspace=ws.resolve(), settings=settings)


@needs_bwrap
async def test_sandboxed_bash_cannot_write_outside_or_reach_network(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, "required")
    outside = tmp_path / "outside.txt"
    ok = await BashTool().call({"command": "echo hi > inside.txt && cat inside.txt"}, ctx)
    assert not ok.is_error and ok.content.strip() == "hi"
    hidden = await BashTool().call({"command": f"echo pwned > {outside}"}, ctx)
    assert not outside.exists(), hidden.content  # /tmp inside is a fresh tmpfs
    host_path = Path("/var/tmp") / f"skilldeck-sbx-{uuid.uuid4().hex}"
    denied = await BashTool().call({"command": f"echo pwned > {host_path}"}, ctx)
    assert denied.is_error and not host_path.exists()
    net = await BashTool().call(
        {"command": "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), 2)\""},
        ctx,
    )
    assert net.is_error


@needs_bwrap
async def test_sandboxed_timeout_stops_background_work(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, "required")
    beat = ctx.workspace / "beat"
    command = "(while true; do date +%s%N >> beat; sleep 0.05; done) & sleep 100"
    result = await BashTool().call({"command": command, "timeout": 1500}, ctx)
    assert result.is_error and "timed out" in result.content.lower()
    size = beat.stat().st_size
    time.sleep(0.5)
    assert beat.stat().st_size == size  # nothing is still writing


async def test_required_without_bwrap_refuses(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, "required")
    missing = Sandbox(ctx.settings, probe=lambda: ProbeResult(False, "bwrap is not installed"))
    ctx.state[Sandbox.STATE_KEY] = missing
    result = await BashTool().call({"command": "echo hi"}, ctx)
    assert result.is_error and "sandbox is required" in result.content


async def test_auto_without_bwrap_warns_once(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, "auto")
    ctx.state[Sandbox.STATE_KEY] = Sandbox(
        ctx.settings, probe=lambda: ProbeResult(False, "bwrap is not installed")
    )
    first = await BashTool().call({"command": "echo one"}, ctx)
    second = await BashTool().call({"command": "echo two"}, ctx)
    assert "without a sandbox" in first.content and "one" in first.content
    assert "without a sandbox" not in second.content
