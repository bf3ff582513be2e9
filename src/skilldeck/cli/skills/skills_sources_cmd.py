"""``skilldeck skills check|update|pin``: keep skills installed from git, URLs and indexes current.

Thin: options → :mod:`skilldeck.skills.sources` → a table or ``--json``. ``check``
changes nothing and exits 0 when all is up to date, 1 when something is out of date,
2 when a source could not be reached (so CI can ask);
``update`` exits 1 when a skill was refused (edited locally, a moved pinned tag, an
unreachable source) and says why for each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from skilldeck.cli.common import JsonOption, print_json, stdout_console
from skilldeck.cli.skills.skills_pkg_cmd import ScopeChoice, cli_reporter, print_detail
from skilldeck.cli.workspace import settings_from_cli
from skilldeck.skills.sources import FetchOptions, check_updates, pin, update

if TYPE_CHECKING:
    from skilldeck.skills.sources import UpdateResult, UpdateStatus

AllowRiskOption = Annotated[
    bool,
    typer.Option("--allow-risk", help="Install despite high-severity scanner findings."),
]
ScopeFilter = Annotated[
    ScopeChoice | None, typer.Option("--scope", help="Only this scope (default: both).")
]
_MARKS = {
    "up-to-date": "[green]up to date[/]",
    "outdated": "[yellow]outdated[/]",
    "moved": "[red]tag moved[/]",
    "pinned": "[cyan]pinned[/]",
    "local": "[dim]local[/]",
    "missing": "[red]missing[/]",
    "error": "[red]error[/]",
}


def check_cmd(
    names: Annotated[
        list[str] | None,
        typer.Argument(help="Installed skills to check (default: all)."),
    ] = None,
    scope: ScopeFilter = None,
    as_json: JsonOption = False,
) -> None:
    """List installed skills whose source has something newer (changes nothing).

    Exit status: 0 all up to date, 1 something outdated or deleted, 2 a source could not
    be checked.
    """
    with cli_reporter() as reporter:
        statuses = check_updates(
            settings_from_cli(),
            scope=scope.value if scope else None,
            names=names or (),
            fetch=FetchOptions(reporter=reporter) if reporter else None,
        )
    if as_json:
        print_json([s.to_dict() for s in statuses])
    else:
        _print_statuses(statuses)
    raise typer.Exit(check_exit_code(statuses))


def check_exit_code(statuses: list[UpdateStatus]) -> int:
    """0: all up to date; 1: something is outdated (or its tag moved, or its folder
    was deleted); 2: a source
    could not be checked — that wins, since what it would say is unknown."""
    if any(s.state == "error" for s in statuses):
        return 2
    return 1 if any(s.state in ("outdated", "moved", "missing") for s in statuses) else 0


def _print_statuses(statuses: list[UpdateStatus]) -> None:
    console = stdout_console()
    if not statuses:
        console.print("No installed skills recorded in skills.lock.")
        return
    for s in statuses:
        ref = f"@{s.ref}" if s.ref else ""
        pinned = " (pinned)" if s.pinned else ""
        edited = " [yellow]edited locally[/]" if s.modified else ""
        console.print(f"{_MARKS[s.state]} {s.name} ({s.scope}){edited}", highlight=False)
        console.print(f"  {s.kind}: {s.source}{ref}{pinned}", highlight=False, soft_wrap=True)
        if s.state in ("outdated", "moved"):
            console.print(f"  {_short(s.installed)} → {_short(s.available)}", highlight=False)
        if s.message and s.state != "local":
            print_detail(console, s.message)


def _short(value: str | None) -> str:
    if not value:
        return "?"
    return value.removeprefix("sha256:")[:12]


def update_cmd(
    names: Annotated[list[str] | None, typer.Argument(help="Installed skills to update.")] = None,
    all_skills: Annotated[
        bool, typer.Option("--all", help="Update every installed skill.")
    ] = False,
    scope: ScopeFilter = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Overwrite local edits and take moved pinned tags (keeps a backup)."
        ),
    ] = False,
    allow_risk: AllowRiskOption = False,
    as_json: JsonOption = False,
) -> None:
    """Fetch, verify and replace skills whose source has something newer."""
    with cli_reporter() as reporter:
        results = update(
            settings_from_cli(),
            names=names or (),
            all_skills=all_skills,
            scope=scope.value if scope else None,
            force=force,
            fetch=FetchOptions(reporter=reporter) if reporter else None,
            allow_risk=allow_risk,
        )
    if as_json:
        print_json([r.to_dict() for r in results])
    else:
        _print_results(results)
    if any(r.outcome == "refused" for r in results):
        raise typer.Exit(1)


def _print_results(results: list[UpdateResult]) -> None:
    console = stdout_console()
    for r in results:
        if r.outcome == "updated" and r.installed:
            console.print(f"[green]updated[/] {r.name} ({r.scope})", highlight=False)
            if r.installed.backup:
                console.print(f"  previous copy kept at {r.installed.backup}", highlight=False)
        elif r.outcome == "up-to-date":
            console.print(f"up to date {r.name} ({r.scope})", highlight=False)
        else:
            mark = "[cyan]pinned[/]" if r.outcome == "pinned" else "[red]refused[/]"
            console.print(f"{mark} {r.name} ({r.scope})", highlight=False)
            print_detail(console, r.message)


def pin_cmd(
    name: Annotated[str, typer.Argument(help="An installed skill (from git, a URL or an index).")],
    ref: Annotated[
        str,
        typer.Argument(
            help="git: the tag, branch or full commit sha to keep; a URL or index skill: "
            "`installed` (or a prefix of its digest) to hold its installed content."
        ),
    ],
    scope: ScopeFilter = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite local edits (keeps a backup).")
    ] = False,
    allow_risk: AllowRiskOption = False,
    as_json: JsonOption = False,
) -> None:
    """Keep a skill where it is: install REF of a git skill and hold it there, or hold a
    URL or index skill at its installed content (update will not move either)."""
    with cli_reporter() as reporter:
        result = pin(
            settings_from_cli(),
            name,
            ref,
            scope=scope.value if scope else None,
            force=force,
            fetch=FetchOptions(reporter=reporter) if reporter else None,
            allow_risk=allow_risk,
        )
    if as_json:
        print_json(result.to_dict())
        return
    console = stdout_console()
    console.print(
        f"Pinned {result.name} to {pinned_to(ref, result.digest)} → {result.path}",
        highlight=False,
        soft_wrap=True,
    )
    if result.backup:
        console.print(f"  previous copy kept at {result.backup}", highlight=False)


def pinned_to(ref: str, digest: str) -> str:
    """What a pin holds, in words: a git ref as given; for a URL or index skill
    (``installed``, or a 12+ character prefix of its digest) its content, named by
    digest — "pinned to installed" says neither what nor which."""
    if ref == "installed" or (len(ref) >= 12 and digest.startswith(ref)):
        return f"its installed content (sha256 {digest[:12]}…)"
    return ref


def register(app: typer.Typer) -> None:
    app.command("check")(check_cmd)
    app.command("update")(update_cmd)
    app.command("pin")(pin_cmd)
