"""``skilldeck sessions list|show|delete``: what the session store holds.

``show`` prints the transcript (messages with tool calls and results), todos, usage,
the agent type, depth and parent of a sub-agent's session, and — for a paused session —
what it is waiting for and the command to continue. The launch record (the settings
and rules a resume restores) stays in the store: it is not printed.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Annotated, Any

import typer

from skilldeck.agent.store import STATUSES, SessionStore
from skilldeck.agent.store.damage import damaged_session
from skilldeck.cli.common import JsonOption, fail, print_json, stdout_console
from skilldeck.cli.render import paused_help, summarize_input
from skilldeck.cli.termtext import printable
from skilldeck.llm.messages import AssistantMessage, ToolResultMessage, UserMessage
from skilldeck.settings import load_settings

if TYPE_CHECKING:
    from rich.console import Console

    from skilldeck.agent.store import SessionRecord, StoredMessage

IdArg = Annotated[str, typer.Argument(help="Session id (a unique prefix works).")]
_RESULT_LINES = 8


def register(app: typer.Typer) -> None:
    app.command("list")(list_sessions)
    app.command("show")(show_session)
    app.command("delete")(delete_session)


def _store() -> SessionStore:
    return SessionStore.open(load_settings())


def list_sessions(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many.")] = 20,
    status: Annotated[
        str | None, typer.Option("--status", help="Only sessions with this status.")
    ] = None,
    json_: JsonOption = False,
) -> None:
    """Most recently updated sessions first."""
    if status is not None and status not in STATUSES:
        fail(f"Unknown --status {status!r}; use one of: {', '.join(STATUSES)}.", code=2)
    with _store() as store:
        records = store.list(limit=limit, status=status)
    if json_:
        print_json([r.to_dict() for r in records])
        return
    from rich.table import Table
    from rich.text import Text

    console = stdout_console()
    if not records:
        console.print('No sessions yet. Start one with `skilldeck run "TASK"`.')
        return
    table = Table(box=None, header_style="bold")
    table.add_column("ID", no_wrap=True, min_width=12)
    table.add_column("STATUS", no_wrap=True, min_width=9)
    table.add_column("UPDATED", no_wrap=True, min_width=19)
    table.add_column("MODEL", overflow="ellipsis", max_width=32)
    table.add_column("MSGS", justify="right")
    table.add_column("TASK", overflow="ellipsis", no_wrap=True, ratio=1)
    for r in records:  # Text cells: a task is the user's words, never rich markup
        status = "damaged" if r.damage else r.status
        cells = (r.id, status, _when(r.updated), _short(r.model, 32), str(r.message_count))
        task = _short(printable(r.task), 60)
        table.add_row(*(Text(printable(c)) for c in cells), Text(task))
    console.print(table)
    _damage_notes(console, records)


def _damage_notes(console: Console, records: list[SessionRecord]) -> None:
    """Under the table, each damaged session: what is wrong and how to delete it (it
    is listed so it can be found; show, resume and chat refuse it)."""
    for r in records:
        if r.damage:
            line = str(damaged_session(r.id, "; ".join(r.damage)))
            console.print(
                printable(line), style="yellow", markup=False, highlight=False, soft_wrap=True
            )


def show_session(
    session_id: IdArg,
    events: Annotated[bool, typer.Option("--events", help="Also list stored events.")] = False,
    json_: JsonOption = False,
) -> None:
    """One session: metadata, transcript, todos, usage, pending request."""
    with _store() as store:
        record = store.get(session_id)
        messages = store.messages(record.id)
        data = {
            "session": record.to_dict(),
            "messages": [_message_dict(m) for m in messages],
            "todos": store.todos(record.id),
            "usage": {
                "turns": [
                    {"turn": u.turn, "model": u.model, **u.usage.model_dump()}
                    for u in store.usage(record.id)
                ],
                "total": store.total_usage(record.id).model_dump(),
            },
        }
        if events:
            data["events"] = [e.model_dump(mode="json") for e in store.events(record.id)]
    if json_:
        print_json(data)
        return
    _render(stdout_console(), record, messages, data)


def delete_session(session_id: IdArg) -> None:
    """Remove a session and everything stored with it."""
    with _store() as store:
        sid = store.resolve(session_id)
        store.delete(sid)
    typer.echo(f"Deleted session {sid}.")


# ---- rendering ------------------------------------------------------------------------


def _message_dict(m: StoredMessage) -> dict[str, Any]:
    out = {"seq": m.seq, **m.message.model_dump(mode="json")}
    if m.full_content is not None:
        out["full_content"] = m.full_content
    return out


def _when(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S")


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _render(
    console: Console, record: SessionRecord, messages: list[StoredMessage], data: dict[str, Any]
) -> None:
    from rich.text import Text

    console.print(Text(f"Session {record.id}", style="bold"))
    for label, value in (
        ("status", record.status),
        ("model", record.model),
        ("agent", record.agent),
        ("type", record.agent_type or "-"),
        ("depth", record.depth),
        ("parent", record.parent_id or "-"),
        ("cwd", record.cwd),
        ("created", _when(record.created)),
        ("updated", _when(record.updated)),
    ):
        console.print(printable(f"  {label:8} {value}"), markup=False, highlight=False)
    total = data["usage"]["total"]
    console.print(f"  {'tokens':8} {total['input_tokens']} in / {total['output_tokens']} out")
    console.print()
    for stored in messages:
        _render_message(console, stored)
    if data["todos"]:
        console.print(Text("Todos", style="bold"))
        marks = {"completed": "✔", "in_progress": "▶", "pending": "○"}
        for todo in data["todos"]:
            line = printable(f"  {marks.get(todo['status'], '?')} {todo['content']}")
            console.print(line, markup=False, highlight=False)
    if record.status == "paused":
        console.print(Text(paused_help(record.id, record.pending), style="yellow"))


def _render_message(console: Console, stored: StoredMessage) -> None:
    from rich.text import Text

    m = stored.message
    if isinstance(m, AssistantMessage):
        if m.text:
            console.print(
                Text("assistant: ", style="bold green") + Text(printable(m.text, lines=True))
            )
        for c in m.tool_calls:
            call = printable(f"  ⏺ {c.name}  {summarize_input(c.name, c.input)}")
            console.print(Text(call, style="cyan"))
    elif isinstance(m, ToolResultMessage):
        lines = m.content.splitlines()[:_RESULT_LINES]
        style = "red" if m.is_error else "dim"
        shown = "\n      ".join(printable(_short(x, 160)) for x in lines)
        console.print(Text("    ⎿ " + shown, style=style))
        if stored.full_content is not None:
            console.print(
                Text(
                    f"      (full output: {len(stored.full_content)} chars, see --json)",
                    style="dim",
                )
            )
    elif isinstance(m, UserMessage):
        label = f"user ({m.meta})" if m.meta else "user"
        text = m.content if not m.meta else _short(m.content.replace("\n", " "), 100)
        console.print(Text(f"{label}: ", style="bold blue") + Text(printable(text, lines=True)))
    else:
        console.print(Text(f"system: {_short(printable(m.content), 100)}", style="dim"))
