"""Running a script skill: JSON in, JSON out, bounded in time, output and reach.

The contract a script author relies on (see ``docs/skill-execution.md``):

* the arguments arrive as **one JSON string in ``argv[1]``** and the **same JSON on
  stdin** (use whichever is convenient); above 100 KiB — the kernel caps one argument
  at 128 KiB — ``argv[1]`` is ``-`` and the JSON is on stdin only;
* the script prints **one JSON value** on stdout; anything else on stdout, or a
  non-zero exit, is an error result carrying the exit code and the tail of stderr;
* the working directory is the skill folder, so relative paths such as
  ``references/x.md`` work; ``SKILL_DIR``, ``SKILL_NAME``, ``SESSION_ID``,
  ``WORKSPACE`` and ``SKILL_SCRATCH`` (a writable per-run directory) are set;
* environment variables whose names contain KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL
  are removed unless the skill's settings list them
  (``[skills.settings.<name>] env = ["GITHUB_TOKEN"]``); the skill's declared
  ``credentials`` are added from the secrets store (:mod:`.credentials`), and any of
  their values in the result (stdout, stderr, value, error) reads ``[secret NAME]``;
* the timeout is the skill's ``timeout`` field, else ``skills.script_timeout``; on
  expiry the whole process group is killed — children and grandchildren included —
  and anything still running when the script itself exits is killed too;
* stdout and stderr are each capped at ``skills.output_cap`` bytes; both pipes are
  drained concurrently and past the cap the bytes are read and dropped, so a chatty
  script can neither deadlock nor exhaust memory.

How a script is invoked (entry point, interpreter, argument JSON, scrubbed
environment) is :mod:`.invocation`. The interpreter comes from the extension
(``.py`` → the running Python, or the skill's own environment's when it has
requirements — :mod:`.environments`, built on first use, bound read-only in the
sandbox, its ``bin/`` first on ``PATH``; ``.sh`` → bash, ``.js``/``.mjs``/``.cjs`` →
node) or else the shebang line. The async API is the
implementation; :meth:`ScriptRunner.run_sync` is a thin wrapper for scripts and CLIs.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import anyio

from skilldeck.config import Settings
from skilldeck.errors import EnvironmentBuildError, SkillExecutionError, SkillUnavailableError
from skilldeck.sandbox import Sandbox
from skilldeck.skills.execution.credentials import credential_env, secret_store
from skilldeck.skills.execution.environments import Environments, SkillEnvironment
from skilldeck.skills.execution.invocation import (
    ARGV_LIMIT,
    SECRET_MARKERS,
    entrypoint_of,
    interpreter_argv,
    normalize_args,
    resolve_entrypoint,
    scratch_prefix,
    scrub_env,
)
from skilldeck.skills.execution.process import ProcessOutcome, run_process
from skilldeck.skills.execution.secrets import SecretStore, redact, redact_data
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.model.spec import unsafe_name_reason

#: the invocation helpers moved to ``invocation.py``; re-exported where callers found them
__all__ = [
    "ARGV_LIMIT",
    "SECRET_MARKERS",
    "ScriptResult",
    "ScriptRunner",
    "entrypoint_of",
    "interpreter_argv",
    "normalize_args",
    "scratch_prefix",
    "scrub_env",
]

log = logging.getLogger(__name__)
_STDERR_TAIL = 2000


@dataclass
class ScriptResult:
    """What one script run produced. ``value`` is the parsed JSON when ``ok``."""

    skill: str
    ok: bool
    value: Any = None
    error: str | None = None
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    truncated: bool = False
    sandboxed: bool = False
    duration: float = 0.0
    #: things the caller should show the user once (e.g. the sandbox fallback)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def render(self) -> str:
        """The text a model sees: the JSON value, or the error."""
        if self.ok:
            return json.dumps(self.value, ensure_ascii=False)
        return self.error or "script failed"


class ScriptRunner:
    """Runs script skills under the contract above. One per session is typical."""

    def __init__(
        self,
        settings: Settings,
        *,
        sandbox: Sandbox | None = None,
        session_id: str | None = None,
        workspace: Path | None = None,
        base_env: Mapping[str, str] | None = None,
        secrets: SecretStore | None = None,
        environments: Environments | None = None,
    ) -> None:
        self.settings = settings
        self.secrets = secrets or secret_store(settings.home)
        self.environments = environments or Environments(settings.home)
        self.sandbox = sandbox or Sandbox(settings)
        self.session_id = session_id
        self.workspace = workspace
        self._base_env = base_env

    def timeout_for(self, skill: Skill) -> float:
        return float(skill.metadata.timeout or self.settings.skills.script_timeout)

    def environment(
        self,
        skill: Skill,
        *,
        session_id: str,
        workspace: Path,
        scratch: Path,
        venv: SkillEnvironment | None = None,
    ) -> dict[str, str]:
        """The scrubbed environment, the skill's declared credentials, the skill
        variables."""
        own = self.settings.skill_settings(skill.name).get("env", [])
        allow = set(own) if isinstance(own, list | tuple) else set()
        env = scrub_env(os.environ if self._base_env is None else self._base_env, allow=allow)
        if isinstance(own, Mapping):  # explicit values: {"NAME": "value"}
            env.update({str(k): str(v) for k, v in own.items()})
        env.update(credential_env(skill, self.secrets))
        env.update(
            SKILL_DIR=str(skill.folder.resolve()),
            SKILL_NAME=skill.name,
            SESSION_ID=session_id,
            WORKSPACE=str(workspace),
            SKILL_SCRATCH=str(scratch),
            PYTHONIOENCODING="utf-8",
            PYTHONDONTWRITEBYTECODE="1",
        )
        if venv is not None:
            env["VIRTUAL_ENV"] = str(venv.path)
            env["PATH"] = os.pathsep.join([str(venv.bin), env.get("PATH", os.defpath)])
        return env

    async def python_environment(self, skill: Skill) -> SkillEnvironment | None:
        """``skill``'s own environment, built now if missing (None: no requirements).
        A failed build is :class:`SkillUnavailableError` with uv's reason."""
        try:
            return await anyio.to_thread.run_sync(self._ensure, skill)
        except EnvironmentBuildError as e:
            raise SkillUnavailableError(
                skill.name,
                f"its Python environment could not be built: {e} (repair: skilldeck "
                f"skills deps {skill.name} --rebuild)",
            ) from e

    def _ensure(self, skill: Skill) -> SkillEnvironment | None:
        return self.environments.ensure(
            skill, progress=lambda message: log.info("%s: %s", skill.name, message)
        )

    async def run(
        self,
        skill: Skill,
        args: Any = None,
        *,
        session_id: str | None = None,
        workspace: Path | None = None,
        timeout: float | None = None,
    ) -> ScriptResult:
        """Run ``skill``'s entry point with ``args``; errors of the *script* come back
        as ``ok=False``; errors of setup (no entry point, sandbox required) raise."""
        reason = unsafe_name_reason(skill.name)
        if reason is not None:
            raise SkillExecutionError(
                f"Skill name {skill.name!r} cannot be used: {reason}; fix `name:` in "
                f"{skill.folder}/SKILL.md (lowercase letters, digits and hyphens)."
            )
        script = resolve_entrypoint(skill)
        venv = await self.python_environment(skill)
        prefix = interpreter_argv(script, python=str(venv.python) if venv else None)
        value = normalize_args(args, declared=skill.metadata.arguments)
        payload = json.dumps(value, ensure_ascii=False)
        session = session_id or self.session_id or "none"
        work = (workspace or self.workspace or self.settings.workspace).resolve()
        limit = timeout if timeout is not None else self.timeout_for(skill)
        network = bool(self.settings.skill_settings(skill.name).get("network", False)) or None
        scratch = Path(tempfile.mkdtemp(prefix=scratch_prefix(skill.name)))
        try:
            argv_payload = payload if len(payload.encode("utf-8")) <= ARGV_LIMIT else "-"
            wrapped = self.sandbox.wrap(
                [*prefix, argv_payload],
                workspace=work,
                scratch=scratch,
                network=network,
                cwd=skill.folder,
                readonly=[venv.path] if venv else [],
            )
            env = self.environment(
                skill, session_id=session, workspace=work, scratch=scratch, venv=venv
            )
            log.info(
                "running script skill %s: %s (sandboxed=%s)", skill.name, script, wrapped.sandboxed
            )
            try:
                outcome = await run_process(
                    wrapped.argv,
                    stdin=payload.encode("utf-8"),
                    cwd=skill.folder,
                    env=env,
                    timeout=limit,
                    cap=self.settings.skills.output_cap,
                )
            except OSError as e:
                raise SkillExecutionError(
                    f"Could not start script skill {skill.name!r} ({wrapped.argv[0]}): {e}"
                ) from e
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        result = _redacted(
            _interpret(skill, outcome, limit=limit, cap=self.settings.skills.output_cap)
        )
        result.sandboxed = wrapped.sandboxed
        if wrapped.warning:
            result.warnings.append(wrapped.warning)
        return result

    def run_sync(self, skill: Skill, args: Any = None, **kwargs: Any) -> ScriptResult:
        """:meth:`run` from synchronous code (not from inside an event loop)."""

        async def _go() -> ScriptResult:
            return await self.run(skill, args, **kwargs)

        return anyio.run(_go)


def _redacted(result: ScriptResult) -> ScriptResult:
    """``result`` with every secret value handed out replaced by ``[secret NAME]``."""
    result.stdout, result.stderr = redact(result.stdout), redact(result.stderr)
    result.error = redact(result.error) if result.error else result.error
    result.value = redact_data(result.value)
    return result


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _STDERR_TAIL else "…" + text[-_STDERR_TAIL:]


def _interpret(skill: Skill, out: ProcessOutcome, *, limit: float, cap: int) -> ScriptResult:
    stdout = out.stdout.decode("utf-8", errors="replace")
    stderr = out.stderr.decode("utf-8", errors="replace")
    result = ScriptResult(
        skill=skill.name,
        ok=False,
        exit_code=out.exit_code,
        stdout=stdout,
        stderr=stderr,
        timed_out=out.timed_out,
        truncated=out.stdout_truncated or out.stderr_truncated,
        duration=out.duration,
    )
    stderr_note = f"\nstderr (tail):\n{_tail(stderr)}" if stderr.strip() else ""
    if out.timed_out:
        result.error = (
            f"Script skill {skill.name!r} timed out after {limit:g}s; its whole process "
            f"group (the script and everything it started) was killed.{stderr_note}"
        )
    elif out.exit_code != 0:
        result.error = (
            f"Script skill {skill.name!r} failed with exit code {out.exit_code}.{stderr_note}"
        )
    elif out.stdout_truncated:
        result.error = (
            f"Script skill {skill.name!r} printed more than {cap} bytes on stdout (the output "
            "cap); a script must print one JSON value."
        )
    else:
        _parse_json(result, stdout, stderr_note)
    return result


def _parse_json(result: ScriptResult, stdout: str, stderr_note: str) -> None:
    text = stdout.strip()
    if not text:
        result.error = (
            f"Script skill {result.skill!r} printed nothing on stdout; it must print one JSON "
            f"value (exit code 0).{stderr_note}"
        )
        return
    try:
        result.value = json.loads(text)
    except json.JSONDecodeError as e:
        preview = text if len(text) <= 400 else text[:400] + "…"
        result.error = (
            f"Script skill {result.skill!r} did not print valid JSON on stdout ({e.msg} at "
            f"line {e.lineno} column {e.colno}; exit code 0). stdout began:\n{preview}"
            f"{stderr_note}"
        )
        return
    result.ok = True
