"""Per-run caps, each set through the config file and through the environment, each
stopping ``skilldeck run --json`` with a clear reason in the ``done`` event.

| cap                      | setting                        | done.status / reason          |
|--------------------------|--------------------------------|-------------------------------|
| turns                    | ``agent.max_turns``            | ``max_turns`` "turn limit (N)" |
| tool calls               | ``agent.max_tool_calls``       | ``limit`` "max_tool_calls: …" |
| tokens                   | ``agent.max_tokens``           | ``limit`` "max_tokens: …"     |
| wall time                | ``agent.max_wall_seconds``     | ``limit`` "max_wall_seconds: …" |
| tool output              | ``agent.tool_output_limit``    | cut with a note; full text kept |
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
import stress_helpers as H

from skilldeck.agent.context import truncate_output


def _turns(n: int, **call: Any) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [
        {"text": f"turn {i}", "tool_calls": [{"id": f"c{i}-{j}", **call} for j in range(2)],
         "usage": {"input_tokens": 1000, "output_tokens": 100}}
        for i in range(n)
    ]  # fmt: skip
    return [*lines, {"text": "finished"}]


TODO = {"name": "TodoWrite", "input": {"todos": [{"content": "x", "status": "pending",
                                                   "activeForm": "x"}]}}  # fmt: skip
SLEEP = {"name": "Bash", "input": {"command": "sleep 0.6"}}
#: cap → (setting, value, script, expected status, reason prefix)
CAPS: dict[str, tuple[str, Any, list[dict[str, Any]], str, str]] = {
    "turns": ("max_turns", 3, _turns(10, **TODO), "max_turns", "reached the turn limit (3)"),
    "tool_calls": ("max_tool_calls", 5, _turns(10, **TODO), "limit", "max_tool_calls: made 5 of 5"),
    "tokens": ("max_tokens", 2500, _turns(10, **TODO), "limit", "max_tokens: used 3300 of 2500"),
    "wall": ("max_wall_seconds", 1.5, _turns(20, **SLEEP), "limit", "max_wall_seconds: ran"),
}


def _run(tmp_path: Path, script: list[dict[str, Any]], source: str, key: str, value: Any,
         ) -> tuple[Any, dict[str, Any], Path]:  # fmt: skip
    home = tmp_path / "home" / ".skilldeck"
    home.mkdir(parents=True)
    extra: dict[str, str] = {}
    if source == "env":
        extra[f"SKILLDECK_AGENT__{key.upper()}"] = str(value)
    else:
        (home / "config.toml").write_text(f"[agent]\n{key} = {value}\n", encoding="utf-8")
    empty = tmp_path / "no-skills"
    empty.mkdir()
    model = H.write_script(tmp_path / "limits.jsonl", script)
    result = H.run_cli(
        "run", "hit the cap", "--model", f"scripted:{model}", "--json", "--root", str(empty),
        "--no-defaults", cwd=tmp_path, env=H.cli_env(home, **extra),
    )  # fmt: skip
    return result, H.done_event(result.stdout), home / "sessions.db"


@pytest.mark.parametrize("source", ["config", "env"])
@pytest.mark.parametrize("cap", sorted(CAPS))
def test_each_cap_stops_the_run_with_its_reason(tmp_path: Path, cap: str, source: str) -> None:
    key, value, script, status, reason = CAPS[cap]
    started = time.monotonic()
    result, done, db = _run(tmp_path, script, source, key, value)
    assert done["status"] == status, (done, result.stderr[-800:])
    assert str(done["reason"]).startswith(reason), done["reason"]
    assert result.returncode == 3, result.returncode
    sid = done["session_id"]
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT status FROM sessions WHERE id = ?", (sid,)).fetchone()
        ran = conn.execute(
            "SELECT json FROM events WHERE session_id = ? AND type = 'tool_result'", (sid,)
        ).fetchall()
    assert row[0] == status
    executed = [r for r in ran if "Not run: this run reached its limit" not in r[0]]
    if cap == "turns":
        assert len(H.stored_messages(db, sid)) == 2 + 3 * 3  # system, task, 3 × (turn + 2)
    if cap == "tool_calls":
        assert len(executed) == 5
    if cap == "wall":
        assert time.monotonic() - started < 60
        assert len(executed) < 2 * 20
    H.add(limit_runs=1)


@pytest.mark.parametrize("source", ["config", "env"])
def test_tool_output_limit_cuts_with_a_note_and_keeps_the_full_text(
    tmp_path: Path, source: str
) -> None:
    """Every tool result the model sees fits the limit and says it was cut: Read pages
    (``offset=``), Bash caps its capture, and the loop cuts what is still over the
    limit (Grep here), keeping the full text in ``messages.full_content``."""
    limit = 2000
    (tmp_path / "big.txt").write_text(("x" * 100 + "\n") * 600, encoding="utf-8")
    bash = "python3 -c \"print('z' * 50000)\""
    script = [
        {"tool_calls": [
            {"id": "read", "name": "Read", "input": {"file_path": "big.txt"}},
            {"id": "bash", "name": "Bash", "input": {"command": bash}},
            {"id": "grep", "name": "Grep", "input": {"pattern": "x+", "output_mode": "content"}},
        ]},
        {"text": "done"},
    ]  # fmt: skip
    result, done, db = _run(tmp_path, script, source, "tool_output_limit", limit)
    assert done["status"] == "completed", done
    shown = {e["id"]: e["content"] for e in H.events(result.stdout) if e["type"] == "tool_result"}
    assert sorted(shown) == ["bash", "grep", "read"]
    assert all(len(text) < limit + 400 for text in shown.values()), {
        k: len(v) for k, v in shown.items()
    }
    assert "Use offset=" in shown["read"]
    assert "output truncated: 50,001 bytes in total" in shown["bash"]
    assert "[... output truncated:" in shown["grep"]
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT json, full_content FROM messages WHERE session_id = ? AND role = 'tool'",
            (done["session_id"],),
        ).fetchall()
    by_id = {H.MESSAGE_ADAPTER.validate_json(j).tool_call_id: full for j, full in rows}
    assert by_id["grep"] is not None and by_id["grep"].count("x" * 100) > 100
    assert truncate_output(by_id["grep"], limit)[0] == shown["grep"]
    H.add(limit_runs=1)


def test_max_turns_flag_overrides_config(tmp_path: Path) -> None:
    home = tmp_path / "home" / ".skilldeck"
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[agent]\nmax_turns = 8\n", encoding="utf-8")
    empty = tmp_path / "no-skills"
    empty.mkdir()
    model = H.write_script(tmp_path / "t.jsonl", _turns(10, **TODO))
    result = H.run_cli(
        "run", "cap", "--model", f"scripted:{model}", "--json", "--root", str(empty),
        "--no-defaults", "--max-turns", "2", cwd=tmp_path, env=H.cli_env(home),
    )  # fmt: skip
    done = H.done_event(result.stdout)
    assert (done["status"], done["reason"]) == ("max_turns", "reached the turn limit (2)")
    H.add(limit_runs=1)
