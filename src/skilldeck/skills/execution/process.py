"""Spawn one process with a deadline and capped output, and leave nothing behind.

Shared by the script runner and dynamic context (``!`cmd```). Three things a naive
``subprocess.run(capture_output=True, timeout=…)`` gets wrong, handled here:

* **Grandchildren.** ``subprocess.run`` kills only the direct child on timeout; a
  shell script's ``sleep 1000 &`` survives, keeps the pipes open and the caller hangs.
  The process starts in a new session (its own process group) and the *group* is
  killed — on timeout, and also as soon as the main process exits, so background
  leftovers cannot hold the pipes open or outlive the run.
* **Deadlock.** stdin is fed while stdout and stderr are drained, concurrently, so a
  script that fills one pipe while we wait on the other cannot wedge the run.
* **Memory.** Each stream keeps at most ``cap`` bytes; past that, bytes are read and
  dropped (still read, so the writer never blocks) and the stream is marked truncated.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

__all__ = ["ProcessOutcome", "kill_group", "run_process"]

#: after the main process exits (and its group is killed), how long the readers may
#: take to reach end-of-file before they are abandoned
_EOF_GRACE = 2.0
_CHUNK = 65536


@dataclass
class ProcessOutcome:
    exit_code: int | None
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    timed_out: bool = False
    duration: float = 0.0


class _Capture:
    """Keeps the first ``cap`` bytes of a stream and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.cap = max(cap, 0)
        self.data = bytearray()
        self.truncated = False
        self.done = anyio.Event()

    def add(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        if len(chunk) > room:
            self.truncated = True


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid``; quietly nothing if it is gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _drain(stream: ByteReceiveStream | None, sink: _Capture) -> None:
    try:
        if stream is None:
            return
        while True:
            sink.add(await stream.receive(_CHUNK))
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        sink.done.set()


async def _feed(stream: ByteSendStream | None, data: bytes) -> None:
    if stream is None:
        return
    try:
        if data:
            await stream.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError):
        pass  # the process exited (or closed stdin) without reading it all: its choice
    finally:
        with contextlib.suppress(anyio.BrokenResourceError, BrokenPipeError, OSError):
            await stream.aclose()


async def run_process(
    argv: Sequence[str],
    *,
    stdin: bytes = b"",
    cwd: Path | None,
    env: Mapping[str, str] | None,
    timeout: float,
    cap: int,
) -> ProcessOutcome:
    """Run ``argv`` to completion or ``timeout`` seconds; see the module docstring."""
    out, err = _Capture(cap), _Capture(cap)
    started = time.monotonic()
    exited = False
    async with await anyio.open_process(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=dict(env) if env is not None else None,
        start_new_session=True,
    ) as proc:
        try:
            with anyio.move_on_after(timeout) as deadline:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_feed, proc.stdin, stdin)
                    tg.start_soon(_drain, proc.stdout, out)
                    tg.start_soon(_drain, proc.stderr, err)
                    await proc.wait()
                    exited = True
                    kill_group(proc.pid)  # background leftovers must not hold the pipes
                    with anyio.move_on_after(_EOF_GRACE):
                        await out.done.wait()
                        await err.done.wait()
                    tg.cancel_scope.cancel()
        finally:
            kill_group(proc.pid)
            if proc.returncode is None:
                with anyio.CancelScope(shield=True):
                    await proc.wait()
    return ProcessOutcome(
        exit_code=proc.returncode,
        stdout=bytes(out.data),
        stderr=bytes(err.data),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        timed_out=deadline.cancelled_caught and not exited,
        duration=time.monotonic() - started,
    )
