"""Helpers for the hardening suite: budget, figures, the CLI, scripts, store checks."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skilldeck.llm.messages import (
    MESSAGE_ADAPTER,
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)

REPO = Path(__file__).resolve().parents[2]
BUDGET = os.environ.get("SKILLDECK_STRESS_BUDGET", "short").strip().lower() or "short"
FULL = BUDGET == "full"
#: what each test tried and what happened; summed into bench/results/hardening.json
FIGURES: dict[str, Any] = {}
_LOCK = threading.Lock()


def scale(short: int, full: int) -> int:
    """The trial count for the current budget."""
    return full if FULL else short


def add(**counts: int) -> None:
    with _LOCK:
        for key, value in counts.items():
            FIGURES[key] = int(FIGURES.get(key, 0)) + value


def summary() -> dict[str, Any]:
    """The figures as reported: what was tried, what survived, and the zeros that matter."""
    f = {k: v for k, v in FIGURES.items() if isinstance(v, int)}
    return {
        "budget": FIGURES.get("budget", BUDGET),
        "duration_seconds": round(time.time() - float(FIGURES.get("started", time.time())), 1),
        "figures": dict(sorted(f.items())),
        "zero": {
            "escapes": f.get("escapes", 0),
            "lost_messages": f.get("lost_messages", 0),
            "corrupt_stores": f.get("corrupt_stores", 0),
            "partial_files": f.get("partial_files", 0),
            "database_locked": f.get("database_locked", 0),
            "unexpected_exceptions": f.get("unexpected_exceptions", 0),
        },
    }


# ---- the CLI -----------------------------------------------------------------------------


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("SKILLDECK_") and not k.endswith("_API_KEY")
    }
    env.update(
        {
            "SKILLDECK_HOME": str(home),
            "HOME": str(home.parent),
            "PYTHONIOENCODING": "utf-8",
            "PYTHONUNBUFFERED": "1",
            "COLUMNS": "120",
            # scripted sessions act without a human: approvals would pause them
            "SKILLDECK_PERMISSIONS__MODE": "bypassPermissions",
            **extra,
        }
    )
    return env


def cli_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "skilldeck.cli.main", *args]


def run_cli(
    *args: str, cwd: Path, env: dict[str, str], timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_argv(*args),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
    )


def events(stdout: str) -> list[dict[str, Any]]:
    out = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def done_event(stdout: str) -> dict[str, Any]:
    found = [e for e in events(stdout) if e["type"] == "done" and not e.get("is_sub_agent")]
    assert found, f"no done event in:\n{stdout[-2000:]}"
    return found[-1]


def write_script(path: Path, lines: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


# ---- scripts -----------------------------------------------------------------------------


def work_script(tag: str, turns: int, *, bash_every: int = 0) -> list[dict[str, Any]]:
    """A session of ``turns`` tool turns and a final answer, every id and text tagged.

    Each turn updates the todo list, writes ``out/<tag>-<i>.txt`` and reads the previous
    file, so the store, the tool state and the workspace all change every turn.
    """
    lines: list[dict[str, Any]] = []
    for i in range(turns):
        todo = {"content": f"{tag} step {i}", "status": "in_progress", "activeForm": f"{tag} {i}"}
        calls = [
            _call(f"{tag}-t{i}", "TodoWrite", todos=[todo]),
            _call(f"{tag}-w{i}", "Write", file_path=f"out/{tag}-{i}.txt", content=f"{tag} {i}\n"),
        ]
        if i:
            calls.append(_call(f"{tag}-r{i}", "Read", file_path=f"out/{tag}-{i - 1}.txt"))
        if bash_every and i % bash_every == 0:
            calls.append(_call(f"{tag}-b{i}", "Bash", command=f"echo {tag}-{i}"))
        lines.append({"text": f"{tag} turn {i}", "tool_calls": calls})
    lines.append({"text": f"{tag} finished"})
    return lines


def _call(call_id: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "input": tool_input}


# ---- the session store -------------------------------------------------------------------


def integrity(db: Path) -> str:
    """``PRAGMA integrity_check`` through a fresh connection (recovers the WAL)."""
    conn = sqlite3.connect(db, timeout=30)
    try:
        rows = conn.execute("PRAGMA integrity_check").fetchall()
        return "; ".join(str(r[0]) for r in rows)
    finally:
        conn.close()


def find_session(db: Path, task: str) -> tuple[str, str] | None:
    """(id, status) of the session whose task is ``task``."""
    if not db.exists():
        return None
    conn = sqlite3.connect(db, timeout=30)
    try:
        try:
            row = conn.execute("SELECT id, status FROM sessions WHERE task = ?", (task,)).fetchone()
        except sqlite3.OperationalError:  # killed before the first migration committed
            return None
        return (row[0], row[1]) if row else None
    finally:
        conn.close()


def stored_messages(db: Path, session_id: str) -> list[Message]:
    conn = sqlite3.connect(db, timeout=30)
    try:
        rows = conn.execute(
            "SELECT seq, json FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
        ).fetchall()
    finally:
        conn.close()
    seqs = [r[0] for r in rows]
    assert seqs == list(range(len(rows))), f"gaps or duplicates in message seq: {seqs}"
    return [MESSAGE_ADAPTER.validate_json(r[1]) for r in rows]


def check_prefix(messages: Sequence[Message], script: Sequence[dict[str, Any]], task: str) -> int:
    """Assert ``messages`` is a turn-complete prefix of what ``script`` implies.

    System prompt, the task, then for each committed turn the scripted assistant message
    followed by one result per call, in call order. Returns the committed turns.
    """
    assert messages and isinstance(messages[0], SystemMessage), "no system prompt"
    users = [m for m in messages[1:] if isinstance(m, UserMessage) and m.meta is None]
    assert [u.content for u in users] == [task], f"user messages: {[u.content for u in users]}"
    turns = [m for m in messages if isinstance(m, AssistantMessage)]
    assert len(turns) <= len(script), "more assistant turns than the script has"
    pos = next(
        (i for i, m in enumerate(messages) if isinstance(m, AssistantMessage | ToolResultMessage)),
        len(messages),
    )
    assert all(isinstance(m, SystemMessage | UserMessage) for m in messages[:pos])
    for n, turn in enumerate(turns):
        line = script[n]
        assert messages[pos] is turn, f"turn {n} is not where expected"
        assert turn.text == line.get("text", ""), f"turn {n}: {turn.text!r} != {line.get('text')!r}"
        ids = [c["id"] for c in line.get("tool_calls", [])]
        assert [c.id for c in turn.tool_calls] == ids, f"turn {n}: calls {turn.tool_calls}"
        results = messages[pos + 1 : pos + 1 + len(ids)]
        got = [r.tool_call_id for r in results if isinstance(r, ToolResultMessage)]
        assert got == ids, f"turn {n}: results {got} for calls {ids}"
        pos += 1 + len(ids)
    assert pos == len(messages), f"{len(messages) - pos} stray messages after the last turn"
    return len(turns)


def check_complete(db: Path, session_id: str, script: Sequence[dict[str, Any]], task: str) -> None:
    messages = stored_messages(db, session_id)
    assert check_prefix(messages, script, task) == len(script)
