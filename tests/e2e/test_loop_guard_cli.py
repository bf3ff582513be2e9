"""``skilldeck run`` on the issue-17 transcripts: a loop of identical calls stops as
``stuck`` (exit 3, resumable), a tool call written as text is run, and a skill set
that leaves the run no tool is refused before the model is called."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import json_events, skilldeck, tool_call, write_script

from skilldeck.agent.store import SessionStore


def test_23_identical_taskoutput_calls_stop_as_stuck_and_resume(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    poll = {"tool_calls": [tool_call("o", "TaskOutput", task_id="write_task")]}
    script = write_script(
        tmp_path / "loop.jsonl",
        [
            {"tool_calls": [tool_call("w", "Write", file_path="notes.md", content="v1\n")]},
            *[poll] * 23,
            {"text": "notes.md is written."},
        ],
    )
    args = ["--model", f"scripted:{script}", "--permission-mode", "acceptEdits"]
    proc = skilldeck("run", "Write notes.md", *args, "--json", "--max-turns", "30", cwd=work)
    assert proc.returncode == 3, proc.stderr
    events = json_events(proc.stdout)
    done = events[-1]
    assert done["type"] == "done" and done["status"] == "stuck"
    assert "repeated TaskOutput" in done["reason"]
    assert sum(e["type"] == "model_call" for e in events) == 5  # not 30
    loop = [e for e in events if e["type"] == "loop_detected"]
    assert [(e["count"], e["stop"]) for e in loop] == [(2, False), (3, False), (4, True)]
    with SessionStore(skilldeck_home / "sessions.db") as store:
        assert store.get(done["session_id"]).status == "stuck"

    # the human view says so in one line, and the session resumes
    rich = skilldeck("run", "Write notes.md", *args, cwd=work)
    assert rich.returncode == 3
    assert "loop: TaskOutput" in rich.stdout and "[stuck:" in rich.stdout
    resumed = skilldeck("resume", done["session_id"], "--json", cwd=work)
    assert resumed.returncode == 3, resumed.stderr  # the script keeps polling: stuck again
    assert json_events(resumed.stdout)[-1]["status"] == "stuck"


def test_a_tool_call_written_as_text_is_run(tmp_path: Path, skilldeck_home: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    written = '{ "name": "write", "arguments": {"file_path": "hi.txt", "content": "hi"} }'
    script = write_script(tmp_path / "text.jsonl", [{"text": written}, {"text": "Done."}])
    proc = skilldeck(
        "run",
        "write hi.txt",
        "--model",
        f"scripted:{script}",
        "--permission-mode",
        "acceptEdits",
        "--json",
        cwd=work,
        env={"SKILLDECK_AGENT__TEXT_TOOL_CALLS": "on"},  # auto: ollama/openai-compat only
    )
    assert proc.returncode == 0, proc.stderr
    events = json_events(proc.stdout)
    assert (work / "hi.txt").read_text(encoding="utf-8") == "hi"
    recovered = next(e for e in events if e["type"] == "tool_call_recovered")
    assert (recovered["name"], recovered["text"]) == ("Write", written)
    assert events[-1]["status"] == "completed" and events[-1]["text"] == "Done."


def test_a_skill_set_with_no_tool_is_refused_up_front(tmp_path: Path, skilldeck_home: Path) -> None:
    work = tmp_path / "work"
    skill = tmp_path / "skills" / "release-notes"
    skill.mkdir(parents=True)
    work.mkdir()
    (skill / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes.\n---\nSteps.\n",
        encoding="utf-8",
    )
    script = write_script(tmp_path / "s.jsonl", [{"text": "Done"}])
    common = ["--model", f"scripted:{script}", "--root", str(skill.parent), "--json"]
    proc = skilldeck(
        "run",
        "notes",
        "--skill",
        "release-notes",
        *common,
        cwd=work,
        env={"SKILLDECK_SKILLS__UNDECLARED_TOOLS": "none"},
    )
    assert proc.returncode == 1
    assert "SD311" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    ok = skilldeck("run", "notes", "--skill", "release-notes", *common, cwd=work)  # "parent"
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout.splitlines()[-1])["status"] == "completed"


@pytest.mark.corpus
def test_a_corpus_skill_without_allowed_tools_can_act(tmp_path: Path, corpus: Path) -> None:
    """``--skill internal-comms`` (no ``allowed-tools``, like 94% of the corpus) used to
    leave the run no tool: one warning, a text answer, ``completed``, nothing written."""
    skill = corpus / "anthropics__skills" / "skills" / "internal-comms"
    if not (skill / "SKILL.md").is_file():
        pytest.skip(f"{skill} not in this corpus")
    work = tmp_path / "work"
    work.mkdir()
    write = tool_call("w", "Write", file_path="update.md", content="# Weekly update\n")
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [write]}, {"text": "Written."}])
    proc = skilldeck(
        "run",
        "Write this week's update",
        "--skill",
        "internal-comms",
        "--root",
        str(skill),
        "--model",
        f"scripted:{script}",
        "--permission-mode",
        "acceptEdits",
        "--json",
        cwd=work,
    )
    assert proc.returncode == 0, proc.stderr
    assert (work / "update.md").read_text(encoding="utf-8") == "# Weekly update\n"
    result = next(e for e in json_events(proc.stdout) if e["type"] == "tool_result")
    assert not result["is_error"], result
