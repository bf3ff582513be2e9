"""``skilldeck agents list|show``: the agent definitions a run can use.

Built-in types (``general-purpose``, ``explore``, ``plan``) and AGENT.md files from
``./.skilldeck/agents``, ``$SKILLDECK_HOME/agents`` and the bundled folder (workspace
first). A broken AGENT.md is reported on stderr and skipped; it never hides the rest.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from skilldeck.agent.subagents import discover_agents
from skilldeck.cli.common import (
    JsonOption,
    fail,
    labelled,
    named_path,
    print_json,
    stderr_console,
    stdout_console,
)
from skilldeck.cli.termtext import printable
from skilldeck.errors import SkillNotFoundError
from skilldeck.settings import load_settings

if TYPE_CHECKING:
    from skilldeck.agent.subagents import AgentCatalog, AgentDefinition

CwdOption = Annotated[
    Path | None,
    typer.Option("--cwd", parser=named_path, help="Workspace whose .skilldeck/agents to read."),
]


def register(app: typer.Typer) -> None:
    app.command("list", help="List agent definitions (built-in and AGENT.md).")(list_agents)
    app.command("show", help="Show one agent definition.")(show_agent)


def _catalog(cwd: Path | None) -> AgentCatalog:
    workspace = (cwd or Path.cwd()).expanduser().resolve()
    return discover_agents(load_settings(workspace=workspace))


def _tools_text(definition: AgentDefinition) -> str:
    tools = "inherits the parent's" if definition.tools is None else ", ".join(definition.tools)
    if definition.disallowed_tools:
        tools += f" (minus {', '.join(definition.disallowed_tools)})"
    return tools or "none"


def _report_problems(catalog: AgentCatalog) -> None:
    if not catalog.diagnostics:
        return
    err = stderr_console()
    for d in catalog.diagnostics:
        where = f"{d.path}:{d.line}" if d.line else str(d.path)
        err.print(labelled("warning", f" {where}: {d.code} {d.message}"), highlight=False)


def list_agents(cwd: CwdOption = None, json_: JsonOption = False) -> None:
    """Every definition, by name; broken files are warnings on stderr."""
    catalog = _catalog(cwd)
    agents = [catalog.agents[name] for name in catalog.names()]
    _report_problems(catalog)
    if json_:
        print_json([a.to_dict() for a in agents])
        return
    from rich.table import Table
    from rich.text import Text

    # Text cells: a description is the file author's, never rich markup ("[link=…]")
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for column in ("name", "source", "model", "tools", "description"):
        table.add_column(column, overflow="fold")
    for a in agents:
        cells = (a.name, a.source, a.model or "-", _clip(_tools_text(a), 40), _clip(a.description))
        table.add_row(*(Text(printable(c)) for c in cells))
    out = stdout_console()
    out.print(table)
    out.print(f"{len(agents)} agent(s)", style="dim")


def show_agent(
    name: Annotated[str, typer.Argument(help="The agent's name.")],
    cwd: CwdOption = None,
    json_: JsonOption = False,
) -> None:
    """One definition in full, with its instructions (the system prompt body)."""
    catalog = _catalog(cwd)
    _report_problems(catalog)
    try:
        definition = catalog.get(name)
    except SkillNotFoundError as e:
        fail(str(e))
    data: dict[str, Any] = {**definition.to_dict(), "instructions": definition.instructions}
    if json_:
        print_json(data)
        return
    out = stdout_console()
    head = f"{printable(definition.name)}  ({definition.source})"
    out.print(head, style="bold", highlight=False, markup=False)
    rows = [
        ("description", definition.description),
        ("path", data["path"] or "built in"),
        ("model", definition.model or "the parent's / the run's"),
        ("tools", _tools_text(definition)),
        ("skills", ", ".join(definition.skills) or "-"),
        ("allow-skills", str(definition.allow_skills).lower()),
        ("permission-mode", definition.permission_mode or "the run's"),
        ("max-turns", str(definition.max_turns or "the run's")),
    ]
    for key, value in rows:
        out.print(printable(f"  {key:<16}{value}"), highlight=False, markup=False)
    if definition.instructions:
        out.print()
        out.print(printable(definition.instructions, lines=True), highlight=False, markup=False)


def _clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
