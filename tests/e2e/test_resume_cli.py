"""Pausing on AskUserQuestion in one process and resuming in another with ``--answer``."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import json_events, skilldeck, tool_call, write_script

from skilldeck.agent.store import SessionStore
from skilldeck.llm.messages import ToolResultMessage

QUESTION = {
    "question": "Which greeting should the file use?",
    "header": "Greeting",
    "options": [
        {"label": "Hello", "description": "Friendly"},
        {"label": "Good day", "description": "Formal"},
    ],
}


def test_pause_on_ask_user_then_resume_in_a_second_process(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script = write_script(
        tmp_path / "ask.jsonl",
        [
            {
                "text": "Let me ask.",
                "tool_calls": [
                    tool_call("w0", "Write", file_path="notes.txt", content="draft\n"),
                    tool_call("q1", "AskUserQuestion", questions=[QUESTION]),
                ],
            },
            {
                "tool_calls": [
                    tool_call("w1", "Write", file_path="greeting.txt", content="Hello, world!\n")
                ]
            },
            {"text": "Wrote greeting.txt."},
        ],
    )
    first = skilldeck(
        "run",
        "write a greeting",
        "--model",
        f"scripted:{script}",
        "--json",
        "--permission-mode",  # stored with the session: the resume keeps it
        "acceptEdits",
        cwd=work,
    )
    assert first.returncode == 0, first.stderr
    events = json_events(first.stdout)
    ask = next(e for e in events if e["type"] == "ask_user")
    assert ask["questions"][0]["question"] == QUESTION["question"]
    done = events[-1]
    assert done["type"] == "done" and done["status"] == "paused"
    sid = done["session_id"]
    assert f"skilldeck resume {sid} --answer" in first.stderr
    assert (work / "notes.txt").is_file() and not (work / "greeting.txt").exists()

    with SessionStore(skilldeck_home / "sessions.db") as store:
        record = store.get(sid)
        assert record.status == "paused" and record.pending is not None
        assert record.pending["kind"] == "ask_user"

    # resuming without the answer is refused with the way to do it
    missing = skilldeck("resume", sid, cwd=tmp_path)
    assert missing.returncode == 1 and "--answer" in missing.stderr

    # a second process, another working directory: the session knows its own
    second = skilldeck("resume", sid, "--answer", "Hello", "--json", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    events = json_events(second.stdout)
    results = [e for e in events if e["type"] == "tool_result"]
    assert [r["id"] for r in results] == ["q1", "w1"]
    assert '"Which greeting should the file use?"="Hello"' in results[0]["content"]
    assert events[-1]["status"] == "completed" and events[-1]["text"] == "Wrote greeting.txt."
    assert (work / "greeting.txt").read_text(encoding="utf-8") == "Hello, world!\n"

    with SessionStore(skilldeck_home / "sessions.db") as store:
        record = store.get(sid)
        assert record.status == "completed" and record.pending is None
        messages = store.load_messages(sid)
        answers = [m for m in messages if isinstance(m, ToolResultMessage)]
        assert [m.tool_call_id for m in answers] == ["w0", "q1", "w1"]

    again = skilldeck("resume", sid, cwd=tmp_path)
    assert again.returncode == 1 and "completed" in again.stderr


def test_resume_continues_a_session_that_failed(tmp_path: Path) -> None:
    script = tmp_path / "grow.jsonl"
    write_script(script, [{"tool_calls": [tool_call("g", "Glob", pattern="*")]}])
    first = skilldeck("run", "x", "--model", f"scripted:{script}", "--json", cwd=tmp_path)
    assert first.returncode == 1
    sid = json_events(first.stdout)[-1]["session_id"]
    # the script gets its missing line; the session picks up after the committed turn
    write_script(
        script, [{"tool_calls": [tool_call("g", "Glob", pattern="*")]}, {"text": "recovered"}]
    )
    second = skilldeck("resume", sid[:8], "--json", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert json_events(second.stdout)[-1]["text"] == "recovered"


def test_resume_human_output_and_unknown_session(tmp_path: Path) -> None:
    unknown = skilldeck("resume", "nosuchsession", cwd=tmp_path)
    assert unknown.returncode == 1 and "No session 'nosuchsession'" in unknown.stderr
    script = write_script(
        tmp_path / "ask.jsonl",
        [
            {"tool_calls": [tool_call("q", "AskUserQuestion", questions=[QUESTION])]},
            {"text": "Thanks!"},
        ],
    )
    paused = skilldeck("run", "ask me", "--model", f"scripted:{script}", cwd=tmp_path)
    assert paused.returncode == 0
    assert QUESTION["question"] in paused.stdout and "Hello" in paused.stdout
    assert "is paused" in paused.stderr
    (line,) = [ln for ln in paused.stderr.splitlines() if "skilldeck resume" in ln]
    sid = line.split()[2]
    resumed = skilldeck("resume", sid, "--answer", "Good day", cwd=tmp_path)
    assert resumed.returncode == 0 and "Thanks!" in resumed.stdout


def test_a_killed_run_keeps_its_committed_turns_and_resumes(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    import os
    import signal
    import subprocess
    import sys

    work = tmp_path / "work"
    work.mkdir()
    script = write_script(
        tmp_path / "kill.jsonl",
        [
            {"tool_calls": [tool_call("w", "Write", file_path="a.txt", content="a\n")]},
            {"tool_calls": [tool_call("b", "Bash", command="test -f go || sleep 5; echo slept")]},
            {"text": "all done"},
        ],
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "skilldeck.cli.main",
            "run",
            "x",
            "--model",
            f"scripted:{script}",
            "--json",
            "--permission-mode",
            "bypassPermissions",
        ],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # wait until the Bash call is in flight
        if '"name":"Bash"' in line and '"type":"tool_call"' in line:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdout.close()

    with SessionStore(skilldeck_home / "sessions.db") as store:
        (record,) = store.list()
        assert record.status == "running"  # it never got to say otherwise
        roles = [m.role for m in store.load_messages(record.id)]
        assert roles == ["system", "user", "assistant", "tool"]  # turn 1 only

    (work / "go").touch()
    resumed = skilldeck("resume", record.id, "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    events = json_events(resumed.stdout)
    assert [e["name"] for e in events if e["type"] == "tool_call"] == ["Bash"]
    assert events[-1]["status"] == "completed" and events[-1]["text"] == "all done"


RELAXED_CONFIG = """
[permissions]
mode = "bypassPermissions"
allow = ["Bash", "Write"]
[sandbox]
mode = "off"
network = true
"""


def test_resume_ignores_a_config_the_model_rewrote(tmp_path: Path) -> None:
    """A paused session, then the model's rewrite of ./.skilldeck/config.toml (sandbox
    off, bypass, allow Bash), then `resume --deny`: the next Bash is still asked, and
    once approved it runs sandboxed (nothing written outside the workspace)."""
    from skilldeck.sandbox import probe_sandbox

    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside-marker"
    script = write_script(
        tmp_path / "relax.jsonl",
        [
            {"tool_calls": [tool_call("a", "Bash", command="echo hi")]},
            {"tool_calls": [tool_call("b", "Bash", command=f"touch {outside}")]},
            {"text": "done"},
        ],
    )
    trusted = {"SKILLDECK_TRUST_WORKSPACE": "1"}  # trust must not be what stops it here
    first = skilldeck("run", "go", "--model", f"scripted:{script}", "--json", cwd=work, env=trusted)
    assert first.returncode == 0, first.stderr
    sid = json_events(first.stdout)[-1]["session_id"]
    (work / ".skilldeck").mkdir()
    (work / ".skilldeck" / "config.toml").write_text(RELAXED_CONFIG, encoding="utf-8")

    denied = skilldeck("resume", sid, "--deny", "--json", cwd=work, env=trusted)
    assert denied.returncode == 0, denied.stderr
    done = json_events(denied.stdout)[-1]
    assert done["status"] == "paused"  # the next Bash is asked again
    assert f"skilldeck resume {sid} --approve" in denied.stderr
    if not probe_sandbox().available:
        return
    approved = skilldeck("resume", sid, "--approve", "--json", cwd=work, env=trusted)
    assert approved.returncode == 0, approved.stderr
    assert json_events(approved.stdout)[-1]["status"] == "completed"
    assert not outside.exists()


def test_a_resume_cannot_widen_the_session(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "w.jsonl",
        [{"tool_calls": [tool_call("a", "Bash", command="echo hi")]}, {"text": "done"}],
    )
    first = skilldeck("run", "go", "--model", f"scripted:{script}", "--json", cwd=tmp_path)
    sid = json_events(first.stdout)[-1]["session_id"]
    allow = skilldeck("resume", sid, "--approve", "--allow", "Bash", cwd=tmp_path)
    assert allow.returncode == 2 and "cannot add --allow" in allow.stderr
    wider = skilldeck(
        "resume", sid, "--approve", "--permission-mode", "bypassPermissions", cwd=tmp_path
    )
    assert wider.returncode == 2 and "would widen" in wider.stderr


def test_resuming_a_sub_agent_session_rebuilds_that_sub_agent(tmp_path: Path) -> None:
    """An `explore` child whose run failed is resumed by id: it keeps Read/Glob/Grep
    behind its parent's rules, so the injected model's Bash call is refused."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("alpha\n", encoding="utf-8")
    lines = [
        {
            "tool_calls": [
                tool_call(
                    "t", "Task", description="e", prompt="explore notes", subagent_type="explore"
                )
            ]
        },
        {"for": "explore notes", "tool_calls": [tool_call("r", "Read", file_path="notes.txt")]},
        {"text": "parent done"},
    ]
    script = write_script(tmp_path / "child.jsonl", lines)
    parent = skilldeck(
        "run", "look", "--model", f"scripted:{script}", "--json",
        "--permission-mode", "bypassPermissions", cwd=work,
    )  # fmt: skip
    assert parent.returncode == 0, parent.stderr
    child_end = next(e for e in json_events(parent.stdout) if e["type"] == "subagent_end")
    assert child_end["status"] == "error"
    child_start = next(e for e in json_events(parent.stdout) if e.get("is_sub_agent"))
    child = child_start.get("session_id")
    if child is None:  # the child's id is on its stored session
        from skilldeck.agent.store import SessionStore
        from skilldeck.config import skilldeck_home

        with SessionStore(skilldeck_home() / "sessions.db") as store:
            child = next(r.id for r in store.list() if r.parent_id is not None)
    lines[2:2] = [
        {"for": "explore notes", "tool_calls": [tool_call("b", "Bash", command="touch pwned")]},
        {"for": "explore notes", "text": "child done"},
    ]
    write_script(script, lines)
    resumed = skilldeck("resume", child, "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    events = json_events(resumed.stdout)
    bash = next(e for e in events if e["type"] == "tool_result" and e["id"] == "b")
    assert bash["is_error"] and "explore" in bash["content"]
    assert events[-1]["status"] == "completed" and not (work / "pwned").exists()


def test_chat_continuing_a_session_ignores_a_config_the_model_rewrote(tmp_path: Path) -> None:
    """`chat --session ID` is a resume too: after the model's rewrite of the workspace
    config (bypass, allow Bash), the continued chat still asks before Bash — with no
    one to approve, the command never runs — and `--allow` cannot widen it."""
    work = tmp_path / "work"
    work.mkdir()
    marker = work / "MARKER"
    first_script = write_script(tmp_path / "first.jsonl", [{"text": "hello"}])
    trusted = {"SKILLDECK_TRUST_WORKSPACE": "1"}  # trust must not be what stops it here
    first = skilldeck(
        "run", "hi", "--model", f"scripted:{first_script}", "--json", cwd=work, env=trusted
    )
    assert first.returncode == 0, first.stderr
    sid = json_events(first.stdout)[-1]["session_id"]
    (work / ".skilldeck").mkdir()
    (work / ".skilldeck" / "config.toml").write_text(RELAXED_CONFIG, encoding="utf-8")
    second_script = write_script(  # the scripted model replays by turn: turn 1 was "hello"
        tmp_path / "second.jsonl",
        [
            {"text": "hello"},
            {"tool_calls": [tool_call("a", "Bash", command=f"touch {marker}")]},
            {"text": "ok"},
        ],
    )
    chat = skilldeck(
        "chat", "--session", sid, "--model", f"scripted:{second_script}", "--json",
        cwd=work, input="go\n", env=trusted,
    )  # fmt: skip
    assert not marker.exists(), chat.stdout + chat.stderr
    assert "Traceback" not in chat.stderr
    widened = skilldeck("chat", "--session", sid, "--allow", "Bash", cwd=work, env=trusted)
    assert widened.returncode == 2 and "cannot add --allow" in widened.stderr


def test_chat_without_a_session_still_obeys_a_trusted_config(tmp_path: Path) -> None:
    """The control: a new chat in the same trusted folder does take the relaxed config
    (allow Bash), so the test above fails if continuing reads the files again."""
    work = tmp_path / "work"
    work.mkdir()
    marker = work / "MARKER"
    (work / ".skilldeck").mkdir()
    (work / ".skilldeck" / "config.toml").write_text(RELAXED_CONFIG, encoding="utf-8")
    script = write_script(
        tmp_path / "s.jsonl",
        [{"tool_calls": [tool_call("a", "Bash", command=f"touch {marker}")]}, {"text": "ok"}],
    )
    chat = skilldeck(
        "chat", "--model", f"scripted:{script}", "--json", cwd=work, input="go\n",
        env={"SKILLDECK_TRUST_WORKSPACE": "1"},
    )  # fmt: skip
    assert chat.returncode == 0, chat.stderr
    assert marker.exists(), chat.stdout + chat.stderr
