"""Dynamic context: shell commands in a skill body, run before the model reads it.

Claude Code's syntax, two forms::

    Current branch: !`git branch --show-current`

    ```!
    git status --short
    git log --oneline -5
    ```

An inline ``!`cmd``` counts only at the start of a line or after whitespace (so
``foo!`x``` in prose is left alone), and never inside an ordinary fenced code block
(a skill that *documents* the syntax must not execute its examples). A ```` ```! ````
block runs as one script.

Each command is run once, in order, and replaced by its output. Every command first
goes through ``check`` — the same permission check the model's ``Bash`` calls get —
and a command that is not allowed aborts the whole skill with a clear message
(:class:`~skilldeck.errors.PermissionDeniedError`): a skill must not run half its
context. A non-zero exit aborts too (:class:`~skilldeck.errors.SkillExecutionError`),
except exit status 1 of ``grep``/``find``/``diff`` (and ``rg``, ``egrep``, ``fgrep``),
which means "nothing found" or "files differ", not failure.
``skills.dynamic_context = false`` turns the feature off: bodies are shown verbatim.

Environment: the commands run with skilldeck's environment scrubbed of
secret-looking variables (as scripts are), plus the declared credentials of the
skill being loaded (``skill=``, see :mod:`.credentials`) — and no other skill's.
Their output, and the stderr of a failure, pass through
:func:`skilldeck.skills.execution.secrets.redact` before they enter the body the model reads.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from skilldeck.errors import PermissionDeniedError, SkillExecutionError
from skilldeck.sandbox import Sandbox
from skilldeck.skills.execution.credentials import active_credentials, credential_env, started_by
from skilldeck.skills.execution.invocation import scrub_env
from skilldeck.skills.execution.process import run_process
from skilldeck.skills.execution.secrets import redact
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.rules import parse_line

__all__ = [
    "CommandOutput",
    "DynamicCommand",
    "PermissionCheck",
    "ShellRunner",
    "expand_dynamic_context",
    "find_commands",
    "has_dynamic_context",
    "shell_runner",
]


@dataclass(frozen=True)
class CommandOutput:
    exit_code: int | None
    stdout: str
    stderr: str = ""
    timed_out: bool = False
    #: a one-time notice to show the user (the sandbox fallback)
    warning: str | None = None


#: ``await check(command)`` → None when allowed, else the reason it is not
PermissionCheck = Callable[[str], Awaitable[str | None]]
#: ``await run(command)`` → its output
ShellRunner = Callable[[str], Awaitable[CommandOutput]]

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$", re.M)
_INLINE = re.compile(r"(?:(?<=\s)|^)!`(?P<cmd>[^`\n]+)`", re.M)
_EXIT_ONE_OK = frozenset({"grep", "egrep", "fgrep", "rg", "find", "diff"})


@dataclass(frozen=True)
class DynamicCommand:
    """One command found in a body; ``start``/``end`` delimit the text it replaces."""

    start: int
    end: int
    command: str
    block: bool


def _segments(body: str) -> list[tuple[int, int, str | None]]:
    """Split ``body`` into (start, end, kind): kind None = prose, "!" = a ```! block
    (start/end cover the whole block), "code" = an ordinary fenced block."""
    out: list[tuple[int, int, str | None]] = []
    pos = 0
    matches = list(_FENCE.finditer(body))
    i = 0
    while i < len(matches):
        opening = matches[i]
        fence = opening.group("fence")
        close = next(
            (
                j
                for j in range(i + 1, len(matches))
                if matches[j].group("fence").startswith(fence)
                and not matches[j].group("info").strip()
            ),
            None,
        )
        if close is None:
            break  # an unclosed fence: treat the rest as prose
        out.append((pos, opening.start(), None))
        kind = "!" if opening.group("info").strip() == "!" else "code"
        block_end = matches[close].end()
        out.append((opening.start(), block_end, kind))
        pos = block_end
        i = close + 1
    out.append((pos, len(body), None))
    return out


def find_commands(body: str) -> list[DynamicCommand]:
    """Every dynamic-context command in ``body``, in order."""
    found: list[DynamicCommand] = []
    for start, end, kind in _segments(body):
        if kind == "!":
            inner = body[start:end].split("\n", 1)[1] if "\n" in body[start:end] else ""
            script = inner.rsplit("\n", 1)[0] if "\n" in inner else ""
            found.append(DynamicCommand(start, end, script.strip("\n"), block=True))
        elif kind is None:
            for m in _INLINE.finditer(body, start, end):
                found.append(
                    DynamicCommand(m.start(), m.end(), m.group("cmd").strip(), block=False)
                )
    return found


def has_dynamic_context(body: str) -> bool:
    return bool(find_commands(body))


def _programs(command: str) -> list[str]:
    """The programs of a command line's commands (``a | grep x`` → a, grep), read by
    the same bash grammar the permission check uses (never a second, looser lexer)."""
    names: list[str] = []
    for argv in parse_line(command).invocations:
        if argv and argv[0]:
            names.append(Path(argv[0]).name)
    return names


def _tolerated(command: str, exit_code: int | None) -> bool:
    if exit_code == 0:
        return True
    return exit_code == 1 and any(p in _EXIT_ONE_OK for p in _programs(command))


async def expand_dynamic_context(
    body: str,
    *,
    run: ShellRunner,
    check: PermissionCheck | None = None,
    enabled: bool = True,
    skill_name: str = "skill",
    warnings: list[str] | None = None,
    skill: Skill | None = None,
) -> str:
    """``body`` with every command replaced by its output (see the module docstring).

    One-time notices from the runner (the sandbox fallback) are appended to ``warnings``.
    The commands get ``skill``'s declared credentials (none without ``skill``).
    """
    if not enabled:
        return body
    commands = find_commands(body)
    if not commands:
        return body
    for cmd in commands:  # check everything before running anything
        if check is not None and (reason := await check(cmd.command)) is not None:
            raise PermissionDeniedError(
                f"Skill {skill_name!r} was not loaded: its dynamic context wants to run "
                f"`{cmd.command}`, which is not allowed ({reason}). Allow it with a "
                f"permission rule such as Bash({cmd.command.split()[0]}:*), or disable "
                "dynamic context (skills.dynamic_context = false)."
            )
    credentials = credential_env(skill) if skill is not None else {}
    pieces: list[str] = []
    pos = 0
    for cmd in commands:
        with started_by(credentials):
            out = await run(cmd.command)
        if out.warning and warnings is not None:
            warnings.append(out.warning)
        if out.timed_out or not _tolerated(cmd.command, out.exit_code):
            why = "timed out" if out.timed_out else f"exited with status {out.exit_code}"
            tail = redact(out.stderr.strip()[-1500:])
            raise SkillExecutionError(
                f"Skill {skill_name!r} was not loaded: its dynamic context command "
                f"`{cmd.command}` {why}." + (f"\nstderr:\n{tail}" if tail else "")
            )
        pieces.append(body[pos : cmd.start])
        pieces.append(redact(out.stdout.rstrip("\n")))
        pos = cmd.end
    pieces.append(body[pos:])
    return "".join(pieces)


def shell_runner(
    *,
    cwd: Path,
    timeout: float,
    cap: int,
    sandbox: Sandbox | None = None,
    workspace: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> ShellRunner:
    """A :data:`ShellRunner` that runs commands with ``bash -c`` in ``cwd`` — under the
    sandbox when one is given (the workspace stays writable, like the ``Bash`` tool).
    The environment is ``env`` (default: skilldeck's, scrubbed of secret-looking
    variables) plus the credentials of the skill being loaded."""

    async def run(command: str) -> CommandOutput:
        argv = ["bash", "-c", command]
        warning = None
        if sandbox is not None:
            wrapped = sandbox.wrap(argv, workspace=workspace or cwd, scratch=None, cwd=cwd)
            argv, warning = wrapped.argv, wrapped.warning
        full = dict(env) if env is not None else scrub_env(os.environ)
        full.update(active_credentials())
        outcome = await run_process(argv, cwd=cwd, env=full, timeout=timeout, cap=cap)
        return CommandOutput(
            exit_code=outcome.exit_code,
            stdout=outcome.stdout.decode("utf-8", errors="replace"),
            stderr=outcome.stderr.decode("utf-8", errors="replace"),
            timed_out=outcome.timed_out,
            warning=warning,
        )

    return run
