"""A damaged session store, said in one line: what is wrong, where, and what to do.

Why: ``sessions.db`` is a file the user owns. A disk, a copy or a hand edit can
damage it, and a traceback then stood in front of every command — even those that
would find and delete the bad row. So:

* **The whole file** unreadable (not SQLite, pages corrupt) or holding another
  program's tables: one :class:`~skilldeck.errors.SessionError` naming the file and
  the ``mv`` that sets it aside (skilldeck then starts a new, empty store).
* **One session's row** with a JSON column that does not parse: it is still listed
  (the field read as empty, the reason in :attr:`SessionRecord.damage`); opening it
  — ``sessions show``, ``resume``, ``chat --session`` — is a SessionError that names
  it and the ``skilldeck sessions delete`` that removes it. Other sessions are
  untouched.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from skilldeck.agent.store.migrations import MIGRATIONS, apply_migrations
from skilldeck.errors import SessionError

__all__ = [
    "damaged_session",
    "foreign_schema",
    "is_damaged_file",
    "is_foreign_schema",
    "json_field",
    "migrate",
    "parse_stored",
    "store_damaged",
    "stored_metadata",
    "why_invalid",
]

T = TypeVar("T")

# SQLite's primary result codes (the low byte of an extended one)
_SQLITE_ERROR = 1
_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26


def _primary_code(e: sqlite3.Error) -> int:
    return int(getattr(e, "sqlite_errorcode", 0) or 0) & 0xFF


def is_damaged_file(e: sqlite3.Error) -> bool:
    """SQLite says the file is not a database, or its pages are corrupt."""
    return _primary_code(e) in (_SQLITE_CORRUPT, _SQLITE_NOTADB)


def is_foreign_schema(e: sqlite3.Error) -> bool:
    """A plain SQL error while applying migrations: the file holds tables skilldeck
    did not make (``table sessions already exists``, a missing column)."""
    return _primary_code(e) == _SQLITE_ERROR


def _move_aside(path: Path) -> str:
    target = path.with_name(path.name + ".damaged")
    return (
        f"Move it aside with `mv {shlex.quote(str(path))} {shlex.quote(str(target))}` "
        "(its -wal and -shm files too, if there are any); skilldeck then starts a new, "
        "empty store."
    )


def migrate(path: Path, db: sqlite3.Connection) -> None:
    """Apply pending migrations (the caller holds ``BEGIN IMMEDIATE``); another
    program's tables in the way are a SessionError with the fix."""
    try:
        apply_migrations(db)
    except sqlite3.OperationalError as e:
        if not is_foreign_schema(e):
            raise
        if not _holds_our_migrations(db):
            raise foreign_schema(path, e) from e
        # our own store failed to upgrade: a skilldeck bug, not the user's file to blame
        raise SessionError(
            f"Session store {path} could not be upgraded ({e}). This is a skilldeck bug: "
            f"please report it. {_move_aside(path)}"
        ) from e


def _holds_our_migrations(db: sqlite3.Connection) -> bool:
    """Whether skilldeck made this store (a migration of ours is recorded in it)."""
    try:
        rows = db.execute("SELECT name FROM migrations").fetchall()
    except sqlite3.Error:
        return False
    ours = {m.name for m in MIGRATIONS}
    return any(row[0] in ours for row in rows)


def store_damaged(path: Path, e: sqlite3.Error) -> SessionError:
    """The file cannot be read as SQLite."""
    return SessionError(f"Session store {path} is damaged ({e}). {_move_aside(path)}")


def foreign_schema(path: Path, e: sqlite3.Error) -> SessionError:
    """The file is SQLite, but not a skilldeck session store."""
    return SessionError(
        f"Session store {path} is not a skilldeck session store ({e}). {_move_aside(path)}"
    )


def damaged_session(session_id: str, what: str) -> SessionError:
    """Opening a session whose stored row or messages do not read back."""
    return SessionError(
        f"Session {session_id} is damaged ({what}); delete it with "
        f"`skilldeck sessions delete {session_id}`."
    )


def json_field(name: str, raw: Any, default: Any, damage: list[str]) -> Any:
    """``raw`` (a JSON object column) parsed; ``default`` when it is empty, or — with
    the reason appended to ``damage`` — when it is not JSON or not an object."""
    if raw is None or raw == "":
        return default
    try:
        value = json.loads(raw)
    except (TypeError, ValueError) as e:
        reason = e.msg if isinstance(e, json.JSONDecodeError) else type(raw).__name__
        damage.append(f"{name} is not valid JSON: {reason}")
        return default
    if not isinstance(value, dict):
        damage.append(f"{name} is JSON {type(value).__name__}, not an object")
        return default
    return value


def why_invalid(e: Exception) -> str:
    """The first reason a stored message or event did not validate, on one line."""
    if isinstance(e, ValidationError) and e.errors():
        errors = e.errors()
        first = errors[0]
        loc = ".".join(str(part) for part in first.get("loc", ()))
        text = f"{loc}: {first['msg']}" if loc else str(first["msg"])
        if len(errors) > 1:
            text += f" (and {len(errors) - 1} more)"
    else:
        text = str(e)
    return " ".join(text.split())


def parse_stored(session_id: str, what: str, raw: Any, parse: Callable[[Any], T]) -> T:
    """``parse(raw)`` for one stored message or event of ``session_id``; a SessionError
    naming the session (and how to delete it) when the row does not read back."""
    try:
        return parse(raw)
    except (ValueError, TypeError) as e:
        raise damaged_session(session_id, f"{what} does not read back: {why_invalid(e)}") from e


def stored_metadata(session_id: str, raw: Any) -> dict[str, Any]:
    """The ``metadata`` a turn merges into; a SessionError when it does not parse (the
    turn would otherwise overwrite what is left of it)."""
    damage: list[str] = []
    meta: dict[str, Any] = json_field("metadata", raw, {}, damage)
    if damage:
        raise damaged_session(session_id, damage[0])
    return meta
