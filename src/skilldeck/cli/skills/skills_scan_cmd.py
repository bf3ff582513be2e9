"""``skilldeck skills scan PATH... [--json] [--rules]``: the content scanner by hand.

Each PATH is a skill folder, a folder of skills (every topmost folder holding a
SKILL.md under it is one report), or a single file. Findings print grouped by
skill, worst first, each with its code, severity, ``file:line``, what was found
and why, and the matched text. Exit status: 1 when any skill has a high-severity
finding (what install refuses without ``--allow-risk``) or had no file scanned at all
(a SKILL.md that is a symlink, a FIFO: "clean" would claim what was never read),
else 0. ``--json`` prints
one object per skill (``path``, ``files_scanned``, ``worst``, ``findings``,
``skipped``); ``--rules`` lists every code instead of scanning.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from skilldeck.cli.common import JsonOption, fail, named_path, print_json, stdout_console
from skilldeck.cli.termtext import printable
from skilldeck.skills.scanning import ScanReport, describe, scan_paths

_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}


def register(app: typer.Typer) -> None:
    app.command("scan")(scan_cmd)


def scan_cmd(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            parser=named_path,
            help="Skill folders, folders of skills, or files.",
            show_default=False,
        ),
    ] = None,
    rules: Annotated[
        bool, typer.Option("--rules", help="List the scanner's codes instead of scanning.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Scan skills for instruction-level threats (exit 1 on a high-severity finding)."""
    if rules:
        _print_rules(as_json)
        return
    if not paths:
        fail("Pass at least one PATH to scan (a skill folder, a folder of skills, a file).", code=2)
    reports = scan_paths(paths)
    if as_json:
        print_json([report.to_dict() for report in reports])
    else:
        _print_reports(reports)
    if any(report.high or not report.files_scanned for report in reports):
        raise typer.Exit(1)


def _shown(text: str) -> str:
    """Skill text (a path, an excerpt that may hold the very escape sequence a finding
    is about) as rich markup that prints it harmlessly."""
    return escape(printable(text))


def _print_rules(as_json: bool) -> None:
    rows = describe()
    if as_json:
        print_json(rows)
        return
    console = stdout_console()
    for row in rows:
        style = _STYLE[row["severity"]]
        console.print(
            f"{row['code']}  [{style}]{row['severity']:<6}[/]  {row['title']}", highlight=False
        )


def _print_reports(reports: list[ScanReport]) -> None:
    console = stdout_console()
    flagged = 0
    for report in reports:
        if not report.findings:
            verdict = "[green]clean[/]" if report.files_scanned else "[yellow]not scanned[/]"
            console.print(f"{verdict} {_shown(str(report.path))}", highlight=False)
            for skipped in report.skipped:
                console.print(f"  [dim]not scanned: {_shown(skipped)}[/]", highlight=False)
            continue
        flagged += 1
        high = len(report.high)
        console.print(
            f"[bold]{_shown(str(report.path))}[/]: {len(report.findings)} finding(s), {high} high",
            highlight=False,
        )
        for finding in report.findings:
            style = _STYLE[finding.severity.value]
            what, _, why = finding.message.partition(": ")
            console.print(
                f"  [{style}]{finding.severity.value:<6}[/] {finding.code} "
                f"{_shown(finding.file)}:{finding.line}  {_shown(what)}",
                highlight=False,
            )
            width = max(40, min(console.width, 100))
            for text, tag in ((why, ""), (finding.excerpt, "dim")):
                if text:
                    wrapped = textwrap.fill(
                        printable(text), width, initial_indent=" " * 9, subsequent_indent=" " * 9
                    )
                    console.print(
                        f"[{tag}]{escape(wrapped)}[/]" if tag else escape(wrapped),
                        highlight=False,
                        soft_wrap=True,
                    )
        for skipped in report.skipped:
            console.print(f"  [dim]not scanned: {_shown(skipped)}[/]", highlight=False)
    with_high = sum(1 for report in reports if report.high)
    unread = sum(1 for report in reports if not report.files_scanned)
    console.print(
        f"Scanned {len(reports)} skill(s): {flagged} with findings, {with_high} with high ones"
        + (f", {unread} with no file scanned." if unread else "."),
        highlight=False,
    )
