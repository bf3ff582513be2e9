"""A damaged session store: one SessionError saying what and how to fix, never a
sqlite3, json or pydantic traceback; a damaged row is listed, marked, and deletable,
and the other sessions keep working."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from skilldeck.agent.events import TextEvent
from skilldeck.agent.store import SessionStore, TurnWrite
from skilldeck.errors import SessionError
from skilldeck.llm.messages import AssistantMessage, UserMessage


def _store_with_sessions(db: Path, count: int) -> list[str]:
    with SessionStore(db) as store:
        ids = []
        for i in range(count):
            rec = store.create(
                model="scripted:x",
                agent="main",
                cwd="/tmp",
                task=f"task {i}",
                messages=[(UserMessage(content=f"hi {i}"), None)],
            )
            store.commit(
                rec.id,
                TurnWrite(
                    messages=[(AssistantMessage(text="done"), None)],
                    events=[TextEvent(session_id=rec.id, text="done")],
                    status="completed",
                ),
            )
            ids.append(rec.id)
    return ids


def _sql(db: Path, sql: str, *params: object) -> None:
    conn = sqlite3.connect(db)
    conn.execute(sql, params)
    conn.commit()
    conn.close()


# ---- the whole file ------------------------------------------------------------------


def test_a_file_of_random_bytes_is_one_session_error_with_the_move_aside(
    tmp_path: Path,
) -> None:
    db = tmp_path / "sessions.db"
    db.write_bytes(os.urandom(4096))
    with pytest.raises(SessionError) as caught:
        SessionStore(db)
    text = str(caught.value)
    assert str(db) in text and "is damaged" in text and "file is not a database" in text
    assert f"mv {db} {db}.damaged" in text and "new, empty store" in text
    assert "\n" not in text


def test_a_truncated_store_is_one_session_error(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    _store_with_sessions(db, 3)
    assert db.stat().st_size > 5000
    with db.open("r+b") as f:
        f.truncate(5000)
    malformed = r"is damaged \(database disk image is malformed\)"
    with pytest.raises(SessionError, match=malformed), SessionStore(db) as store:
        store.list()


def test_moved_aside_a_new_store_starts_empty(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    db.write_bytes(os.urandom(4096))
    with pytest.raises(SessionError):
        SessionStore(db)
    db.rename(db.with_name("sessions.db.damaged"))
    with SessionStore(db) as store:
        assert store.list() == []


def test_another_programs_sqlite_file_says_so_with_the_fix(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    _sql(db, "CREATE TABLE sessions (a TEXT)")
    with pytest.raises(SessionError) as caught:
        SessionStore(db)
    text = str(caught.value)
    assert "not a skilldeck session store (table sessions already exists)" in text
    assert f"mv {db} {db}.damaged" in text


# ---- one session's row ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("pending", "[1,2", "pending is not valid JSON"),
        ("metadata", "not json", "metadata is not valid JSON"),
        ("state", "{", "state is not valid JSON"),
        ("launch", "[1]", "launch is JSON list, not an object"),
    ],
)
def test_a_bad_json_column_is_listed_marked_and_refused_by_get(
    tmp_path: Path, column: str, value: str, reason: str
) -> None:
    db = tmp_path / "sessions.db"
    bad, good = _store_with_sessions(db, 2)
    _sql(db, f"UPDATE sessions SET {column} = ? WHERE id = ?", value, bad)
    with SessionStore(db) as store:
        listed = {r.id: r for r in store.list()}
        assert set(listed) == {bad, good}
        assert listed[good].damage == []
        assert listed[bad].damage and reason in listed[bad].damage[0]
        assert listed[bad].to_dict()["damage"] == listed[bad].damage
        assert listed[bad].task == "task 0"  # the rest of the row is read
        with pytest.raises(SessionError) as caught:
            store.get(bad[:6])
        assert str(caught.value).startswith(f"Session {bad} is damaged ({reason}")
        assert f"delete it with `skilldeck sessions delete {bad}`" in str(caught.value)
        assert store.get(good).status == "completed"
        store.delete(bad)
        assert [r.id for r in store.list()] == [good]


def test_a_turn_on_a_session_whose_metadata_is_damaged_is_a_session_error(
    tmp_path: Path,
) -> None:
    db = tmp_path / "sessions.db"
    (sid,) = _store_with_sessions(db, 1)
    _sql(db, "UPDATE sessions SET metadata = 'not json' WHERE id = ?", sid)
    with SessionStore(db) as store, pytest.raises(SessionError, match="is damaged"):
        store.commit(sid, TurnWrite(status="running", metadata={"pid": 1}))


def test_a_broken_message_row_names_the_session_and_the_message(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    bad, good = _store_with_sessions(db, 2)
    _sql(db, "UPDATE messages SET json = '{broken' WHERE session_id = ? AND seq = 1", bad)
    with SessionStore(db) as store:
        assert {r.id for r in store.list()} == {bad, good}
        for read in (store.messages, store.load_messages):
            with pytest.raises(SessionError) as caught:
                read(bad)
            text = str(caught.value)
            assert text.startswith(f"Session {bad} is damaged (message 1 does not read back: ")
            assert "Invalid JSON" in text and "\n" not in text
            assert f"`skilldeck sessions delete {bad}`" in text
        assert len(store.messages(good)) == 2


def test_a_message_of_another_shape_is_damage_too(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    (sid,) = _store_with_sessions(db, 1)
    _sql(db, """UPDATE messages SET json = '{"role": "robot"}' WHERE session_id = ?""", sid)
    with SessionStore(db) as store, pytest.raises(SessionError, match="message 0 does not"):
        store.messages(sid)


def test_a_broken_event_row_is_a_session_error(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    (sid,) = _store_with_sessions(db, 1)
    _sql(db, "UPDATE events SET json = 'nope' WHERE session_id = ?", sid)
    with SessionStore(db) as store, pytest.raises(SessionError, match="event 0 does not"):
        store.events(sid)


def test_our_own_store_failing_to_upgrade_is_not_called_foreign(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skilldeck.agent.store import migrations

    db = tmp_path / "sessions.db"
    _store_with_sessions(db, 1)

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE no_such_table ADD COLUMN x TEXT")

    bad = migrations.Migration("m999_broken", broken)
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, bad])
    monkeypatch.setattr("skilldeck.agent.store.damage.MIGRATIONS", migrations.MIGRATIONS)
    with pytest.raises(SessionError, match="could not be upgraded") as caught:
        SessionStore(db)
    assert "skilldeck bug" in str(caught.value) and "not a skilldeck session store" not in str(
        caught.value
    )
