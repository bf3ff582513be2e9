"""Bash: run a shell command, keep the working directory between calls.

Each call is a fresh ``bash -c`` in its own process group (``start_new_session``),
so a timeout can kill the command *and everything it spawned* (SIGTERM, then
SIGKILL). The working directory survives between calls of one session: the shell
reports its final ``builtin pwd -P`` on a private pipe (an EXIT trap, so ``exit N``
still reports), and the next call starts there (``ctx.state["bash_cwd"]``). A ``cd``
outside the workspace roots is undone on the next call, with a note.

The report comes from the same shell the command ran in, so the command can forge it
(a function named ``builtin``, its own EXIT trap). It is therefore *data*: only an
absolute path whose real path (symlinks and ``..`` resolved) is a directory inside
the writable roots is kept, and the stored directory is resolved and checked again
before the next call starts in it. A forged report can at most pick another
directory inside the roots, which a plain ``cd`` could do too.

Background jobs whose output goes to a file keep running after the call returns;
ones still holding the output pipe are not waited for (their later output is
lost). :func:`kill_background` ends whatever a session left running.

The environment is scrubbed of variables that look like credentials (a call a code
skill makes through ``ctx.tools`` gets that skill's declared credentials back:
``skills/execution/credentials.py``), and carries
command-scope git config that stops git from running what a repository's config
names (:mod:`skilldeck._gitguard`). The argv is built in one place,
:func:`_build_argv`, so the sandbox can wrap it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import anyio
from anyio.abc import Process
from pydantic import BaseModel, Field

from skilldeck._gitguard import git_guard_env
from skilldeck.errors import ToolError
from skilldeck.sandbox import Sandbox
from skilldeck.skills.execution import active_credentials
from skilldeck.tools.base import Tool, ToolContext, ToolResult
from skilldeck.tools.fs import allowed_roots, is_inside
from skilldeck.tools.fs._text import OUTPUT_CAP

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
#: seconds between SIGTERM and SIGKILL on timeout
KILL_GRACE = 2.0
#: seconds to keep reading output after the shell exits (background jobs may hold it)
DRAIN_GRACE = 0.25
SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")
CWD_STATE = "bash_cwd"
PGID_STATE = "bash_pgids"
_CWD_FD_ENV = "__SKILLDECK_CWD_FD"

# The user's command runs through eval with the report pipe closed, so its children
# never hold it; the EXIT trap reports the final directory even after `exit N`.
# `\\builtin pwd -P` is neither an alias nor a function named `pwd` (the report is
# still checked as untrusted data by _settle_cwd).
_SCRIPT = (
    f"__sd_fd=${_CWD_FD_ENV}; unset {_CWD_FD_ENV}; __sd_cmd=$1; shift; "
    "trap '\\builtin pwd -P >&$__sd_fd 2>/dev/null' EXIT; "
    'eval "$__sd_cmd" {__sd_fd}>&-'
)


class BashInput(BaseModel):
    command: str = Field(description="The command to execute.")
    timeout: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TIMEOUT_MS,
        description=f"Optional timeout in milliseconds (default {DEFAULT_TIMEOUT_MS}, max "
        f"{MAX_TIMEOUT_MS}).",
    )
    description: str | None = Field(
        default=None,
        description="Clear, concise description of what this command does in 5-10 words.",
    )


def scrub_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of the environment without anything that looks like a credential."""
    source = dict(os.environ if environ is None else environ)
    env = {k: v for k, v in source.items() if not any(m in k.upper() for m in SECRET_MARKERS)}
    env.setdefault("PAGER", "cat")
    env.setdefault("GIT_PAGER", "cat")
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def _build_argv(command: str, ctx: ToolContext) -> list[str]:
    """The argv that runs ``command``; the one seam a sandbox wraps."""
    bash = shutil.which("bash")
    if bash is None:
        raise ToolError("Bash is not available: no `bash` executable on PATH.")
    return [bash, "--noprofile", "--norc", "-c", _SCRIPT, "skilldeck-bash", command]


def _checked_dir(path: str, ctx: ToolContext) -> Path | None:
    """The real path of ``path`` when it is an absolute path to a directory inside
    the writable roots, else None (the shell's report is untrusted: ``..``, symlinks
    and relative spellings must not lead out)."""
    if not path or not os.path.isabs(path) or "\0" in path:
        return None
    real = Path(os.path.realpath(path))
    if not real.is_dir():
        return None
    if any(is_inside(real, r) for r in allowed_roots(ctx, write=True)):
        return real
    return None


def _start_cwd(ctx: ToolContext) -> tuple[Path, str]:
    """Where the next command starts, and a note when the stored cwd had to be reset
    (gone, or — resolved again now — no longer inside the roots)."""
    stored = ctx.state.get(CWD_STATE)
    workspace = Path(ctx.workspace)
    if not stored:
        return workspace, ""
    checked = _checked_dir(str(stored), ctx)
    if checked is None:
        ctx.state[CWD_STATE] = str(workspace)
        return workspace, (
            f"(Previous working directory {stored} is gone or outside the allowed "
            f"directories; reset to {workspace}.)\n"
        )
    return checked, ""


def _settle_cwd(ctx: ToolContext, reported: str | None) -> str:
    """Store the directory the shell ended in; undo a cd outside the roots."""
    if not reported:
        return ""
    checked = _checked_dir(reported, ctx)
    if checked is not None:
        ctx.state[CWD_STATE] = str(checked)
        return ""
    ctx.state[CWD_STATE] = str(ctx.workspace)
    return (
        f"\n(Shell cwd was reset to {ctx.workspace}: {reported} is outside the allowed "
        "directories.)"
    )


@dataclass
class _Output:
    """Combined stdout+stderr, bounded: the head and the tail are kept."""

    cap: int
    head: bytearray = field(default_factory=bytearray)
    tail: deque[bytes] = field(default_factory=deque)
    tail_len: int = 0
    total: int = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail.append(chunk)
            self.tail_len += len(chunk)
            while self.tail_len - len(self.tail[0]) >= self.cap:
                self.tail_len -= len(self.tail.popleft())

    def text(self, limit: int) -> str:
        head = self.head.decode("utf-8", errors="replace")
        if self.total <= len(self.head):
            return head if len(head) <= limit else _middle_cut(head, limit, self.total)
        tail = b"".join(self.tail).decode("utf-8", errors="replace")
        return _middle_cut(head + tail, limit, self.total)


def _middle_cut(text: str, limit: int, total_bytes: int) -> str:
    if len(text) <= limit:
        return text
    keep_head, keep_tail = limit * 2 // 3, limit // 3
    return (
        f"{text[:keep_head]}\n\n[output truncated: {total_bytes:,} bytes in total; showing "
        f"the first {keep_head:,} and last {keep_tail:,} characters]\n\n{text[-keep_tail:]}"
    )


class BashTool(Tool):
    name: ClassVar[str] = "Bash"
    description: ClassVar[str] = (
        "Executes a bash command and returns its combined stdout and stderr. The working "
        "directory persists between calls (a `cd` carries over); environment changes do not. "
        f"Timeout in milliseconds (default {DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS}); on "
        "timeout the command and all its child processes are killed. Output over 30000 "
        "characters is truncated. Prefer Read, Grep and Glob over cat, grep and find."
    )
    Input: ClassVar[type[BaseModel]] = BashInput

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        args: BashInput = input
        if not args.command.strip():
            raise ToolError("Bash needs a non-empty command.")
        cwd, note = _start_cwd(ctx)
        timeout_ms = args.timeout or DEFAULT_TIMEOUT_MS
        cap = int(getattr(ctx.settings.agent, "tool_output_limit", OUTPUT_CAP))
        sandbox = Sandbox.for_state(ctx.state, ctx.settings)
        wrapped = sandbox.wrap(
            _build_argv(args.command, ctx),
            workspace=Path(ctx.workspace),
            scratch=None,
            cwd=cwd,
            writable=[Path(r) for r in ctx.roots],
        )
        if wrapped.warning:
            note = f"(warning: {wrapped.warning})\n{note}"
        outcome = await _execute(wrapped.argv, ctx, cwd, timeout_ms / 1000, cap)
        after = _settle_cwd(ctx, outcome.cwd)
        return _result(outcome, note, after, timeout_ms=timeout_ms, cap=cap)


@dataclass
class _Outcome:
    output: _Output
    returncode: int | None
    timed_out: bool
    cwd: str | None
    killed_with: str = ""


async def _execute(
    argv: list[str], ctx: ToolContext, cwd: Path, timeout: float, cap: int
) -> _Outcome:
    read_fd, write_fd = os.pipe()
    env = git_guard_env(scrub_env())
    env.update(active_credentials())  # only inside a call a skill's own process made
    env[_CWD_FD_ENV] = str(write_fd)
    env["SKILLDECK_SESSION_ID"] = ctx.session_id
    output = _Output(cap=cap)
    try:
        proc = await anyio.open_process(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=env,
            start_new_session=True,
            pass_fds=(write_fd,),
        )
    except OSError as e:
        os.close(read_fd)
        raise ToolError(f"Could not start bash: {e}") from e
    finally:
        os.close(write_fd)
    ctx.state.setdefault(PGID_STATE, []).append(proc.pid)
    try:
        async with proc:
            try:
                timed_out = await _collect(proc, output, timeout)
            except BaseException:  # cancelled (Ctrl-C, run aborted): leave nothing behind
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                raise
            killed = await _kill_group(proc) if timed_out else ""
            if not timed_out:
                await proc.wait()
            returncode = proc.returncode
        reported = _read_report(read_fd)
    finally:
        os.close(read_fd)
        _forget_pgid(ctx, proc.pid)
    return _Outcome(output, returncode, timed_out, None if timed_out else reported, killed)


async def _collect(proc: Process, output: _Output, timeout: float) -> bool:
    """Read output until the shell exits (plus a short drain); True on timeout."""
    stream = proc.stdout
    assert stream is not None
    finished = anyio.Event()

    async def reader() -> None:
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
            async for chunk in stream:
                output.add(chunk)
        finished.set()

    with anyio.move_on_after(timeout) as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            await proc.wait()
            with anyio.move_on_after(DRAIN_GRACE):
                await finished.wait()
            tg.cancel_scope.cancel()
    return scope.cancelled_caught


async def _kill_group(proc: Process) -> str:
    """SIGTERM the whole process group, then SIGKILL whatever is left."""
    pgid = proc.pid
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    with anyio.move_on_after(KILL_GRACE):
        await proc.wait()
        await anyio.sleep(0.05)  # let children act on SIGTERM too
    if _group_alive(pgid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        with anyio.move_on_after(KILL_GRACE):
            await proc.wait()
        return "SIGTERM, then SIGKILL"
    return "SIGTERM"


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _read_report(fd: int) -> str | None:
    os.set_blocking(fd, False)
    try:
        data = os.read(fd, 65536)
    except (BlockingIOError, OSError):
        return None
    text = os.fsdecode(data).strip()  # a folder name's own bytes, so the path round-trips
    return text.splitlines()[-1] if text else None


def _forget_pgid(ctx: ToolContext, pgid: int) -> None:
    """Keep the pgid only while something of the group is still running."""
    if not _group_alive(pgid):
        with contextlib.suppress(ValueError):
            ctx.state.get(PGID_STATE, []).remove(pgid)


def kill_background(ctx: ToolContext) -> int:
    """Kill the process groups a session's commands left running; returns how many."""
    killed = 0
    for pgid in list(ctx.state.get(PGID_STATE, [])):
        if _group_alive(pgid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
                killed += 1
    ctx.state[PGID_STATE] = []
    return killed


def _result(outcome: _Outcome, note: str, after: str, *, timeout_ms: int, cap: int) -> ToolResult:
    """Output, then what happened (timeout, exit code), then notes about the cwd."""
    text = note + outcome.output.text(cap).rstrip("\n")
    data = {"exit_code": outcome.returncode, "timed_out": outcome.timed_out}
    if outcome.timed_out:
        text += (
            f"\n\nCommand timed out after {timeout_ms / 1000:g}s ({timeout_ms} ms); the command "
            f"and all its child processes were killed ({outcome.killed_with})."
        )
        return ToolResult(content=(text + after).strip(), is_error=True, data=data)
    code = outcome.returncode
    if code:
        reason = f"Killed by signal {-code}" if code < 0 else f"Exit code {code}"
        return ToolResult(content=f"{text}\n\n{reason}{after}".strip(), is_error=True, data=data)
    return ToolResult(
        content=(text + after).strip() or "(Bash completed with no output)", data=data
    )
