"""Helpers every command module shares: options, settings, JSON output, failures.

Commands are thin: parse options, call the library, render. Anything more belongs in
the library.

Every command imports this module, so it imports nothing heavy itself: the settings
and the registry (pydantic and pydantic-settings, about 0.17 s of CPU) live in
:mod:`skilldeck.cli.workspace`, imported by the commands that read them, and rich is
imported only for human output (``skills validate`` reads no settings: ``python -m
bench startup``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from skilldeck.cli.skills.fast.fastio import json_text
from skilldeck.cli.skills.fast.fastio import print_json as print_json  # (one writer for both)
from skilldeck.cli.termtext import printable


def named_path(value: str | Path) -> Path:
    """A path argument's parser: an empty one is refused rather than read as the
    current folder (``Path("")`` is ``.``), so ``validate "$DIR"`` with ``DIR`` unset
    does not quietly check whatever folder the shell is in."""
    if isinstance(value, Path):
        return value
    if not value.strip():
        raise typer.BadParameter("is empty; name a file or folder (`.` for the current one).")
    return Path(value)


RootOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--root",
        parser=named_path,
        help="Skill root to scan before the default roots (repeatable).",
    ),
]
NoDefaultsOption = Annotated[
    bool, typer.Option("--no-defaults", help="Scan only the --root directories.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def print_jsonl(data: Any) -> None:
    sys.stdout.write(json_text(data) + "\n")
    sys.stdout.flush()


def fail(message: str, *, code: int = 1) -> NoReturn:
    """Print a one-line error to stderr and exit with ``code`` (2 = usage error)."""
    sys.stderr.write(f"error: {printable(message, lines=True)}\n")
    raise typer.Exit(code)


def labelled(label: str, rest: str, *, style: str = "yellow") -> Any:
    """``label`` in colour, then ``rest`` as plain text: a message that quotes a skill,
    a file or a model is never read as rich markup nor lets it drive the terminal."""
    from rich.text import Text

    line = Text(label, style=style)
    line.append(printable(rest, lines=True))
    return line


def stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


def stdout_console() -> Any:
    from rich.console import Console

    return Console()


def check_roots(roots: list[Path] | None, no_defaults: bool) -> None:
    """``--root`` folders must exist, and ``--no-defaults`` needs one (usage errors)."""
    for root in roots or ():
        if not root.is_dir():
            fail(f"--root {root}: not a folder.", code=2)
    if no_defaults and not roots:
        fail("--no-defaults needs at least one --root.", code=2)
