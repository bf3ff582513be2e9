"""``skilldeck skills validate PATH... [--strict] [--json]`` without typer.

A single-skill validation should answer as fast as skills-ref's ``agentskills
validate`` (``python -m bench startup``); importing typer and click (and, through
``typer._adapters``, pydantic a second way) costs more than the validation itself.
So :func:`try_fast` recognises exactly the plain shapes of that command — paths
that do not start with ``-``, and any of ``--strict`` and ``--json`` — and runs it
here. Anything else (``--help``, ``--``, an unknown option, no path, shell
completion) returns None and the typer command handles it. The typer command
(:mod:`.skills_validate_cmd`) prints through :func:`write_reports` below, so the
two paths write the same bytes; tests compare them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from skilldeck.cli.skills.fast.fastio import fail_line, guarded, print_json, wants_typer
from skilldeck.cli.termtext import printable
from skilldeck.skills.format import ValidationReport, validate_path

__all__ = ["missing_paths", "plain_lines", "reports_for", "try_fast", "write_reports"]

_FLAGS = ("--strict", "--json")


def try_fast(argv: list[str]) -> int | None:
    """Run ``argv`` here when it is a plain ``skills validate``; its exit code, or None
    when the typer app must handle it."""
    if argv[:2] != ["skills", "validate"] or wants_typer():
        return None
    args = argv[2:]
    paths = [Path(a) for a in args if a not in _FLAGS]
    if not paths or any((a.startswith("-") and a not in _FLAGS) or not a.strip() for a in args):
        return None  # an empty path is refused by the typer command's parser
    return guarded(lambda: _validate(paths, strict="--strict" in args, json_="--json" in args))


def _validate(paths: list[Path], *, strict: bool, json_: bool) -> int:
    missing = missing_paths(paths)
    if missing:
        return fail_line(missing, code=2)
    reports = reports_for(paths, strict=strict)
    write_reports(reports, json_=json_)
    return 0 if reports and all(r.valid for r in reports) else 1


def missing_paths(paths: list[Path]) -> str | None:
    """The usage error for paths that do not exist, or None."""
    missing = [p for p in paths if not p.exists()]
    return f"no such file or folder: {', '.join(map(str, missing))}" if missing else None


def reports_for(paths: list[Path], *, strict: bool) -> list[ValidationReport]:
    return [r for p in paths for r in validate_path(p, strict=strict)]


def write_reports(reports: list[ValidationReport], *, json_: bool) -> None:
    """The reports as JSON, or each diagnostic labelled ``error`` or ``warning`` (not
    only by colour, which a pipe or a log loses), then the count of each."""
    if json_:
        print_json([r.to_dict() for r in reports])
        return
    plain = plain_lines(reports)
    if plain is None:
        _rich_reports(reports)
        return
    sys.stdout.write("".join(plain))
    sys.stdout.flush()


def _report_lines(reports: list[ValidationReport]) -> tuple[list[tuple[str, str, str]], str, bool]:
    """``(where, label, rest)`` per diagnostic, the summary line, and whether any
    report is invalid."""
    lines = []
    errors = warnings = 0
    for report in reports:
        for d in report.diagnostics:
            where = f"{d.path or report.path}:{d.line}" if d.line else f"{d.path or report.path}"
            label = "error" if d.is_error else "warning"
            lines.append((f"{printable(where)}: ", label, d.code, printable(d.message)))
            errors += d.is_error
            warnings += not d.is_error
    bad = sum(1 for r in reports if not r.valid)
    summary = (
        f"{len(reports)} skill(s) checked, {bad} invalid: {errors} error(s), {warnings} warning(s)"
    )
    return [(w, f"{label} {code}", f" {m}") for w, label, code, m in lines], summary, bool(bad)


def plain_lines(reports: list[ValidationReport]) -> list[str] | None:
    """The lines rich would write for the reports to a pipe, without importing rich
    (about a fifth of a one-skill validation's CPU); None whenever rich could write
    anything else: a terminal or forced colour, a summary longer than the width rich
    would wrap it at (every path and message has been through :func:`printable`, so
    there is no control character for rich to strip or expand)."""
    environ = os.environ
    if not reports or "FORCE_COLOR" in environ or "TTY_COMPATIBLE" in environ:
        return None
    if sys.stdout.isatty():
        return None
    rows, summary, _bad = _report_lines(reports)
    text = ["".join(row) + "\n" for row in rows]
    if len(summary) > _rich_width():  # (no control character is left: printable)
        return None
    return [*text, summary + "\n"]


def _rich_width() -> int:
    """The width rich's Console gives itself off a terminal: a terminal's size on
    stdin, stdout or stderr, ``COLUMNS`` over it, else 80."""
    width = 0
    for fd in (0, 1, 2):
        try:
            width = os.get_terminal_size(fd).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        width = int(columns)
    return width or 80


def _rich_reports(reports: list[ValidationReport]) -> None:
    """The reports through rich: colours at a terminal."""
    from rich.console import Console
    from rich.text import Text

    console = Console()
    if not reports:
        console.print("[red]no SKILL.md found[/red]")
        return
    rows, summary, bad = _report_lines(reports)
    for where, label, rest in rows:
        line = Text(where)
        line.append(label, style="red" if label.startswith("error") else "yellow")
        line.append(rest)
        console.print(line, highlight=False, soft_wrap=True)
    console.print(summary, style="red" if bad else "green", highlight=False)
    sys.stdout.flush()
