"""The SQLite session store: migrations, exact reload, atomic turns, concurrency."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from skilldeck.agent.events import DoneEvent, TextEvent, ToolCallEvent
from skilldeck.agent.store import SessionStore, TurnWrite, migrations
from skilldeck.errors import SessionError, SessionNotFoundError
from skilldeck.llm.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)


def sample_messages() -> list[Message]:
    return [
        SystemMessage(content="sys ✓ unicode"),
        UserMessage(content="hint", meta="skill-hint"),
        UserMessage(content="do it"),
        AssistantMessage(
            text="calling",
            tool_calls=[ToolCall(id="c1", name="Write", input={"a": [1, {"b": None}], "c": 1.5})],
            usage=Usage(input_tokens=10, output_tokens=3),
            model="scripted:x",
            stop_reason="tool_use",
        ),
        ToolResultMessage(tool_call_id="c1", name="Write", content="ok", is_error=True),
    ]


def test_migrations_are_applied_once_and_recorded(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    SessionStore(db).close()
    SessionStore(db).close()
    conn = sqlite3.connect(db)
    names = [r[0] for r in conn.execute("SELECT name FROM migrations ORDER BY rowid")]
    journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    conn.close()
    assert names == [m.name for m in migrations.MIGRATIONS]
    assert names[0] == "m001_initial"
    assert journal == "wal"


def test_a_new_migration_is_applied_to_an_existing_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "s.db"
    with SessionStore(db) as store:
        store.create(model="m", agent="main", cwd=tmp_path, task="old")

    def m999_add_column(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE sessions ADD COLUMN extra TEXT")

    monkeypatch.setattr(
        migrations,
        "MIGRATIONS",
        [*migrations.MIGRATIONS, migrations.Migration("m999_add_column", m999_add_column)],
    )
    with SessionStore(db) as store:
        (record,) = store.list()
        assert record.task == "old"  # data survives the upgrade
    conn = sqlite3.connect(db)
    cols = [r[1] for r in conn.execute("PRAGMA table_info(sessions)")]
    conn.close()
    assert "extra" in cols


def test_messages_reload_exactly(tmp_path: Path) -> None:
    msgs = sample_messages()
    with SessionStore(tmp_path / "s.db") as store:
        rec = store.create(
            model="m", agent="main", cwd=tmp_path, task="t", messages=[(m, None) for m in msgs[:3]]
        )
        store.commit(rec.id, TurnWrite(messages=[(msgs[3], None), (msgs[4], "FULL OUTPUT")]))
    with SessionStore(tmp_path / "s.db") as store:
        loaded = store.messages(rec.id)
    assert [m.message for m in loaded] == msgs
    assert [m.seq for m in loaded] == [0, 1, 2, 3, 4]
    assert loaded[4].full_content == "FULL OUTPUT" and loaded[3].full_content is None


def test_a_turn_is_one_transaction(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        rec = store.create(model="m", agent="main", cwd=tmp_path, task="t")
        with pytest.raises(SessionError, match="Unknown session status"):
            store.commit(
                rec.id,
                TurnWrite(
                    messages=[(UserMessage(content="lost"), None)],
                    events=[TextEvent(text="lost")],
                    status="bogus",
                ),
            )
        assert store.load_messages(rec.id) == []
        assert store.events(rec.id) == []
        assert store.get(rec.id).status == "running"


def test_events_usage_todos_pending_state_metadata(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        rec = store.create(model="m", agent="main", cwd=tmp_path, task="t", metadata={"a": 1})
        todo = {"content": "x", "status": "pending", "activeForm": "doing x"}
        store.commit(
            rec.id,
            TurnWrite(
                events=[ToolCallEvent(id="c", name="Echo", input={"t": 1})],
                usage=(1, "m", Usage(input_tokens=5, output_tokens=2)),
                todos=[todo],
                set_pending=True,
                pending={"kind": "ask_user"},
                state={"bash_cwd": "/tmp"},
                metadata={"b": 2},
                status="paused",
            ),
        )
        store.commit(
            rec.id,
            TurnWrite(
                events=[DoneEvent(session_id=rec.id, status="completed")],
                usage=(2, "m", Usage(input_tokens=1, output_tokens=1)),
                status="completed",
                set_pending=True,
            ),
        )
        got = store.get(rec.id)
        assert (got.status, got.pending, got.state) == ("completed", None, {"bash_cwd": "/tmp"})
        assert got.metadata == {"a": 1, "b": 2}
        assert [e.type for e in store.events(rec.id)] == ["tool_call", "done"]
        assert store.todos(rec.id) == [todo]
        assert store.total_usage(rec.id) == Usage(input_tokens=6, output_tokens=3)
        assert [u.turn for u in store.usage(rec.id)] == [1, 2]


def test_ids_resolve_by_unique_prefix(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        store.create(model="m", agent="a", cwd=tmp_path, task="1", session_id="abc111")
        store.create(model="m", agent="a", cwd=tmp_path, task="2", session_id="abc222")
        assert store.resolve("abc1") == "abc111"
        assert store.get("abc2").task == "2"
        with pytest.raises(SessionError, match="ambiguous"):
            store.resolve("abc")
        with pytest.raises(SessionNotFoundError):
            store.resolve("zzz")
        with pytest.raises(SessionNotFoundError):
            store.resolve("")
        with pytest.raises(SessionNotFoundError):
            store.resolve("%")  # LIKE wildcards are escaped


def test_list_is_newest_first_and_filters_by_status(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        a = store.create(model="m", agent="a", cwd=tmp_path, task="a")
        b = store.create(model="m", agent="a", cwd=tmp_path, task="b")
        store.set_status(a.id, "completed")
        assert [r.id for r in store.list()] == [a.id, b.id]
        assert [r.id for r in store.list(status="running")] == [b.id]
        store.delete(a.id)
        assert [r.id for r in store.list()] == [b.id]


def test_threads_with_their_own_handles_do_not_lose_writes(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with SessionStore(db) as store:
        ids = [store.create(model="m", agent="a", cwd=tmp_path, task=str(i)).id for i in range(4)]
    errors: list[BaseException] = []

    def writer(sid: str) -> None:
        try:
            with SessionStore(db) as own:
                for n in range(40):
                    own.commit(sid, TurnWrite(messages=[(UserMessage(content=str(n)), None)]))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(sid,)) for sid in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with SessionStore(db) as store:
        for sid in ids:
            contents = [m.content for m in store.load_messages(sid)]  # type: ignore[union-attr]
            assert contents == [str(n) for n in range(40)]


_WRITER = """
import sys
from pathlib import Path
from skilldeck.agent.store import SessionStore, TurnWrite
from skilldeck.llm.messages import UserMessage
db, tag = Path(sys.argv[1]), sys.argv[2]
with SessionStore(db) as store:
    sid = store.create(model="m", agent="a", cwd=".", task=tag).id
    for n in range(30):
        store.commit(sid, TurnWrite(messages=[(UserMessage(content=f"{tag}-{n}"), None)]))
print(sid)
"""


def test_processes_share_one_database_without_lost_or_interleaved_messages(
    tmp_path: Path,
) -> None:
    db = tmp_path / "shared.db"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(db), f"p{i}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    outputs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    with SessionStore(db) as store:
        for i, (out, _) in enumerate(outputs):
            sid = out.strip()
            contents = [m.content for m in store.load_messages(sid)]  # type: ignore[union-attr]
            assert contents == [f"p{i}-{n}" for n in range(30)]


def test_unopenable_path_is_a_session_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(SessionError, match="Cannot open the session store"):
        SessionStore(blocker / "sessions.db")
