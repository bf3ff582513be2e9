"""``skilldeck skills match "QUERY" [--top K] [--root DIR]... [--no-defaults] [--json]``.

Ranks the discovered skills for a free-text request with the same matcher the agent
uses for hints and the Skill tool's ``query``. ``--json`` prints an array of
``{name, path, score}`` best first, ``path`` being the skill folder and ``score`` the
normalised score in [0, 1]. The routing index is cached next to the discovery
snapshot, so repeated calls do not re-read any SKILL.md. ``--embeddings`` (or
``skills.match_embeddings = true``) fuses sentence embeddings in when the
``[embeddings]`` extra is installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skilldeck.cli.common import (
    JsonOption,
    NoDefaultsOption,
    RootOption,
    discover_registry,
    fail,
    print_json,
    stdout_console,
)

QueryArg = Annotated[str, typer.Argument(help="What you want to do, in your own words.")]
TopOption = Annotated[
    int, typer.Option("--top", "-k", min=1, help="How many skills to show (best first).")
]
EmbeddingsOption = Annotated[
    bool,
    typer.Option("--embeddings", help="Fuse sentence embeddings in (needs skilldeck[embeddings])."),
]


def register(app: typer.Typer) -> None:
    app.command("match")(match)


def match(
    query: QueryArg,
    top: TopOption = 5,
    root: RootOption = None,
    no_defaults: NoDefaultsOption = False,
    json_: JsonOption = False,
    embeddings: EmbeddingsOption = False,
) -> None:
    """Rank skills for a request: which skill should handle this?"""
    if not query.strip():
        fail("QUERY is empty; describe the task in a few words.", code=2)
    from skilldeck.skills.routing import SkillMatcher

    overrides = {"skills": {"match_embeddings": True}} if embeddings else {}
    registry = discover_registry(root, no_defaults, **overrides)
    matches = SkillMatcher.for_registry(registry).rank(query, k=top)
    rows = [
        {"name": m.name, "path": str(m.skill.folder), "score": round(m.score, 4)} for m in matches
    ]
    if json_:
        print_json(rows)
        return
    _render(rows, [m.skill.description for m in matches], query)


def _render(rows: list[dict[str, object]], descriptions: list[str], query: str) -> None:
    console = stdout_console()
    if not rows:
        console.print(f"No skill matches {query!r}.")
        return
    from rich.table import Table

    table = Table(show_edge=False, pad_edge=False)
    for column in ("#", "skill", "score", "description", "path"):
        table.add_column(column, overflow="fold")
    for i, (row, description) in enumerate(zip(rows, descriptions, strict=True), start=1):
        short = description if len(description) <= 70 else description[:69] + "…"
        table.add_row(
            str(i), str(row["name"]), f"{row['score']:.2f}", short, _home(Path(str(row["path"])))
        )
    console.print(table)


def _home(path: Path) -> str:
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)
