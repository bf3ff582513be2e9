"""Crash safety: SIGKILL at random points never corrupts the store or loses a turn.

* ``skilldeck run --model scripted:... --json`` is killed at a random point of a long
  session (many turns, each with several tool calls). After every kill the SQLite
  store passes ``PRAGMA integrity_check``; the stored messages are a turn-complete
  prefix of the script (every tool call has its result); every turn the killed process
  had *reported* (its results or the next model call were printed, which happens only
  after the commit) is present; and ``skilldeck resume ID`` finishes the session.
* A process rewriting a large config or lock file is killed mid-write, repeatedly: the
  file is always the old or the new version, never a mix or a truncation.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import stress_helpers as H

from skilldeck.config import read_toml
from skilldeck.skills.packaging.lockfile import LockFile

TURNS = H.scale(10, 16)
TRIALS = H.scale(6, 60)
SEED = int(os.environ.get("SKILLDECK_STRESS_SEED", "0")) or random.randrange(1 << 30)


def _turn_of(call_id: str) -> int:
    """``crash-w7`` → 7."""
    return int(call_id.rsplit("-", 1)[1][1:])


def _reported_turns(lines: list[dict[str, Any]]) -> int:
    """Turns the killed process proved committed: a ``tool_result`` is printed only after
    its turn's transaction, and a ``model_call`` only after the previous turn's."""
    done = 0
    model_calls = 0
    for event in lines:
        if event["type"] == "tool_result":
            done = max(done, _turn_of(event["id"]) + 1)
        elif event["type"] == "model_call":
            model_calls += 1
    return max(done, model_calls - 1)


def _run_and_kill(
    argv: list[str], *, cwd: Path, env: dict[str, str], kill_after: int | None, delay: float
) -> tuple[list[dict[str, Any]], bool]:
    """Start the run; SIGKILL it after ``kill_after`` printed events (plus ``delay``),
    or after ``delay`` seconds when ``kill_after`` is 0. Returns (events seen, killed)."""
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True, encoding="utf-8",
    )  # fmt: skip
    watchdog = threading.Timer(120, proc.kill)
    watchdog.start()
    seen: list[dict[str, Any]] = []
    killed = False
    try:
        assert proc.stdout is not None
        if kill_after == 0:
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)
            killed = True
        for line in proc.stdout:
            seen.extend(H.events(line))
            if kill_after and len(seen) >= kill_after and not killed:
                time.sleep(delay)
                proc.send_signal(signal.SIGKILL)
                killed = True
        proc.wait(timeout=60)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    return seen, killed and proc.returncode == -signal.SIGKILL


def test_sigkill_never_corrupts_the_store_or_loses_a_turn(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    home = tmp_path / "home" / ".skilldeck"
    env = H.cli_env(home)
    empty = tmp_path / "no-skills"
    empty.mkdir()
    script = H.work_script("crash", TURNS, bash_every=4)
    model = H.write_script(tmp_path / "crash.jsonl", script)
    db = home / "sessions.db"
    full_events = 0
    survived = killed_trials = resumed = 0
    for trial in range(TRIALS):
        task = f"crash trial {trial} (seed {SEED})"
        ws = tmp_path / f"ws{trial}"
        ws.mkdir()
        argv = H.cli_argv("run", task, "--model", f"scripted:{model}", "--json",
                          "--root", str(empty), "--no-defaults")  # fmt: skip
        if trial == 0:  # calibration: how many events a whole run prints
            kill_after, delay = None, 0.0
        elif rng.random() < 0.15:  # during start-up, before anything is printed
            kill_after, delay = 0, rng.uniform(0.05, 1.5)
        else:
            kill_after, delay = rng.randint(1, max(1, full_events)), rng.uniform(0, 0.03)
        seen, killed = _run_and_kill(argv, cwd=ws, env=env, kill_after=kill_after, delay=delay)
        if trial == 0:
            full_events = len(seen)
            assert seen and seen[-1]["type"] == "done", seen[-3:]
        killed_trials += killed
        where = f"trial {trial} (seed {SEED}, kill after {kill_after} events + {delay:.3f}s)"
        if db.exists():
            status = H.integrity(db)
            if status != "ok":
                H.add(corrupt_stores=1)
            assert status == "ok", f"{where}: integrity_check: {status}"
        found = H.find_session(db, task)
        if found is None:  # killed before the session was created: nothing to lose
            assert _reported_turns(seen) == 0, where
            survived += 1
            continue
        sid, state = found
        committed = H.check_prefix(H.stored_messages(db, sid), script, task)
        reported = _reported_turns(seen)
        H.add(lost_messages=max(0, reported - committed))
        assert committed >= reported, f"{where}: {reported} turns reported, {committed} stored"
        if state != "completed":
            result = H.run_cli("resume", sid, "--json", cwd=ws, env=env)
            done = H.done_event(result.stdout)
            assert result.returncode == 0 and done["status"] == "completed", (
                f"{where}: resume → {result.returncode} {done} {result.stderr[-1500:]}"
            )
            resumed += 1
        H.check_complete(db, sid, script, task)
        for i in range(TURNS):
            written = (ws / "out" / f"crash-{i}.txt").read_text(encoding="utf-8")
            assert written == f"crash {i}\n", f"{where}: out/crash-{i}.txt = {written!r}"
        survived += 1
    H.add(kill_trials=TRIALS - 1, kill_trials_sigkilled=killed_trials,
          kill_trials_survived=survived - 1, kill_trials_resumed=resumed)  # fmt: skip
    assert survived == TRIALS
    assert killed_trials >= (TRIALS - 1) // 2, "most trials ended before the kill landed"


# ---- atomic config and lock files ------------------------------------------------------

SIZE = H.scale(60_000, 120_000)
#: a config write edits the file as a TOML document (tomlkit keeps its comments),
#: far slower per entry than the lock's JSON: a fortieth of the entries keeps one write
#: near 0.1-0.2 s, so the kill 0-0.8 s after the first write (the writer never stops
#: writing: a kill lands mid-write) often comes after a second one, of the other
#: version, and both versions are seen
CONFIG_SIZE = SIZE // 40
WRITERS = {
    "config": f"""
import sys
from pathlib import Path
from skilldeck.config import update_config_file
path, n = Path(sys.argv[1]), 0
while True:
    v = n % 2
    names = [f"v{{v}}-{{i}}" for i in range({CONFIG_SIZE})]
    update_config_file(path, {{"stress": {{"version": v}}, "skills": {{"disabled": names}}}})
    print(n, flush=True)
    n += 1
""",
    "lock": f"""
import sys
from pathlib import Path
from skilldeck.skills.packaging.lockfile import LockEntry, LockFile
path, n = Path(sys.argv[1]), 0
lock = LockFile(path)
while True:
    v = n % 2
    files = {{f"f{{j}}": f"{{v}}" * 64 for j in range({SIZE // 20})}}
    lock.skills = {{f"s{{i}}": LockEntry(f"s{{i}}", str(v), "src", "t", str(v), files)
                   for i in range(20)}}
    lock.write()
    print(n, flush=True)
    n += 1
""",
}


def _versions(kind: str, path: Path) -> set[str]:
    """The versions present in the file; exactly one for a whole file."""
    if kind == "config":
        data = read_toml(path)
        version = str(data["stress"]["version"])
        disabled = data["skills"]["disabled"]
        assert len(disabled) == CONFIG_SIZE, f"{len(disabled)} entries"
        return {version} | {d.split("-")[0][1:] for d in disabled}
    lock = LockFile.read(path)
    assert len(lock.skills) == 20
    found = {e.version or "" for e in lock.skills.values()}
    for entry in lock.skills.values():
        found |= {h[0] for h in entry.files.values()}
        assert len(entry.files) == SIZE // 20
    return found


@pytest.mark.parametrize("kind", ["config", "lock"])
def test_killed_writers_leave_old_or_new_never_partial(kind: str, tmp_path: Path) -> None:
    rng = random.Random(SEED + len(kind))
    path = tmp_path / ("config.toml" if kind == "config" else "skills.lock")
    trials = H.scale(8, 50)
    versions_seen: set[str] = set()
    for trial in range(trials):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITERS[kind], str(path)], stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline()  # one complete write, so a file exists
            assert first.strip().isdigit(), f"writer failed: {first!r}"
            time.sleep(rng.uniform(0.0, 0.8))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        try:
            found = _versions(kind, path)
        except Exception:
            H.add(partial_files=1)
            raise
        if len(found) != 1:
            H.add(partial_files=1)
        assert len(found) == 1, f"trial {trial}: mixed versions {found}"
        versions_seen |= found
    H.add(**{f"atomic_{kind}_kill_trials": trials})
    assert versions_seen == {"0", "1"} or trials < 4
