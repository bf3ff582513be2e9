"""``skilldeck skills match "QUERY" [--top K] [--root DIR]... [--no-defaults] [--json]``.

Ranks the discovered skills for a free-text request with the same matcher the agent
uses for hints and the Skill tool's ``query``. ``--json`` prints an array of
``{name, path, score}`` best first, ``path`` being the skill folder and ``score`` the
normalised score in [0, 1]. The routing index is cached next to the discovery
snapshot, so repeated calls do not re-read any SKILL.md. Static embeddings are
fused in by default (``skills.match_embeddings``); ``--lexical`` ranks by words
only, ``--embeddings`` forces them on. Run as ``skilldeck``, the plain shapes never
reach typer: :mod:`.fast_match` answers them through the same functions.
"""

from __future__ import annotations

from typing import Annotated

import typer

from skilldeck.cli.common import JsonOption, NoDefaultsOption, RootOption, fail
from skilldeck.cli.skills.fast.fast_match import ranked_rows, write_matches
from skilldeck.cli.workspace import discover_registry

QueryArg = Annotated[str, typer.Argument(help="What you want to do, in your own words.")]
TopOption = Annotated[
    int, typer.Option("--top", "-k", min=1, help="How many skills to show (best first).")
]
EmbeddingsOption = Annotated[
    bool | None,
    typer.Option(
        "--embeddings/--lexical",
        help="Fuse static embeddings in (the default: skills.match_embeddings), or rank "
        "by words only.",
    ),
]


def register(app: typer.Typer) -> None:
    app.command("match")(match)


def match(
    query: QueryArg,
    top: TopOption = 5,
    root: RootOption = None,
    no_defaults: NoDefaultsOption = False,
    json_: JsonOption = False,
    embeddings: EmbeddingsOption = None,
) -> None:
    """Rank skills for a request: which skill should handle this?"""
    if not query.strip():
        fail("QUERY is empty; describe the task in a few words.", code=2)
    overrides = {} if embeddings is None else {"skills": {"match_embeddings": embeddings}}
    registry = discover_registry(root, no_defaults, **overrides)
    rows, descriptions = ranked_rows(registry, query, top)
    write_matches(rows, descriptions, query, json_=json_)
