"""``skilldeck skills match "QUERY" [--top K] [--root DIR]... [--no-defaults] [--json]
[--lexical|--embeddings]`` without typer or pydantic.

A warm match over thousands of skills is a snapshot read and a millisecond of
ranking; importing typer and click and the pydantic settings cost several times
that (``python -m bench startup``: goal, at most twice ``agentskills validate``).
So :func:`try_fast` recognises the plain shapes of that command and runs it with the
light settings view, like :mod:`.fastpath` does for ``skills list --json``.
Anything else (``--help``, an unknown or malformed option, an
empty query, shell completion) returns None and the typer command handles it. The
typer command (:mod:`.skills_match_cmd`) ranks and prints through
:func:`ranked_rows` and :func:`write_matches` below, so both paths write the same
bytes; tests compare them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from skilldeck.cli.skills.fast.fastio import fail_line, guarded, print_json, wants_typer
from skilldeck.cli.skills.fast.fastpath import fast_registry, root_problem
from skilldeck.cli.termtext import printable
from skilldeck.skills import routing

if TYPE_CHECKING:
    from skilldeck.skills.registry import SkillRegistry

__all__ = ["ranked_rows", "try_fast", "write_matches"]

#: a ranked skill as printed: name, skill folder, normalised score in [0, 1]
Row = dict[str, object]
#: below this many columns the table leaves the folder out (it wrapped over 5 lines)
WIDE_TABLE = 120
#: from this many skills a cold index build takes long enough to announce
BIG_CATALOG = 500


def try_fast(argv: list[str]) -> int | None:
    """Run ``argv`` here when it is a plain ``skills match``; its exit code, or None
    when the typer app must handle it."""
    if argv[:2] != ["skills", "match"] or wants_typer():
        return None
    parsed = _parse(argv[2:])
    if parsed is None:
        return None
    query, top, roots, no_defaults, json_, embeddings = parsed

    def run() -> int:
        problem = root_problem(roots, no_defaults)
        if problem is not None:
            return fail_line(problem, code=2)
        registry = fast_registry(roots, no_defaults)
        if embeddings is not None:  # this process's own view of the settings
            registry.settings.skills.match_embeddings = embeddings
        rows, descriptions = ranked_rows(registry, query, top)
        write_matches(rows, descriptions, query, json_=json_)
        return 0

    return guarded(run)


def _parse(args: list[str]) -> tuple[str, int, list[Path], bool, bool, bool | None] | None:
    """``(query, top, roots, no_defaults, json, embeddings)`` (embeddings: None for
    the setting's), or None for any other shape."""
    words: list[str] = []
    roots: list[Path] = []
    flags = {"--json": False, "--no-defaults": False, "--lexical": False, "--embeddings": False}
    top = "5"
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        i += 1
        if arg in flags:
            flags[arg] = True
            continue
        if arg in ("--root", "--top", "-k"):
            if i >= len(args) or args[i].startswith("-"):
                return None  # let click report (or interpret) it
            name, value = arg, args[i]
            i += 1
        elif not (eq and name in ("--root", "--top")):
            if arg.startswith("-"):
                return None
            words.append(arg)
            continue
        if name == "--root":
            if not value.strip():
                return None
            roots.append(Path(value))
        else:
            top = value
    if len(words) != 1 or not words[0].strip() or not top.isdigit() or int(top) < 1:
        return None
    if flags["--lexical"] and flags["--embeddings"]:
        return None  # typer reports the last one wins; not a plain shape
    embeddings = True if flags["--embeddings"] else False if flags["--lexical"] else None
    return words[0], int(top), roots, flags["--no-defaults"], flags["--json"], embeddings


def ranked_rows(registry: SkillRegistry, query: str, top: int) -> tuple[list[Row], list[str]]:
    """The ``top`` best skills for ``query`` as printed rows, and their descriptions:
    from the cached index without numpy when it can, else from the matcher (which
    builds the cache; the two rank alike)."""
    if routing.embeddings_on(registry.settings):  # numpy, but no index decoding
        matches = routing.warm_rank_embedded(registry, query, k=top)
    else:
        matches = routing.warm_rank(registry, query, k=top)
    if matches is None:  # the facade imports the matcher (and numpy) only here
        _say_the_first_run_waits(len(registry.list()))
        matches = routing.SkillMatcher.for_registry(registry).rank(query, k=top)
    rows: list[Row] = []
    for m in matches:
        row: Row = {"name": m.name, "path": str(m.skill.folder), "score": round(m.score, 4)}
        reason = registry.why_unavailable(m.skill)
        if reason is not None:  # ranked like the rest, but an agent here cannot use it
            row["unavailable"] = reason
        rows.append(row)
    return rows, [printable(m.skill.description) for m in matches]


def _say_the_first_run_waits(skills: int) -> None:
    """A first match over a big catalog builds its index and embeds every skill
    (~10 s for 3,200): say so on a terminal, where a silent wait looks like a hang."""
    if skills >= BIG_CATALOG and sys.stderr.isatty():
        print(
            f"Indexing {skills} skills for routing (once; later matches are instant)…",
            file=sys.stderr,
            flush=True,
        )


def write_matches(rows: list[Row], descriptions: list[str], query: str, *, json_: bool) -> None:
    """The rows as JSON, or as a table with a shortened description."""
    if json_:
        print_json(rows)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    if not rows:
        console.print(f"No skill matches {printable(repr(query))}.", markup=False)
        return
    wide = console.width >= WIDE_TABLE
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("#", no_wrap=True)
    table.add_column("skill", no_wrap=True, max_width=32, overflow="ellipsis")
    table.add_column("score", no_wrap=True)
    table.add_column("description", overflow="fold", ratio=1)
    if wide:
        table.add_column("path", overflow="fold")
    for i, (row, description) in enumerate(zip(rows, descriptions, strict=True), start=1):
        short = description if len(description) <= 70 else description[:69] + "…"
        reason = row.get("unavailable")
        if reason is not None:  # said in full: it is why an agent here skips the skill
            short = f"(unavailable: {printable(str(reason))}) {short}"
        # Text cells: a description is the skill author's, never rich markup ("[link=…]")
        cells = [str(i), printable(str(row["name"])), f"{row['score']:.2f}", short]
        cells += [printable(_home(Path(str(row["path"]))))] if wide else []
        table.add_row(*(Text(cell) for cell in cells))
    console.print(table)
    if not wide:
        console.print("[dim]Skill folders are shown at 120 columns, or with --json.[/dim]")


def _home(path: Path) -> str:
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)
