"""Run an untrusted code skill in a child Python, in the sandbox, over JSON lines.

A code skill that is not trusted by content (``skills/code/codetrust.py``) never runs in
skilldeck's process. :class:`IsolatedCodeSkill` stands in for it: its ``execute``
starts ``<interpreter> -I -B -c <bootstrap> <dir of the skilldeck package>``, which
runs :mod:`skilldeck.skills.code._codechild`, through :meth:`Sandbox.wrap` — the same
wrapping script skills get: workspace writable, the rest read-only, no network
(unless ``[skills.settings.<name>] network = true``), scrubbed environment
(:func:`skills.runner.scrub_env`), a process group killed on timeout, cancellation or
exit, stderr capped at ``skills.output_cap``. ``-I`` keeps the current directory,
``PYTHON*`` variables and user site-packages out of the child's import path; ``-B``
and the child's source-only importer (``skills/code/_srcimport.py``) mean no bytecode from
the skill folder is read or written. When bubblewrap is unusable (``sandbox.mode =
"auto"``) the child still runs as a separate process with a scrubbed environment, and
the one-time sandbox warning is in ``result.metadata["warnings"]``.

Protocol (version 1): one JSON object per line, UTF-8. The child's fd 1 is the
protocol channel only — before the skill is imported, fd 1 is re-pointed at stderr,
so ``print()`` and subprocess output land in (capped) stderr.

* parent → child, first line: ``{"type": "run", "version": 1, "skill": {"name",
  "folder", "skill_md", "metadata"}, "args": <JSON>, "context": {"session",
  "user_message", "config", "skill_dir", "workspace", "state", "llm": bool}}``;
* child → parent: ``{"type": "tool_call", "id": N, "name": str, "input": {...}}``,
  answered ``{"type": "tool_result", "id": N, "content": str, "is_error": bool}``.
  The parent calls the ``ctx.tools`` it was given — the same gated dispatcher an
  in-process skill gets (permission rules, the skill's ``forbidden-tools``);
* child → parent: ``{"type": "llm_call", "id": N, "prompt": str, "system": str|null}``,
  answered ``{"type": "llm_result", "id": N, "text": str}`` or ``{"type":
  "llm_result", "id": N, "error": str}``;
* child → parent, last: ``{"type": "result", "result": {"success", "output",
  "error", "metadata", "prompt_injection"}, "state": {...}}`` or ``{"type": "error",
  "error": str}``. The returned ``state`` replaces ``ctx.state`` (JSON values only).

Requests may overlap (ids match answers to requests). A line over 16 MiB, a message
that is not one of the above, or an exit without a final message ends the run with a
failed result carrying the tail of stderr. The interpreter is a parameter, so a skill
with its own environment can run the same child with another Python.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup
from anyio.streams.buffered import BufferedByteReceiveStream

import skilldeck
from skilldeck.config import Settings
from skilldeck.errors import SkillExecutionError
from skilldeck.sandbox import Sandbox
from skilldeck.skills.code.audit import Finding
from skilldeck.skills.code.codeapi import CodeSkill, SkillContext, SkillResult
from skilldeck.skills.execution import (
    ScriptRunner,
    credential_env,
    kill_group,
    scratch_prefix,
    started_by,
)
from skilldeck.skills.model.skill import Skill

__all__ = ["PROTOCOL_VERSION", "IsolatedCodeSkill", "child_argv", "run_isolated"]

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
MAX_MESSAGE = 16 * 1024 * 1024
_DEFAULT_TIMEOUT = 600.0
_STDERR_TAIL = 2000
_BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from skilldeck.skills.code._codechild import main; sys.exit(main())"
)


def package_parent() -> Path:
    """The folder holding the ``skilldeck`` package (what the child puts on its path)."""
    return Path(skilldeck.__file__).resolve().parent.parent


def child_argv(interpreter: str | None = None) -> list[str]:
    """The child's command line, before sandbox wrapping."""
    return [interpreter or sys.executable, "-I", "-B", "-c", _BOOTSTRAP, str(package_parent())]


class _Channel:
    """The parent's end: write messages to the child's stdin, one at a time."""

    def __init__(self, stdin: ByteSendStream) -> None:
        self.stdin = stdin
        self.lock = anyio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, ensure_ascii=False, default=str) + "\n"
        async with self.lock:
            # a child that is gone cannot be told anything; its exit ends the run
            with contextlib.suppress(
                anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError
            ):
                await self.stdin.send(line.encode("utf-8"))


class ProtocolError(SkillExecutionError):
    """The child sent something that is not protocol version 1."""


def _run_message(skill: Skill, ctx: SkillContext) -> dict[str, Any]:
    try:
        state = json.loads(json.dumps(ctx.state))
    except (TypeError, ValueError):
        state = {}
    return {
        "type": "run",
        "version": PROTOCOL_VERSION,
        "skill": {
            "name": skill.name,
            "folder": str(skill.folder.resolve()),
            "skill_md": str(skill.skill_md),
            "metadata": skill.metadata.model_dump(mode="json"),
        },
        "args": ctx.args,
        "context": {
            "session": ctx.session,
            "user_message": ctx.user_message,
            "config": ctx.config,
            "skill_dir": str(ctx.skill_dir or skill.folder),
            "workspace": str(ctx.workspace) if ctx.workspace else None,
            "state": state,
            "llm": ctx.llm is not None,
        },
    }


async def _answer_tool(chan: _Channel, ctx: SkillContext, msg: dict[str, Any]) -> None:
    name, tool_input = msg.get("name"), msg.get("input")
    if not isinstance(name, str) or not isinstance(tool_input, dict):
        bad = "invalid tool_call: it needs a string `name` and an object `input`"
        await chan.send(
            {"type": "tool_result", "id": msg.get("id"), "content": bad, "is_error": True}
        )
        return
    try:
        outcome = await ctx.tools.call(name, tool_input)
        reply = {"content": str(outcome.content), "is_error": bool(outcome.is_error)}
    except Exception as e:  # a tool crashing is the skill's error result, not ours
        reply = {"content": f"{name} failed: {type(e).__name__}: {e}", "is_error": True}
    await chan.send({"type": "tool_result", "id": msg.get("id"), **reply})


async def _answer_llm(chan: _Channel, ctx: SkillContext, msg: dict[str, Any]) -> None:
    prompt, system = msg.get("prompt"), msg.get("system")
    reply: dict[str, Any]
    if not isinstance(prompt, str) or not (system is None or isinstance(system, str)):
        reply = {"error": "invalid llm_call: it needs a string `prompt`, `system` a string or null"}
    elif ctx.llm is None:
        reply = {"error": "no model is available to this skill (ctx.llm is None)"}
    else:
        try:
            reply = {"text": str(await ctx.llm.complete(prompt, system=system))}
        except Exception as e:
            reply = {"error": f"{type(e).__name__}: {e}"}
    await chan.send({"type": "llm_result", "id": msg.get("id"), **reply})


def _final(skill: Skill, ctx: SkillContext, msg: dict[str, Any], cap: int) -> SkillResult:
    if msg["type"] == "error":
        return SkillResult(success=False, error=str(msg.get("error") or "the skill failed"))
    raw = msg.get("result")
    if not isinstance(raw, dict):
        raise ProtocolError("result needs an object `result`")
    output = raw.get("output")
    output = output if isinstance(output, str) else ""
    if len(output) > cap:
        output = output[:cap] + f"\n[output truncated at {cap} characters]"
    error, inject, meta = raw.get("error"), raw.get("prompt_injection"), raw.get("metadata")
    state = msg.get("state")
    if isinstance(state, dict):
        ctx.state.clear()
        ctx.state.update(state)
    return SkillResult(
        success=raw.get("success") is True,
        output=output,
        error=error if isinstance(error, str) else None,
        metadata=meta if isinstance(meta, dict) else {},
        prompt_injection=inject if isinstance(inject, str) else None,
    )


async def _converse(
    stdout: ByteReceiveStream, chan: _Channel, tg: TaskGroup, skill: Skill, ctx: SkillContext
) -> dict[str, Any] | None:
    """Serve the child's requests until its final message (None: it just exited)."""
    reader = BufferedByteReceiveStream(stdout)
    handlers = {"tool_call": _answer_tool, "llm_call": _answer_llm}
    while True:
        try:
            line = await reader.receive_until(b"\n", MAX_MESSAGE)
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError):
            return None
        except anyio.DelimiterNotFound as e:
            raise ProtocolError(f"a protocol line is longer than {MAX_MESSAGE} bytes") from e
        try:
            msg = json.loads(line)
        except ValueError as e:
            raise ProtocolError(f"not JSON on the protocol channel: {line[:200]!r}") from e
        kind = msg.get("type") if isinstance(msg, dict) else None
        if kind in ("result", "error"):
            return msg  # type: ignore[no-any-return]
        if kind not in handlers:
            raise ProtocolError(f"unknown message type {kind!r}")
        tg.start_soon(handlers[kind], chan, ctx, msg)


async def _drain(stream: ByteReceiveStream, sink: bytearray, cap: int) -> None:
    try:
        while True:
            chunk = await stream.receive(65536)
            room = cap - len(sink)
            if room > 0:
                sink += chunk[:room]
    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass


def _tail(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    return text if len(text) <= _STDERR_TAIL else "…" + text[-_STDERR_TAIL:]


async def _spawn_and_serve(
    argv: Sequence[str],
    skill: Skill,
    ctx: SkillContext,
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    cap: int,
) -> SkillResult:
    errors = bytearray()
    final: dict[str, Any] | None = None
    failure: str | None = None
    async with await anyio.open_process(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        chan = _Channel(proc.stdin)
        try:
            with anyio.move_on_after(timeout) as deadline:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_drain, proc.stderr, errors, cap)
                    await chan.send(_run_message(skill, ctx))
                    try:
                        final = await _converse(proc.stdout, chan, tg, skill, ctx)
                    except ProtocolError as e:
                        failure = f"broke the protocol: {e}"
                    tg.cancel_scope.cancel()
            if deadline.cancelled_caught:
                failure = f"timed out after {timeout:g}s (its process group was killed)"
        finally:
            kill_group(proc.pid)
            with anyio.CancelScope(shield=True):
                await proc.wait()
    if final is not None and failure is None:
        return _final(skill, ctx, final, cap)
    why = failure or f"exited (code {proc.returncode}) without a result"
    note = f"\nstderr (tail):\n{_tail(bytes(errors))}" if errors.strip() else ""
    return SkillResult(success=False, error=f"Code skill {skill.name!r} {why}.{note}")


async def run_isolated(
    skill: Skill,
    ctx: SkillContext,
    *,
    settings: Settings,
    sandbox: Sandbox,
    timeout: float,
    interpreter: str | None = None,
) -> SkillResult:
    """Run ``skill`` in a child process (see the module docstring); never raises for
    what the skill does, only for setup (sandbox required but unusable, no Python)."""
    work = (ctx.workspace or settings.workspace).resolve()
    prefix = scratch_prefix(skill.name).replace("skilldeck-", "skilldeck-code-", 1)
    scratch = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        network = settings.skill_settings(skill.name).get("network", False) is True
        wrapped = sandbox.wrap(
            child_argv(interpreter),
            workspace=work,
            scratch=scratch,
            network=network,
            cwd=work,
            readonly=[skill.folder.resolve(), package_parent()],
        )
        runner = ScriptRunner(settings, sandbox=sandbox)
        env = runner.environment(skill, session_id=ctx.session, workspace=work, scratch=scratch)
        log.info(
            "running code skill %s out of process (sandboxed=%s)", skill.name, wrapped.sandboxed
        )
        try:
            with started_by(credential_env(skill, runner.secrets)):  # its ctx.tools Bash calls
                result = await _spawn_and_serve(
                    wrapped.argv,
                    skill,
                    ctx,
                    cwd=work,
                    env=env,
                    timeout=timeout,
                    cap=settings.skills.output_cap,
                )
        except OSError as e:
            raise SkillExecutionError(
                f"Could not start the process for code skill {skill.name!r} "
                f"({wrapped.argv[0]}): {e}"
            ) from e
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result.metadata.setdefault("isolation", "sandbox" if wrapped.sandboxed else "process")
    if wrapped.warning:
        result.metadata.setdefault("warnings", []).append(wrapped.warning)
    return result


class IsolatedCodeSkill(CodeSkill):
    """Stands in for an untrusted code skill: ``execute`` runs it out of process;
    ``can_handle`` is the default keyword score (its code is never imported here)."""

    def __init__(
        self,
        skill: Skill,
        *,
        settings: Settings,
        sandbox: Sandbox | None = None,
        findings: Sequence[Finding] = (),
        interpreter: str | None = None,
    ) -> None:
        super().__init__(skill)
        self.settings = settings
        self.sandbox = sandbox or Sandbox(settings)
        self.findings = list(findings)
        self.interpreter = interpreter

    async def execute(self, ctx: SkillContext) -> SkillResult:
        assert self.skill is not None
        timeout = float(self.skill.metadata.timeout or _DEFAULT_TIMEOUT)
        result = await run_isolated(
            self.skill,
            ctx,
            settings=self.settings,
            sandbox=self.sandbox,
            timeout=timeout,
            interpreter=self.interpreter,
        )
        if self.findings:
            result.metadata.setdefault("audit", [str(f) for f in self.findings])
        return result
