"""The SQLite session store: sessions, messages, events, todos, usage.

Why SQLite: one file under ``$SKILLDECK_HOME``, transactional, readable by any
process. That is what lets a run paused by ``AskUserQuestion`` (or an ``ask``
permission) be resumed by *another* process: everything the loop needs — messages,
the pending request, tool state — is here.

Guarantees:

* **One transaction per turn** (:meth:`SessionStore.commit`): a process killed mid-run
  loses at most the turn in flight; what was committed reloads exactly (messages are
  serialised with the one ``MESSAGE_ADAPTER``).
* **Many processes, one file**: WAL mode, ``busy_timeout``, every write inside
  ``BEGIN IMMEDIATE`` and retried with backoff on ``SQLITE_BUSY``.
* **Rows** (``agent/store/rows.py``): the record types and the SQL for one turn's write.
* **Append-only migrations** (``agent/store/migrations.py``), applied on open.
* Tool output truncated for the model is stored in full (``messages.full_content``).
* **Private files** (``agent/store/files.py``): the database, its ``-wal``/``-shm``
  companions (and the chat history, through :func:`private_file`) are created
  ``0600`` whatever the umask, and an existing one is set back to ``0600`` when
  opened: transcripts hold whatever the model read.
* **A launch record** per session (``sessions.launch``, written once at creation and
  never by a turn): what ``resume`` rebuilds the session from (``agent/store/launch.py``).
* **One writer per session**: a process running a session holds its lease
  (``agent/store/lease.py``); a write by another process while it does is refused
  with :class:`~skilldeck.errors.SessionBusyError`.
* **Damage is one line** (``agent/store/damage.py``): a file SQLite cannot read is a
  SessionError saying how to set it aside; a damaged row is listed, marked, and
  refused by :meth:`SessionStore.get` with the command that deletes it.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from skilldeck.agent.events import EVENT_ADAPTER, Event
from skilldeck.agent.store import damage
from skilldeck.agent.store.files import (
    COMPANIONS,
    PRIVATE_MODE,
    make_private,
    private_file,
    process_alive,
)
from skilldeck.agent.store.lease import Lease, describe_process, read_lease, take_or_check_lease
from skilldeck.agent.store.rows import (
    LAUNCH_KEY,
    STATUSES,
    SessionRecord,
    StoredMessage,
    TurnWrite,
    UsageRow,
    dumps,
    insert_events,
    insert_messages,
    like_prefix,
    new_session_id,
    record_from_row,
    replace_todos,
    storable,
    stored_message,
    update_session,
)
from skilldeck.errors import SessionError, SessionNotFoundError
from skilldeck.llm.messages import Message, Usage

if TYPE_CHECKING:
    from skilldeck.config import Settings

#: the record types and file helpers live in ``rows.py`` and ``files.py``; they are
#: re-exported here, where callers found them before the split
__all__ = [
    "LAUNCH_KEY",
    "PRIVATE_MODE",
    "STATUSES",
    "SessionRecord",
    "SessionStore",
    "StoredMessage",
    "TurnWrite",
    "UsageRow",
    "new_session_id",
    "private_file",
    "process_alive",
]

T = TypeVar("T")

_BUSY_RETRIES = 12


class SessionStore:
    """A handle on one sessions database. Thread-safe; cheap to create; close when done."""

    def __init__(self, path: Path, *, busy_timeout: float = 10.0, owner: str | None = None) -> None:
        self.path = Path(path)
        #: what this process is, in the lease another process is refused by
        self.owner = owner or describe_process()
        self._lock = threading.RLock()
        self._closed = False
        in_memory = str(path) == ":memory:"  # sqlite's own name for a private database
        try:
            if not in_memory:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                private_file(self.path)
            self._conn = sqlite3.connect(
                self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as e:
            raise SessionError(f"Cannot open the session store {self.path}: {e}") from e
        self._conn.row_factory = sqlite3.Row
        try:
            self._retry(lambda: self._setup(busy_timeout))
        except BaseException:  # a damaged or foreign file: no handle left open on it
            self._conn.close()
            raise
        if not in_memory:
            self._private_companions()

    @classmethod
    def open(cls, settings: Settings) -> SessionStore:
        """The store at ``settings.sessions_db`` (``$SKILLDECK_HOME/sessions.db``)."""
        return cls(settings.sessions_db)

    def _setup(self, busy_timeout: float) -> None:
        self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self._conn.execute("PRAGMA foreign_keys = ON")
        with self._write() as db:
            damage.migrate(self.path, db)

    def _private_companions(self) -> None:
        """``-wal``/``-shm`` exist once WAL mode is on: make them 0600 as well."""
        for suffix in COMPANIONS:
            companion = self.path.with_name(self.path.name + suffix)
            with contextlib.suppress(FileNotFoundError):
                make_private(companion)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._conn.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- transactions ---------------------------------------------------------

    def _retry(self, fn: Callable[[], T]) -> T:
        """Run ``fn``, retrying with jittered backoff while the database is busy; a
        file SQLite cannot read is a SessionError saying how to set it aside."""
        delay = 0.01
        for attempt in range(_BUSY_RETRIES):
            try:
                with self._lock:
                    if self._closed:  # not sqlite3's "closed database" ProgrammingError
                        raise SessionError(f"The session store {self.path} is closed.")
                    return fn()
            except sqlite3.DatabaseError as e:
                if damage.is_damaged_file(e):
                    raise damage.store_damaged(self.path, e) from e
                if not isinstance(e, sqlite3.OperationalError):
                    raise
                if not _is_busy(e) or attempt == _BUSY_RETRIES - 1:
                    raise SessionError(f"Session store {self.path}: {e}") from e
            time.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, 1.0)
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction: the write lock is taken up front."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
            self._conn.execute("COMMIT")
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise

    def _transaction(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        def attempt() -> T:
            with self._write() as db:
                return fn(db)

        return self._retry(attempt)

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        params = [storable(p) for p in params]
        return self._retry(lambda: self._conn.execute(sql, params).fetchall())

    # ---- writes ---------------------------------------------------------------

    def create(
        self,
        *,
        model: str,
        agent: str,
        cwd: Path | str,
        task: str,
        messages: Sequence[tuple[Message, str | None]] = (),
        metadata: dict[str, Any] | None = None,
        parent_id: str | None = None,
        session_id: str | None = None,
    ) -> SessionRecord:
        """A new ``running`` session holding ``messages``, in one transaction."""
        sid = session_id or new_session_id()
        now = time.time()
        meta = dict(metadata or {})
        launch = meta.pop(LAUNCH_KEY, None) or {}
        kind = launch.get("agent_type")
        depth = int(launch.get("depth") or 0)

        def insert(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO sessions (id, created, updated, status, model, agent, cwd, task,"
                " pending, metadata, parent_id, agent_type, depth, launch)"
                " VALUES (?,?,?,?,?,?,?,?,NULL,?,?,?,?,?)",
                (
                    sid,
                    now,
                    now,
                    "running",
                    storable(model),
                    storable(agent),
                    storable(str(cwd)),
                    storable(task),
                    dumps(meta),
                    parent_id,
                    kind,
                    depth,
                    dumps(launch),
                ),
            )
            insert_messages(db, sid, messages, now)
            take_or_check_lease(db, sid, "running", self.owner, now)

        self._transaction(insert)
        return self.get(sid)

    def commit(self, session_id: str, write: TurnWrite) -> None:
        """Apply one turn's changes atomically."""
        now = time.time()

        def apply(db: sqlite3.Connection) -> None:
            row = db.execute("SELECT metadata FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise SessionNotFoundError(f"No session {session_id!r} in {self.path}.")
            take_or_check_lease(db, session_id, write.status, self.owner, now)
            insert_messages(db, session_id, write.messages, now)
            insert_events(db, session_id, write.events, now)
            if write.usage is not None:
                turn, model, usage = write.usage
                db.execute(
                    "INSERT INTO usage VALUES (?,?,?,?,?,?)",
                    (session_id, turn, model, usage.input_tokens, usage.output_tokens, now),
                )
            if write.todos is not None:
                replace_todos(db, session_id, write.todos)
            meta = damage.stored_metadata(session_id, row["metadata"])
            update_session(db, session_id, write, now, meta)

        self._transaction(apply)

    def set_status(self, session_id: str, status: str, *, events: Sequence[Event] = ()) -> None:
        self.commit(session_id, TurnWrite(status=status, events=events))

    def renew_leases(self, session_ids: Sequence[str]) -> None:
        """Refresh the heartbeat of the leases this process holds on ``session_ids``
        (a long-lived process calls it every few seconds while it runs them)."""
        now = time.time()
        pid, host = os.getpid(), socket.gethostname()

        def renew(db: sqlite3.Connection) -> None:
            db.executemany(
                "UPDATE leases SET heartbeat = ? WHERE session_id = ? AND pid = ? AND host = ?",
                [(now, sid, pid, host) for sid in session_ids],
            )

        if session_ids:
            self._transaction(renew)

    def delete(self, session_id: str) -> None:
        sid = self.resolve(session_id)
        self._transaction(lambda db: db.execute("DELETE FROM sessions WHERE id = ?", (sid,)))

    # ---- reads ----------------------------------------------------------------

    def resolve(self, id_or_prefix: str) -> str:
        """The full id for ``id_or_prefix`` (a unique prefix is enough, as in git)."""
        rows = self._read(
            "SELECT id FROM sessions WHERE id = ? OR id LIKE ? ESCAPE '\\' LIMIT 3",
            (id_or_prefix, like_prefix(id_or_prefix)),
        )
        ids = sorted({r["id"] for r in rows})
        if id_or_prefix in ids:
            return id_or_prefix
        if len(ids) == 1 and id_or_prefix:
            return str(ids[0])
        if not ids or not id_or_prefix:
            raise SessionNotFoundError(
                f"No session {id_or_prefix!r}. Run `skilldeck sessions list` to see them."
            )
        raise SessionError(
            f"Session id prefix {id_or_prefix!r} is ambiguous ({', '.join(ids)}…); "
            "give more characters."
        )

    def get(self, session_id: str) -> SessionRecord:
        """The session to show or run: a SessionError when its row is damaged (only
        :meth:`list` returns those, marked, so they can be found and deleted)."""
        sid = self.resolve(session_id)
        rows = self._read(_SELECT_SESSIONS + " WHERE s.id = ?", (sid,))
        record = record_from_row(rows[0])
        if record.damage:
            raise damage.damaged_session(record.id, "; ".join(record.damage))
        return record

    def messages(self, session_id: str) -> list[StoredMessage]:
        rows = self._read(
            "SELECT seq, json, full_content FROM messages WHERE session_id = ? ORDER BY seq",
            (session_id,),
        )
        return [stored_message(session_id, r) for r in rows]

    def load_messages(self, session_id: str) -> list[Message]:
        return [m.message for m in self.messages(session_id)]

    def events(self, session_id: str, *, start: int = 0) -> list[Event]:
        """The session's stored events in order, from the ``start``-th on."""
        rows = self._read(
            "SELECT seq, json FROM events WHERE session_id = ? AND seq >= ? ORDER BY seq",
            (session_id, start),
        )
        parse = EVENT_ADAPTER.validate_json
        return [damage.parse_stored(session_id, f"event {r[0]}", r["json"], parse) for r in rows]

    def lease(self, session_id: str) -> Lease | None:
        """Who is running the session now (None: nobody holds its lease)."""
        return self._retry(lambda: read_lease(self._conn, session_id))

    def todos(self, session_id: str) -> list[dict[str, Any]]:
        rows = self._read(
            "SELECT content, status, active_form FROM todos WHERE session_id = ? ORDER BY position",
            (session_id,),
        )
        return [
            {"content": r["content"], "status": r["status"], "activeForm": r["active_form"]}
            for r in rows
        ]

    def usage(self, session_id: str) -> list[UsageRow]:
        rows = self._read(
            "SELECT turn, model, input_tokens, output_tokens FROM usage WHERE session_id = ?"
            " ORDER BY rowid",
            (session_id,),
        )
        return [
            UsageRow(r["turn"], r["model"], Usage(input_tokens=r[2], output_tokens=r[3]))
            for r in rows
        ]

    def total_usage(self, session_id: str) -> Usage:
        return sum((row.usage for row in self.usage(session_id)), Usage())

    # defined last: inside the class body the name `list` would shadow the builtin
    def list(self, *, limit: int = 50, status: str | None = None) -> list[SessionRecord]:
        """Most recently updated first."""
        where, params = ("WHERE s.status = ?", [status]) if status else ("", [])
        rows = self._read(
            f"{_SELECT_SESSIONS} {where} ORDER BY s.updated DESC LIMIT ?", (*params, limit)
        )
        return [record_from_row(r) for r in rows]


# ---- helpers ---------------------------------------------------------------------

_SELECT_SESSIONS = (
    "SELECT s.*, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS message_count"
    " FROM sessions s"
)


def _is_busy(e: sqlite3.OperationalError) -> bool:
    text = str(e).lower()
    return "locked" in text or "busy" in text
