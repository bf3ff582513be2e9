"""Concurrency: many sessions against one ``$SKILLDECK_HOME``, and Ctrl-C with a
background sub-agent.

* 50 scripted sessions run at once in one process (an anyio task group; half share one
  ``SessionStore``, half open their own connection to the same file);
* 8 ``skilldeck run`` processes run at once, each doing several sessions in a row;

and every session's stored messages are exactly what its script implies (no lost,
duplicated or foreign messages), with no "database is locked" failure anywhere.
SIGINT to a run whose background sub-agent is still working cancels both cleanly:
exit 130, both sessions recorded ``cancelled``, no process left behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import stress_helpers as H

from skilldeck.agent.builder import build_agent
from skilldeck.agent.recorder import RunResult
from skilldeck.agent.store import SessionStore
from skilldeck.config import load_settings
from skilldeck.llm.messages import ToolResultMessage
from skilldeck.llm.scripted import ScriptedModel

SESSIONS = 50
TURNS = H.scale(5, 10)
PROCESSES = 8
PER_PROCESS = H.scale(2, 7)


def _no_foreign_content(db: Path, sid: str, tag: str, tags: list[str]) -> None:
    """Tool results of this session mention only this session's files."""
    for m in H.stored_messages(db, sid):
        if isinstance(m, ToolResultMessage):
            others = [t for t in tags if t != tag and f"{t} " in m.content]
            assert not others, f"session {tag} saw {others}: {m.content[:200]!r}"


def test_fifty_sessions_in_one_process(tmp_path: Path) -> None:
    home = tmp_path / "home"
    empty = tmp_path / "no-skills"
    empty.mkdir()
    overrides = {
        "permissions": {"mode": "bypassPermissions"},
        "skills": {"hints": {"enabled": False}},
    }
    settings = load_settings(workspace=tmp_path, home=home, **overrides)
    tags = [f"s{i:02d}" for i in range(SESSIONS)]
    scripts = {tag: H.work_script(tag, TURNS) for tag in tags}
    results: dict[str, RunResult] = {}
    errors: list[BaseException] = []
    shared = SessionStore.open(settings)

    async def one(index: int, tag: str) -> None:
        ws = tmp_path / tag
        ws.mkdir()
        model = ScriptedModel.from_lines(scripts[tag], name=f"scripted:{tag}")
        store = shared if index % 2 == 0 else None  # None: the agent opens its own
        try:
            with build_agent(
                settings, model=model, cwd=ws, roots=[empty], no_defaults=True,
                session_store=store, json_events=True,
            ) as agent:  # fmt: skip
                results[tag] = await agent.run(f"task {tag}")
        except BaseException as e:  # collected, so one failure does not hide the others
            errors.append(e)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for index, tag in enumerate(tags):
                tg.start_soon(one, index, tag)

    try:
        anyio.run(main)
    finally:
        shared.close()
    locked = [e for e in errors if "locked" in str(e).lower()]
    H.add(database_locked=len(locked), unexpected_exceptions=len(errors))
    assert not errors, errors[:3]
    db = settings.sessions_db
    assert H.integrity(db) == "ok"
    completed = 0
    for tag in tags:
        result = results[tag]
        assert result.status == "completed", (tag, result.status, result.reason)
        H.check_complete(db, result.session_id, scripts[tag], f"task {tag}")
        _no_foreign_content(db, result.session_id, tag, tags)
        assert (tmp_path / tag / "out" / f"{tag}-{TURNS - 1}.txt").read_text(
            encoding="utf-8"
        ) == f"{tag} {TURNS - 1}\n"
        completed += 1
    H.add(concurrent_sessions_in_process=completed)


def test_eight_processes_share_one_home(tmp_path: Path) -> None:
    home = tmp_path / "home" / ".skilldeck"
    env = H.cli_env(home, SKILLDECK_SKILLS__HINTS__ENABLED="false")
    empty = tmp_path / "no-skills"
    empty.mkdir()
    plan = {lane: [f"p{lane}k{k}" for k in range(PER_PROCESS)] for lane in range(PROCESSES)}
    scripts = {tag: H.work_script(tag, TURNS) for tags in plan.values() for tag in tags}
    outcomes: dict[str, subprocess.CompletedProcess[str]] = {}
    lock = threading.Lock()

    def lane(tags: list[str]) -> None:
        for tag in tags:
            ws = tmp_path / tag
            ws.mkdir()
            model = H.write_script(tmp_path / f"{tag}.jsonl", scripts[tag])
            result = H.run_cli(
                "run", f"task {tag}", "--model", f"scripted:{model}", "--json",
                "--root", str(empty), "--no-defaults", cwd=ws, env=env, timeout=600,
            )  # fmt: skip
            with lock:
                outcomes[tag] = result

    threads = [threading.Thread(target=lane, args=(tags,)) for tags in plan.values()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    locked = [t for t, r in outcomes.items() if "locked" in (r.stderr + r.stdout).lower()]
    H.add(database_locked=len(locked))
    assert not locked, {t: outcomes[t].stderr[-500:] for t in locked}
    db = home / "sessions.db"
    assert H.integrity(db) == "ok"
    tags = list(scripts)
    completed = 0
    for tag in tags:
        result = outcomes[tag]
        done = H.done_event(result.stdout)
        assert result.returncode == 0 and done["status"] == "completed", (
            tag, result.returncode, done, result.stderr[-800:],
        )  # fmt: skip
        H.check_complete(db, done["session_id"], scripts[tag], f"task {tag}")
        _no_foreign_content(db, done["session_id"], tag, tags)
        completed += 1
    H.add(concurrent_sessions_multi_process=completed, concurrent_processes=PROCESSES)


# ---- Ctrl-C with a background sub-agent ------------------------------------------------

BG_SCRIPT: list[dict[str, Any]] = [
    {"for": "BGTASK", "tool_calls": [{"id": "c1", "name": "Bash",
                                      "input": {"command": "sleep MARK; echo bg"}}]},
    {"for": "BGTASK", "text": "background done"},
    {"tool_calls": [{"id": "m1", "name": "Task", "input": {
        "description": "background work", "prompt": "BGTASK sleep a while",
        "run_in_background": True}}]},
    {"tool_calls": [{"id": "m2", "name": "Bash",
                     "input": {"command": "sleep MARK; echo main"}}]},
    {"text": "main done"},
]  # fmt: skip


def _processes_with(marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    pids.append(int(entry))
        except OSError:
            continue
    return pids


@pytest.mark.parametrize("trial", range(H.scale(1, 3)))
def test_ctrl_c_cancels_background_subagents_and_records_it(tmp_path: Path, trial: int) -> None:
    home = tmp_path / "home" / ".skilldeck"
    # a unique sleep length: it is in the shell's command line *and* in sleep's own argv,
    # so a leftover of either is found
    marker = f"{100 + os.getpid() % 50}.{time.monotonic_ns() % 10**9:09d}"
    script = [
        {**line, "tool_calls": [
            {**c, "input": {"command": c["input"]["command"].replace("MARK", marker)}}
            if c["name"] == "Bash" else c for c in line.get("tool_calls", [])
        ]} if "tool_calls" in line else line
        for line in BG_SCRIPT
    ]  # fmt: skip
    model = H.write_script(tmp_path / "bg.jsonl", script)
    empty = tmp_path / "no-skills"
    empty.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    proc = subprocess.Popen(
        H.cli_argv("run", "main task", "--model", f"scripted:{model}", "--json",
                   "--root", str(empty), "--no-defaults"),
        cwd=ws, env=H.cli_env(home), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, encoding="utf-8",
    )  # fmt: skip
    watchdog = threading.Timer(90, proc.kill)
    watchdog.start()
    seen: list[dict[str, Any]] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            seen.extend(H.events(line))
            if any(e["type"] == "tool_call" and e.get("id") == "m2" for e in seen):
                break
        deadline = time.monotonic() + 30  # both sleeps running: the child's and the parent's
        while time.monotonic() < deadline and len(_processes_with(marker)) < 2:
            time.sleep(0.1)
        assert len(_processes_with(marker)) >= 2, "the background Bash never started"
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        stopped_in = time.monotonic() - started
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    seen.extend(H.events(out))
    assert proc.returncode == 130, (proc.returncode, err[-1500:])
    assert stopped_in < 20, f"Ctrl-C took {stopped_in:.1f}s"
    assert any(e["type"] == "subagent_start" and e.get("background") for e in seen)
    db = home / "sessions.db"
    assert H.integrity(db) == "ok"
    main = H.find_session(db, "main task")
    child = H.find_session(db, "BGTASK sleep a while")
    assert main is not None and main[1] == "cancelled", main
    assert child is not None and child[1] == "cancelled", child
    deadline = time.monotonic() + 10
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _processes_with(marker)
    for pid in left:  # clean up before failing
        os.kill(pid, signal.SIGKILL)
    assert not left, "processes survived Ctrl-C"
    H.add(ctrl_c_trials=1, ctrl_c_subagents_cancelled=1)
