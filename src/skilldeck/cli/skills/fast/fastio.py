"""What the CLI's fast paths share: plain output without typer, rich or click.

The fast paths (:mod:`.fastpath` for ``skills list --json``, :mod:`.fast_validate`,
:mod:`.fast_match`) answer before typer is imported, so they cannot use
:mod:`skilldeck.cli.common` (it imports typer for its option types). Their typer
commands write through these same functions, so both paths print the same bytes.
Measured by ``python -m bench startup``.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from skilldeck.cli.termtext import printable
from skilldeck.errors import SkilldeckError

if TYPE_CHECKING:
    from skilldeck.skills.model.diagnostics import Diagnostic

__all__ = [
    "fail_line",
    "guarded",
    "print_json",
    "wants_typer",
    "write_json_rows",
    "write_scan_problems",
]


def wants_typer() -> bool:
    """Shell completion asks the typer app, never a fast path."""
    return "_SKILLDECK_COMPLETE" in os.environ


def guarded(run: Callable[[], int]) -> int:
    """``run()``'s exit code, with what the typer app would do on a closed pipe
    (``| head``: quiet, exit 1), Ctrl-C (``Aborted!``) and a skilldeck error (one
    ``error:`` line, exit 1, as :func:`skilldeck.cli.main.main` prints it)."""
    try:
        return run()
    except BrokenPipeError:
        _silence_stdout()
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("\nAborted!\n")
        return 1
    except SkilldeckError as e:
        return fail_line(str(e), code=1)


def fail_line(message: str, *, code: int) -> int:
    """As :func:`skilldeck.cli.common.fail`, returning the exit code."""
    sys.stderr.write(f"error: {printable(message, lines=True)}\n")
    return code


def print_json(data: Any) -> None:
    """JSON on stdout, indented, UTF-8, one document; paths and other objects as
    strings (every command's ``--json`` writes through here)."""
    sys.stdout.write(json_text(data, indent=2))
    sys.stdout.write("\n")


def json_text(data: Any, *, indent: int | None = None) -> str:
    """``data`` as strict JSON: a NaN or an infinity (a script's output, a score) is
    written as ``null``, never as the ``NaN`` that JSON.parse, Go and jq --strict refuse."""
    try:
        return json.dumps(data, ensure_ascii=False, indent=indent, default=str, allow_nan=False)
    except ValueError:
        finite = _finite(data)
        return json.dumps(finite, ensure_ascii=False, indent=indent, default=str)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def write_json_rows(rows: list[dict[str, Any]]) -> None:
    """Indented for a person at a terminal; compact when piped. json's C encoder
    only runs without ``indent``, and is ~10x faster on thousands of rows."""
    if sys.stdout.isatty():
        print_json(rows)
    else:
        sys.stdout.write(json_text(rows))
        sys.stdout.write("\n")
    sys.stdout.flush()


def write_scan_problems(diagnostics: list[Diagnostic]) -> None:
    """The scan's own problems (dangling or looping symlinks, unreadable folders) as
    plain ``warning`` lines on stderr, beside JSON on stdout: a script reading the
    JSON still sees them."""
    sys.stderr.writelines(
        f"warning {printable(str(d.path))}: {d.code} {printable(d.message)}\n" for d in diagnostics
    )


def _silence_stdout() -> None:
    """After EPIPE, make the final flush at exit quiet too."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
