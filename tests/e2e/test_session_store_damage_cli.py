"""The real CLI on a damaged ``sessions.db``: one ``error:`` line that names the file
(or the session) and the fix, exit 1, no traceback; the other sessions keep working."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from cli_helpers import skilldeck, tool_call, write_script


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def _run(tmp_path: Path, task: str = "x") -> subprocess.CompletedProcess[str]:
    script = write_script(tmp_path / "b.jsonl", [{"text": "done"}])
    return skilldeck("run", task, "-m", f"scripted:{script}", cwd=tmp_path)


def _sql(db: Path, sql: str, *params: object) -> None:
    conn = sqlite3.connect(db)
    conn.execute(sql, params)
    conn.commit()
    conn.close()


def _ids(tmp_path: Path) -> list[str]:
    listed = skilldeck("sessions", "list", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    return [s["id"] for s in json.loads(listed.stdout)]


@pytest.mark.parametrize("damage", ["random", "truncated"])
def test_a_damaged_store_is_one_line_for_run_resume_and_list(
    tmp_path: Path, skilldeck_home: Path, damage: str
) -> None:
    for task in ("a", "b", "c"):  # enough rows that 5000 bytes cuts the file short
        assert _run(tmp_path, task).returncode == 0
    db = skilldeck_home / "sessions.db"
    if damage == "random":
        db.write_bytes(os.urandom(4096))
    else:
        with db.open("r+b") as f:
            f.truncate(5000)
    for args in (("sessions", "list"), ("resume", "abc"), ("sessions", "show", "abc")):
        line = _one_error_line(skilldeck(*args, cwd=tmp_path))
        assert f"Session store {db} is damaged" in line
        assert f"mv {db} {db}.damaged" in line
    line = _one_error_line(_run(tmp_path))
    assert "is damaged" in line
    db.rename(db.with_name("sessions.db.damaged"))
    assert _run(tmp_path).returncode == 0  # a new store
    assert len(_ids(tmp_path)) == 1


def test_another_programs_database_says_how_to_fix_it(tmp_path: Path, skilldeck_home: Path) -> None:
    db = skilldeck_home / "sessions.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    _sql(db, "CREATE TABLE sessions (a TEXT)")
    line = _one_error_line(skilldeck("sessions", "list", cwd=tmp_path))
    assert "not a skilldeck session store (table sessions already exists)" in line
    assert f"mv {db} {db}.damaged" in line


def test_damaged_rows_are_listed_refused_by_name_and_deletable(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    for task in ("pending", "metadata", "message", "fine"):
        assert _run(tmp_path, task).returncode == 0
    fine, message, metadata, pending = _ids(tmp_path)  # newest first
    db = skilldeck_home / "sessions.db"
    _sql(db, "UPDATE sessions SET pending = '[1,2' WHERE id = ?", pending)
    _sql(db, "UPDATE sessions SET metadata = 'not json' WHERE id = ?", metadata)
    _sql(db, "UPDATE messages SET json = '{broken' WHERE session_id = ? AND seq = 1", message)

    listed = skilldeck("sessions", "list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line.split()[1] for line in listed.stdout.splitlines()[1:5]}
    assert rows == {
        fine: "completed",
        message: "completed",
        metadata: "damaged",
        pending: "damaged",
    }
    assert f"Session {pending} is damaged (pending is not valid JSON" in listed.stdout
    assert f"`skilldeck sessions delete {metadata}`" in listed.stdout
    as_json = {s["id"]: s for s in json.loads(_json_list(tmp_path))}
    assert as_json[pending]["pending"] is None and as_json[pending]["damage"]
    assert as_json[fine]["damage"] == []

    script = tmp_path / "b.jsonl"
    for sid, why in ((pending, "pending"), (metadata, "metadata"), (message, "message 1")):
        for args in (
            ("sessions", "show", sid),
            ("resume", sid),
            ("chat", "--session", sid, "-m", f"scripted:{script}"),
        ):
            line = _one_error_line(skilldeck(*args, cwd=tmp_path))
            assert line.startswith(f"error: Session {sid} is damaged ({why}"), line
            assert line.endswith(f"delete it with `skilldeck sessions delete {sid}`.")

    assert skilldeck("sessions", "show", fine, cwd=tmp_path).returncode == 0
    for sid in (pending, metadata, message):
        deleted = skilldeck("sessions", "delete", sid, cwd=tmp_path)
        assert deleted.returncode == 0, deleted.stderr
    assert _ids(tmp_path) == [fine]


def test_resuming_a_paused_session_with_a_broken_message_is_one_line(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    question = {
        "question": "Which?",
        "header": "Pick",
        "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}],
    }
    script = write_script(
        tmp_path / "ask.jsonl",
        [{"tool_calls": [tool_call("q1", "AskUserQuestion", questions=[question])]}],
    )
    first = skilldeck("run", "ask me", "-m", f"scripted:{script}", "--json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (sid,) = _ids(tmp_path)
    _sql(skilldeck_home / "sessions.db", "UPDATE messages SET json = 'x' WHERE session_id = ?", sid)
    line = _one_error_line(skilldeck("resume", sid, "--answer", "A", cwd=tmp_path))
    assert line.startswith(f"error: Session {sid} is damaged (message 0 does not read back")


def _json_list(tmp_path: Path) -> str:
    listed = skilldeck("sessions", "list", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    return listed.stdout
