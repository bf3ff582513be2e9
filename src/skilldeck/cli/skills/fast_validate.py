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

import sys
from pathlib import Path

from skilldeck.cli.skills.fastio import fail_line, guarded, print_json, wants_typer
from skilldeck.skills.format import ValidationReport, validate_path

__all__ = ["missing_paths", "reports_for", "try_fast", "write_reports"]

_FLAGS = ("--strict", "--json")


def try_fast(argv: list[str]) -> int | None:
    """Run ``argv`` here when it is a plain ``skills validate``; its exit code, or None
    when the typer app must handle it."""
    if argv[:2] != ["skills", "validate"] or wants_typer():
        return None
    args = argv[2:]
    paths = [Path(a) for a in args if a not in _FLAGS]
    if not paths or any(a.startswith("-") and a not in _FLAGS for a in args):
        return None
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
    from rich.console import Console
    from rich.text import Text

    console = Console()
    if not reports:
        console.print("[red]no SKILL.md found[/red]")
        return
    errors = warnings = 0
    for report in reports:
        for d in report.diagnostics:
            where = f"{d.path or report.path}:{d.line}" if d.line else f"{d.path or report.path}"
            label, color = ("error", "red") if d.is_error else ("warning", "yellow")
            errors += d.is_error
            warnings += not d.is_error
            line = Text(f"{where}: ")
            line.append(f"{label} {d.code}", style=color)
            line.append(f" {d.message}")
            console.print(line, highlight=False, soft_wrap=True)
    bad = sum(1 for r in reports if not r.valid)
    summary = (
        f"{len(reports)} skill(s) checked, {bad} invalid: {errors} error(s), {warnings} warning(s)"
    )
    console.print(summary, style="red" if bad else "green", highlight=False)
    sys.stdout.flush()
