"""run_process: deadlines, exit statuses, caps and start failures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skilldeck.skills.execution import run_process

pytestmark = pytest.mark.anyio


async def test_collects_both_streams_and_exit_code(tmp_path: Path) -> None:
    code = "import sys; print('out'); sys.stderr.write('err'); sys.exit(4)"
    out = await run_process(
        [sys.executable, "-c", code], cwd=tmp_path, env=None, timeout=30, cap=1024
    )
    assert (out.exit_code, out.stdout.strip(), out.stderr) == (4, b"out", b"err")
    assert not out.timed_out and not out.stdout_truncated


async def test_stdin_is_fed(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.write(sys.stdin.read().upper())"
    out = await run_process(
        [sys.executable, "-c", code], stdin=b"abc", cwd=tmp_path, env=None, timeout=30, cap=1024
    )
    assert out.stdout == b"ABC"


async def test_killed_by_signal_has_negative_code(tmp_path: Path) -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    out = await run_process(
        [sys.executable, "-c", code], cwd=tmp_path, env=None, timeout=30, cap=1024
    )
    assert out.exit_code == -15 and not out.timed_out


async def test_timeout_is_flagged(tmp_path: Path) -> None:
    out = await run_process(["sleep", "30"], cwd=tmp_path, env=None, timeout=0.3, cap=1024)
    assert out.timed_out and out.exit_code == -9 and out.duration < 10


async def test_cap_keeps_the_first_bytes(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.write('a' * 10 + 'b' * 100000)"
    out = await run_process(
        [sys.executable, "-c", code], cwd=tmp_path, env=None, timeout=30, cap=10
    )
    assert out.stdout == b"a" * 10 and out.stdout_truncated


async def test_missing_program_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        await run_process(["/no/such/program"], cwd=tmp_path, env=None, timeout=5, cap=10)
