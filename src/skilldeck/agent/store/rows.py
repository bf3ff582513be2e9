"""The session tables' rows: what a session, a stored message, a usage row and one
turn's write are (:class:`SessionRecord`, :class:`StoredMessage`, :class:`UsageRow`,
:class:`TurnWrite`), and the SQL that turns them into rows and back.

:class:`~skilldeck.agent.store.session.SessionStore` owns the connection, the
transactions and the retries; these helpers run inside its transactions.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import PydanticSerializationError

from skilldeck.agent.events import Event
from skilldeck.agent.store.damage import json_field, parse_stored
from skilldeck.errors import SessionError
from skilldeck.llm.messages import MESSAGE_ADAPTER, Message, Usage

__all__ = [
    "LAUNCH_KEY",
    "STATUSES",
    "SessionRecord",
    "StoredMessage",
    "TurnWrite",
    "UsageRow",
    "dumps",
    "insert_events",
    "insert_messages",
    "new_session_id",
    "record_from_row",
    "replace_todos",
    "stored_message",
    "update_session",
]

#: every status a session can be in; ``running`` after a crash means "resumable"
STATUSES = (
    "running",
    "paused",
    "completed",
    "max_turns",
    "stuck",
    "limit",
    "error",
    "cancelled",
)
#: the metadata key under which a new session's launch record arrives (agent/store/launch.py)
LAUNCH_KEY = "launch"


@dataclass
class SessionRecord:
    id: str
    created: float
    updated: float
    status: str
    model: str
    agent: str
    cwd: str
    task: str
    pending: dict[str, Any] | None
    metadata: dict[str, Any]
    state: dict[str, Any] = field(default_factory=dict)
    parent_id: str | None = None
    message_count: int = 0
    #: the agent definition or sub-agent type it ran as (None: the plain main agent)
    agent_type: str | None = None
    #: levels below the main agent (0: a top-level session)
    depth: int = 0
    #: what the session was launched with (see agent/store/launch.py); {} for old sessions
    launch: dict[str, Any] = field(default_factory=dict)
    #: why the stored row does not read back (a JSON column that does not parse, read
    #: as empty); [] for an intact row. Such a session is listed, never run (damage.py)
    damage: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created": self.created,
            "updated": self.updated,
            "status": self.status,
            "model": self.model,
            "agent": self.agent,
            "cwd": self.cwd,
            "task": self.task,
            "pending": self.pending,
            "metadata": self.metadata,
            "parent_id": self.parent_id,
            "message_count": self.message_count,
            "agent_type": self.agent_type,
            "depth": self.depth,
            "damage": list(self.damage),
        }


@dataclass(frozen=True)
class StoredMessage:
    seq: int
    message: Message
    #: the untruncated tool output when what the model saw was cut
    full_content: str | None = None


@dataclass(frozen=True)
class UsageRow:
    turn: int
    model: str
    usage: Usage


@dataclass
class TurnWrite:
    """Everything one turn changes, committed in a single transaction."""

    #: (message, full tool output when the message content was truncated)
    messages: Sequence[tuple[Message, str | None]] = ()
    events: Sequence[Event] = ()
    #: (turn number, model name, usage)
    usage: tuple[int, str, Usage] | None = None
    status: str | None = None
    #: set ``set_pending`` to write ``pending`` (None clears it)
    set_pending: bool = False
    pending: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    todos: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] | None = None


def new_session_id() -> str:
    return uuid.uuid4().hex[:12]


def dumps(data: Any) -> str:
    """JSON for a text column; a path or output holding bytes that were not UTF-8
    (lone surrogates, which SQLite refuses) is kept with U+FFFD in their place."""
    return valid_text(json.dumps(data, ensure_ascii=False, default=str))


def insert_messages(
    db: sqlite3.Connection,
    session_id: str,
    messages: Sequence[tuple[Message, str | None]],
    now: float,
) -> None:
    if not messages:
        return
    (start,) = db.execute(
        "SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE session_id = ?", (session_id,)
    ).fetchone()
    db.executemany(
        "INSERT INTO messages (session_id, seq, role, json, full_content, created)"
        " VALUES (?,?,?,?,?,?)",
        [
            (session_id, start + i, msg.role, message_json(msg), full, now)
            for i, (msg, full) in enumerate(messages)
        ],
    )


def insert_events(
    db: sqlite3.Connection, session_id: str, events: Sequence[Event], now: float
) -> None:
    if not events:
        return
    (start,) = db.execute(
        "SELECT COALESCE(MAX(seq), -1) + 1 FROM events WHERE session_id = ?", (session_id,)
    ).fetchone()
    db.executemany(
        "INSERT INTO events (session_id, seq, type, json, created) VALUES (?,?,?,?,?)",
        [(session_id, start + i, ev.type, ev.to_json(), now) for i, ev in enumerate(events)],
    )


def replace_todos(db: sqlite3.Connection, session_id: str, todos: list[dict[str, Any]]) -> None:
    db.execute("DELETE FROM todos WHERE session_id = ?", (session_id,))
    db.executemany(
        "INSERT INTO todos VALUES (?,?,?,?,?)",
        [
            (
                session_id,
                i,
                str(t.get("content", "")),
                str(t.get("status", "pending")),
                str(t.get("activeForm", t.get("active_form", ""))),
            )
            for i, t in enumerate(todos)
        ],
    )


def update_session(
    db: sqlite3.Connection, session_id: str, write: TurnWrite, now: float, meta: dict[str, Any]
) -> None:
    sets: list[str] = ["updated = ?"]
    params: list[Any] = [now]
    if write.status is not None:
        if write.status not in STATUSES:
            raise SessionError(f"Unknown session status {write.status!r}.")
        sets.append("status = ?")
        params.append(write.status)
    if write.set_pending:
        sets.append("pending = ?")
        params.append(dumps(write.pending) if write.pending is not None else None)
    if write.state is not None:
        sets.append("state = ?")
        params.append(dumps(write.state))
    if write.metadata:
        sets.append("metadata = ?")
        params.append(dumps({**meta, **write.metadata}))
    db.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", (*params, session_id))


def record_from_row(row: sqlite3.Row) -> SessionRecord:
    """The row as a record, whatever its JSON columns hold: one that does not parse is
    read as empty and said in ``damage``, so a damaged session can still be listed
    (and deleted)."""
    damage: list[str] = []
    pending = json_field("pending", row["pending"], None, damage)
    return SessionRecord(
        id=row["id"],
        created=_number("created", row["created"], damage),
        updated=_number("updated", row["updated"], damage),
        status=row["status"],
        model=row["model"],
        agent=row["agent"],
        cwd=row["cwd"],
        task=row["task"],
        pending=pending,
        metadata=json_field("metadata", row["metadata"], {}, damage),
        state=json_field("state", row["state"], {}, damage),
        parent_id=row["parent_id"],
        message_count=row["message_count"],
        agent_type=row["agent_type"],
        depth=row["depth"] if isinstance(row["depth"], int) else 0,
        launch=json_field("launch", row["launch"], {}, damage),
        damage=damage,
    )


def stored_message(session_id: str, row: sqlite3.Row) -> StoredMessage:
    """A ``messages`` row read back; a SessionError naming the session when it is damaged."""
    message = parse_stored(
        session_id, f"message {row['seq']}", row["json"], MESSAGE_ADAPTER.validate_json
    )
    return StoredMessage(row["seq"], message, row["full_content"])


def _number(name: str, raw: Any, damage: list[str]) -> float:
    if isinstance(raw, int | float):
        return float(raw)
    damage.append(f"{name} is not a time")
    return 0.0


def message_json(msg: Message) -> str:
    """``msg`` as the JSON the messages table keeps. Text holding bytes that were not
    UTF-8 (a folder's name in the system prompt, a file name in a tool's output) is
    kept with U+FFFD in their place: the turn is stored, never lost to an encode error."""
    try:
        return MESSAGE_ADAPTER.dump_json(msg).decode()
    except PydanticSerializationError:
        return dumps(MESSAGE_ADAPTER.dump_python(msg, mode="json"))


def valid_text(text: str) -> str:
    """``text`` as SQLite and JSON take it: each run of bytes that were not UTF-8
    (which Python hands over as lone surrogates: a command-line argument, a line of
    stdin, a folder's name) becomes U+FFFD; a surrogate no byte decodes to, ``?``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:  # the bytes as they came, decoded again
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:
            return text.encode("utf-8", "replace").decode("utf-8")
    return text


def storable(value: Any) -> Any:
    """Text SQLite can encode (:func:`valid_text`); the JSON columns escape lone
    surrogates already."""
    return valid_text(value) if isinstance(value, str) else value


def like_prefix(prefix: str) -> str:
    """``prefix`` as a LIKE pattern (with ``ESCAPE '\\'``) matching ids that start with it."""
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
