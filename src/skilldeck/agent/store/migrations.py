"""Append-only, numbered schema migrations of the session store.

Each migration is a function registered with :func:`migration`; its name is recorded
in the ``migrations`` table once applied, inside the same transaction, so two
processes opening a fresh database at once cannot both apply it. **Never edit or
reorder a migration that has shipped**: add a new one at the end (the pattern of
simonw/llm's ``MIGRATIONS.append`` decorator). Migrations only use ``execute`` —
``executescript`` would commit the surrounding transaction.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    name: str
    apply: Callable[[sqlite3.Connection], None]


MIGRATIONS: list[Migration] = []


def migration(fn: Callable[[sqlite3.Connection], None]) -> Callable[[sqlite3.Connection], None]:
    """Register ``fn`` as the next migration; its ``__name__`` is its permanent id."""
    MIGRATIONS.append(Migration(fn.__name__, fn))
    return fn


def pending_migrations(conn: sqlite3.Connection) -> list[Migration]:
    """Migrations not yet recorded in ``conn`` (call inside a write transaction)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied REAL NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    return [m for m in MIGRATIONS if m.name not in done]


def apply_migrations(conn: sqlite3.Connection) -> list[str]:
    """Apply every pending migration (caller holds ``BEGIN IMMEDIATE``); names applied."""
    applied = []
    for m in pending_migrations(conn):
        m.apply(conn)
        conn.execute("INSERT INTO migrations (name, applied) VALUES (?, ?)", (m.name, time.time()))
        applied.append(m.name)
    return applied


# ---- the migrations, oldest first: append only -----------------------------------


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            created REAL NOT NULL,
            updated REAL NOT NULL,
            status TEXT NOT NULL,
            model TEXT NOT NULL,
            agent TEXT NOT NULL,
            cwd TEXT NOT NULL,
            task TEXT NOT NULL,
            pending TEXT,
            metadata TEXT NOT NULL DEFAULT '{}'
        )"""
    )
    db.execute(
        """CREATE TABLE messages (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            role TEXT NOT NULL,
            json TEXT NOT NULL,
            full_content TEXT,
            created REAL NOT NULL,
            PRIMARY KEY (session_id, seq)
        )"""
    )
    db.execute(
        """CREATE TABLE events (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            json TEXT NOT NULL,
            created REAL NOT NULL,
            PRIMARY KEY (session_id, seq)
        )"""
    )
    db.execute(
        """CREATE TABLE todos (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            content TEXT NOT NULL,
            status TEXT NOT NULL,
            active_form TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (session_id, position)
        )"""
    )
    db.execute(
        """CREATE TABLE usage (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            turn INTEGER NOT NULL,
            model TEXT NOT NULL,
            input_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            created REAL NOT NULL
        )"""
    )


@migration
def m002_indexes(db: sqlite3.Connection) -> None:
    db.execute("CREATE INDEX sessions_updated ON sessions (updated)")
    db.execute("CREATE INDEX usage_session ON usage (session_id, turn)")


@migration
def m003_tool_state_and_parent(db: sqlite3.Connection) -> None:
    """Tool state (Bash cwd, files read…) survives a resume; sub-agent sessions link up."""
    db.execute("ALTER TABLE sessions ADD COLUMN state TEXT NOT NULL DEFAULT '{}'")
    db.execute("ALTER TABLE sessions ADD COLUMN parent_id TEXT")


@migration
def m004_launch_record(db: sqlite3.Connection) -> None:
    """What a session was launched with (agent/store/launch.py): its agent type, its depth
    below the main agent, and the launch record — effective settings, the whole gate
    (mode, rules, skill and type policies, a sub-agent's parent gate), the tools it
    held — so ``resume`` rebuilds exactly that instead of reading files again."""
    db.execute("ALTER TABLE sessions ADD COLUMN agent_type TEXT")
    db.execute("ALTER TABLE sessions ADD COLUMN depth INTEGER NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE sessions ADD COLUMN launch TEXT NOT NULL DEFAULT '{}'")


@migration
def m005_session_leases(db: sqlite3.Connection) -> None:
    """Who is running a session now (``agent/store/session.py``): one row per session
    being run, held by one process (pid and host) and refreshed by its heartbeat, so a
    second process cannot run the same session at the same time."""
    db.execute(
        """CREATE TABLE leases (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            owner TEXT NOT NULL,
            acquired REAL NOT NULL,
            heartbeat REAL NOT NULL
        )"""
    )
