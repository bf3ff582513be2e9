"""``skilldeck skills list|enable|disable|new``.

Thin on purpose: parse options, call the library, render (rich is imported only for
human output). ``skills show`` and ``skills prompt`` live in :mod:`.skills_show_cmd`;
``skills validate`` reads no settings and lives in :mod:`.skills_validate_cmd`. The plain
``skills list --json`` [--all] [--root…] [--no-defaults] shape does not even reach
this module when run as ``skilldeck``: :mod:`skilldeck.cli.skills.fast.fastpath` answers it
without typer or pydantic, with the same output (tests compare the two).
"""

from __future__ import annotations

import sys
import textwrap
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from skilldeck.cli.common import (
    JsonOption,
    NoDefaultsOption,
    RootOption,
    labelled,
    named_path,
    stderr_console,
    stdout_console,
)
from skilldeck.cli.skills.fast.fastio import write_json_rows, write_scan_problems
from skilldeck.cli.termtext import printable
from skilldeck.cli.workspace import discover_registry
from skilldeck.config import skilldeck_home
from skilldeck.skills.format import new_skill
from skilldeck.trust import WORKSPACE_SKILL_ROOTS, assess_workspace

if TYPE_CHECKING:
    from skilldeck.skills.model.diagnostics import Diagnostic
    from skilldeck.skills.registry import SkillEntry


class KindChoice(StrEnum):
    prompt = "prompt"
    script = "script"
    code = "code"


AllOption = Annotated[
    bool, typer.Option("--all", help="Also show shadowed, disabled, invalid and unavailable.")
]
NameArg = Annotated[str, typer.Argument(help="Skill name.")]


def register(app: typer.Typer) -> None:
    app.command("list")(list_skills)
    app.command("enable")(enable)
    app.command("disable")(disable)
    app.command("new")(new)


# ---- list -----------------------------------------------------------------------------


def list_skills(
    root: RootOption = None,
    no_defaults: NoDefaultsOption = False,
    all_: AllOption = False,
    json_: JsonOption = False,
) -> None:
    """List skills from every root, highest precedence first per name."""
    registry = discover_registry(root, no_defaults)
    if json_ and not all_:  # the usual machine call: rows straight from the skills
        write_json_rows(registry.active_rows())
        _print_scan_problems(registry.diagnostics, plain=True)
        return
    every = registry.entries()
    entries = every if all_ else [e for e in every if e.status == "active"]
    if json_:
        write_json_rows([e.to_dict() for e in entries])
        _print_scan_problems(registry.diagnostics, plain=True)
        return
    _print_entries(entries, show_status=all_)
    _print_scan_problems(registry.diagnostics)
    if not all_:
        _note_hidden(every)


def _note_hidden(entries: list[SkillEntry]) -> None:
    """Say on stderr how many skills the plain listing left out and how to see them:
    a skill that silently fails to show up is the first thing a new user hits."""
    counts: dict[str, int] = {}
    for e in entries:
        if str(e.status) in ("invalid", "disabled", "unavailable"):
            counts[str(e.status)] = counts.get(str(e.status), 0) + 1
    if not counts:
        return
    parts = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    sys.stderr.write(f"note: {parts} skill(s) hidden; see: skilldeck skills list --all\n")
    if "invalid" in counts:
        sys.stderr.write("      and, for why one is invalid: skilldeck skills validate PATH\n")


#: the narrowest last column the one-line table gives; under it each row's text goes
#: on its own indented lines (long names, 80 columns, ``--all``)
MIN_TEXT_COLUMN = 30


def _print_entries(entries: list[SkillEntry], *, show_status: bool) -> None:
    """One line per skill, the description (``--all``: the reason) in whatever width is
    left. When too little is left the text goes on indented lines under its row. A
    reason is wrapped, never cut (it states facts: a line number, the fix to run); a
    description is clipped with "…"."""
    rows = []
    for e in entries:
        skill = e.skill
        text = _reason(e) if show_status else (skill.description if skill else "")
        row = [printable(e.name), str(e.status)] if show_status else [printable(e.name)]
        row += [
            str(e.source),
            str(skill.kind) if skill else "-",
            (skill.version or "-") if skill else "-",
        ]
        whole = show_status and row[1] != "active"
        rows.append((row, printable(" ".join(text.split())), whole))
    headers = ["name", "status"] if show_status else ["name"]
    headers += ["source", "kind", "version"]
    widths = [max([len(h)] + [len(r[i]) for r, _, _ in rows]) for i, h in enumerate(headers)]
    console = stdout_console()
    room = console.width - sum(widths) - 2 * len(widths)
    last = "description / reason" if show_status else "description"
    if room >= MIN_TEXT_COLUMN:
        _print_table([*headers, last], widths, rows, room)
    else:
        _print_stacked([*headers, last], widths, rows, console.width)
    console.print(f"{len(entries)} skill(s)", style="dim")


def _print_table(
    headers: list[str], widths: list[int], rows: list[tuple[list[str], str, bool]], room: int
) -> None:
    """The one-line-per-skill table; the last column gets exactly ``room`` and folds."""
    from rich.table import Table

    table = Table(box=None, show_edge=False, pad_edge=False)
    for header, width in zip(headers, widths, strict=False):
        table.add_column(
            header, no_wrap=True, width=width, style="bold" if header == "name" else None
        )
    table.add_column(headers[-1], overflow="fold", width=room)
    for row, text, whole in rows:
        table.add_row(*row, text if whole else _clip(text, room))
    stdout_console().print(table, highlight=False, markup=False)


def _print_stacked(
    headers: list[str], widths: list[int], rows: list[tuple[list[str], str, bool]], width: int
) -> None:
    """Too narrow for a text column: each row, then its text indented under it."""
    console = stdout_console()
    indent = "    "
    room = max(20, width - len(indent))

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=False)).rstrip()

    console.print(line(headers[:-1]), style="bold", highlight=False, markup=False, soft_wrap=True)
    console.print(indent + headers[-1], style="bold", highlight=False, markup=False)
    for row, text, whole in rows:
        console.print(line(row), highlight=False, markup=False, soft_wrap=True)
        if not text:
            continue
        wrapped = (
            textwrap.wrap(text, room, break_on_hyphens=False) if whole else [_clip(text, room)]
        )
        for part in wrapped:
            console.print(indent + part, highlight=False, markup=False, soft_wrap=True)


def _reason(entry: SkillEntry) -> str:
    """The last column of ``list --all``: the description of an active skill, else why
    it is not active (an invalid skill's first diagnostic, the gating reason…)."""
    status = str(entry.status)
    if status == "active" and entry.skill is not None:
        return entry.skill.description
    if status == "invalid":
        found = entry.errors or list(entry.diagnostics)
        return f"{found[0].code} {found[0].message}" if found else "does not load"
    if status == "disabled":
        return f"disabled by config (skills.disabled); skilldeck skills enable {entry.name}"
    return entry.reason or (entry.skill.description if entry.skill else "")


def _print_scan_problems(diagnostics: list[Diagnostic], *, plain: bool = False) -> None:
    """Problems of the scan itself (dangling or looping symlinks, unreadable folders),
    on stderr; ``plain`` beside JSON (bare lines, as the fast path writes them)."""
    if plain:
        write_scan_problems(diagnostics)
    elif diagnostics:
        err = stderr_console()
        for d in diagnostics:
            err.print(labelled("warning", f" {d.path}: {d.code} {d.message}"), highlight=False)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- enable / disable / new -----------------------------------------------------------


def enable(name: NameArg, root: RootOption = None, no_defaults: NoDefaultsOption = False) -> None:
    """Enable a skill (removes it from `skills.disabled` in the config files)."""
    registry = discover_registry(root, no_defaults)
    written = registry.enable(name)
    typer.echo(f"Enabled {name}.")
    if written.retrust is not None:  # its digest changed: the trust no longer holds
        ws = written.retrust.workspace
        sys.stderr.write(
            f"note: {written.retrust.config_path} was rewritten, so this folder's config "
            f"and skills are ignored until you run `skilldeck trust {ws}` again.\n"
        )


def disable(name: NameArg, root: RootOption = None, no_defaults: NoDefaultsOption = False) -> None:
    """Disable a skill (adds it to `skills.disabled` in the user config)."""
    registry = discover_registry(root, no_defaults)
    registry.disable(name)
    typer.echo(f"Disabled {name} (recorded in {registry.settings.user_config_path}).")


def new(
    name: NameArg,
    kind: Annotated[KindChoice, typer.Option("--kind", help="Template kind.")] = KindChoice.prompt,
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir", parser=named_path, help="Parent folder (default: ./.skilldeck/skills)."
        ),
    ] = None,
) -> None:
    """Create a new skill from a template that passes `validate --strict`."""
    parent = directory if directory is not None else Path(".skilldeck") / "skills"
    folder = new_skill(name, kind=kind.value, directory=parent)
    typer.echo(f"Created {kind.value} skill {name} in {folder}")
    typer.echo("Next: edit its SKILL.md and evals/trigger_evals.json, then run")
    typer.echo(f"  skilldeck skills validate {folder}\n  skilldeck skills eval {folder}")
    if directory is None and not assess_workspace(Path.cwd(), skilldeck_home()).accepts(
        WORKSPACE_SKILL_ROOTS[0]
    ):  # validate and eval take the folder as it is; agents need the folder trusted
        typer.echo(f"Agents use {parent} once you trust this folder: `skilldeck trust`.")
