"""``skilldeck skills validate PATH... [--strict] [--json]``.

Its own module so that ``skills validate`` imports only what validation needs (no
settings, no registry). Run as ``skilldeck``, the plain shapes of the command never
reach typer at all: :mod:`.fast_validate` answers them, through the same functions
this command prints with.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skilldeck.cli.common import JsonOption, fail, named_path
from skilldeck.cli.skills.fast.fast_validate import missing_paths, reports_for, write_reports

StrictOption = Annotated[
    bool, typer.Option("--strict", help="Only the six spec fields; reject what skills-ref rejects.")
]


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)


def validate(
    paths: Annotated[
        list[Path],
        typer.Argument(
            parser=named_path, help="Skill folders, SKILL.md files, or trees to search."
        ),
    ],
    strict: StrictOption = False,
    json_: JsonOption = False,
) -> None:
    """Validate skills; exit 0 when all are valid, 1 when any is not, 2 on bad usage."""
    missing = missing_paths(paths)
    if missing:
        fail(missing, code=2)
    reports = reports_for(paths, strict=strict)
    write_reports(reports, json_=json_)
    if not reports or not all(r.valid for r in reports):
        raise typer.Exit(1)
