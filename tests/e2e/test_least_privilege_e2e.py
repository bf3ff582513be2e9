"""Least privilege end to end: ``skilldeck run --json`` with the scripted model.

* a parent spawns two background sub-agents with different skill sets; one forges a
  call to a tool outside its set (refused); both results come back through TaskOutput;
* a spawn with an incompatible skill set is rejected with the validation errors;
* a non-interactive ``ask`` pauses; ``resume --approve`` completes, ``--deny`` tells
  the model "The user denied this action";
* ``run --skill`` gets exactly the composed tool set, and an invalid set exits 1.

Sub-agents are scripted with ``"for"`` lines: a line serves the conversation whose
first user message (the sub-agent's prompt) contains its text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import json_events, skilldeck, tool_call, write_script

from skilldeck.agent.store import SessionStore
from skilldeck.llm.messages import ToolResultMessage


def write_skill(root: Path, name: str, frontmatter: str, body: str = "Do the job.") -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {name} for tests\n{frontmatter}---\n{body}\n",
        encoding="utf-8",
    )


@pytest.fixture
def skills_root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(
        root,
        "notes-reader",
        "allowed-tools: Read Glob\nexecution-protocol:\n  - Read the notes before answering\n",
        body="Read the notes and quote them.",
    )
    write_skill(root, "grep-searcher", "allowed-tools: Grep\n", body="Search with Grep only.")
    write_skill(root, "scribe", "allowed-tools: Write\nconflicts: [notes-reader]\n")
    return root


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text("alpha beta\n", encoding="utf-8")
    return folder


def run_json(
    work: Path, script: Path, task: str, *extra: str
) -> tuple[int, list[dict[str, Any]], str]:
    proc = skilldeck("run", task, "--model", f"scripted:{script}", "--json", *extra, cwd=work)
    return proc.returncode, json_events(proc.stdout), proc.stderr


def results_by_id(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in events if e["type"] == "tool_result"}


def test_two_background_subagents_with_different_skills_one_forging_a_call(
    tmp_path: Path, work: Path, skills_root: Path, skilldeck_home: Path
) -> None:
    task = "delegate the reading and the searching"
    script = write_script(
        tmp_path / "parent.jsonl",
        [
            {
                "text": "Two helpers, in the background.",
                "tool_calls": [
                    tool_call(
                        "t1",
                        "Task",
                        description="read notes",
                        prompt="CHILD-ONE: read notes.txt and quote it",
                        skills=["notes-reader"],
                        run_in_background=True,
                    ),
                    tool_call(
                        "t2",
                        "Agent",  # Claude Code's name for Task works too
                        description="search notes",
                        prompt="CHILD-TWO: find the word beta",
                        skills=["grep-searcher"],
                        run_in_background=True,
                    ),
                ],
            },
            {
                "tool_calls": [
                    tool_call("o1", "TaskOutput", task_id="task_1"),
                    tool_call("o2", "TaskOutput", task_id="task_2"),
                ]
            },
            {"text": "Reader: alpha beta. Searcher: beta is in notes.txt."},
            # child one: its skill grants Read and Glob
            {"for": "CHILD-ONE", "tool_calls": [tool_call("r1", "Read", file_path="notes.txt")]},
            {"for": "CHILD-ONE", "text": "notes.txt says: alpha beta"},
            # child two: grep-searcher grants Grep only; the Bash call is forged
            {
                "for": "CHILD-TWO",
                "tool_calls": [tool_call("b1", "Bash", command="touch pwned")],
            },
            {
                "for": "CHILD-TWO",
                "tool_calls": [
                    tool_call("g1", "Grep", pattern="beta", output_mode="files_with_matches")
                ],
            },
            {"for": "CHILD-TWO", "text": "beta is in notes.txt"},
        ],
    )
    code, events, stderr = run_json(work, script, task, "--root", str(skills_root), "--no-defaults")
    assert code == 0, stderr
    done = events[-1]
    assert done["type"] == "done" and not done["is_sub_agent"]
    assert done["status"] == "completed"
    assert done["text"] == "Reader: alpha beta. Searcher: beta is in notes.txt."

    top = results_by_id([e for e in events if not e["is_sub_agent"]])
    assert "Started background task task_1" in top["t1"]["content"]
    assert "Started background task task_2" in top["t2"]["content"]
    assert top["o1"]["content"] == (
        "Sub-agent (general-purpose) finished:\n\nnotes.txt says: alpha beta"
    )
    assert top["o2"]["content"] == "Sub-agent (general-purpose) finished:\n\nbeta is in notes.txt"
    assert not top["o1"]["is_error"] and not top["o2"]["is_error"]

    starts = {e["task_id"]: e for e in events if e["type"] == "subagent_start"}
    ends = {e["task_id"]: e for e in events if e["type"] == "subagent_end"}
    assert set(starts) == set(ends) == {"task_1", "task_2"}
    assert all(e["background"] for e in starts.values())
    assert all(e["status"] == "completed" for e in ends.values())

    child = {tid: [e for e in events if e["task_id"] == tid and e["is_sub_agent"]] for tid in ends}
    one, two = results_by_id(child["task_1"]), results_by_id(child["task_2"])
    assert not one["r1"]["is_error"] and "alpha beta" in one["r1"]["content"]
    assert two["b1"]["is_error"]
    assert "tool Bash is not allowed by the active skills" in two["b1"]["content"]
    assert not two["g1"]["is_error"] and "notes.txt" in two["g1"]["content"]
    assert not (work / "pwned").exists()
    # the children's own events come before the TaskOutput results that waited for them
    index = {id(e): i for i, e in enumerate(events)}
    assert max(index[id(e)] for e in child["task_2"]) < index[id(top["o2"])]
    assert {e["type"] for e in child["task_1"]} >= {"model_call", "tool_call", "done"}
    # each child has its own session, pointing at the parent's, holding only its tools
    with SessionStore(skilldeck_home / "sessions.db") as store:
        children = [s for s in store.list() if s.parent_id == done["session_id"]]
        prompts = {}
        for record in children:
            assert record.status == "completed"
            system = store.load_messages(record.id)[0]
            prompts[record.task.split(":")[0]] = system.content  # type: ignore[union-attr]
    assert "- Tools: Glob, Read" in prompts["CHILD-ONE"]
    assert "- Tools: Grep" in prompts["CHILD-TWO"]
    assert "[notes-reader] Read the notes before answering" in prompts["CHILD-ONE"]


def test_spawn_with_an_incompatible_skill_set_is_rejected_with_the_errors(
    tmp_path: Path, work: Path, skills_root: Path
) -> None:
    script = write_script(
        tmp_path / "parent.jsonl",
        [
            {
                "tool_calls": [
                    tool_call(
                        "bad",
                        "Task",
                        description="read and write",
                        prompt="CHILD: do both",
                        skills=["notes-reader", "scribe", "no-such-skill"],
                    )
                ]
            },
            {"text": "That combination is not allowed."},
            {"for": "CHILD", "text": "I should never run"},
        ],
    )
    code, events, stderr = run_json(
        work, script, "try a risky combination", "--root", str(skills_root), "--no-defaults"
    )
    assert code == 0, stderr
    result = results_by_id(events)["bad"]
    assert result["is_error"]
    assert result["content"].startswith("Spawn rejected: the skill set is invalid:")
    assert (
        "SD303" in result["content"] and "'scribe' and 'notes-reader' conflict" in result["content"]
    )
    assert "SD301" in result["content"] and "no-such-skill" in result["content"]
    assert not any(e["type"] == "subagent_start" or e["is_sub_agent"] for e in events)
    assert events[-1]["text"] == "That combination is not allowed."


def write_then_finish(tmp_path: Path) -> Path:
    return write_script(
        tmp_path / "write.jsonl",
        [
            {
                "text": "Writing the report.",
                "tool_calls": [tool_call("w1", "Write", file_path="report.txt", content="ok\n")],
            },
            {"text": "Finished."},
        ],
    )


def test_a_non_interactive_ask_pauses_and_resume_approve_completes(
    tmp_path: Path, work: Path, skilldeck_home: Path
) -> None:
    code, events, stderr = run_json(work, write_then_finish(tmp_path), "write a report")
    assert code == 0, stderr
    request = next(e for e in events if e["type"] == "permission_request")
    assert request["tool"] == "Write" and "default mode" in request["reason"]
    done = events[-1]
    assert done["status"] == "paused" and done["reason"] == "waiting for approval"
    sid = done["session_id"]
    assert f"skilldeck resume {sid} --approve" in stderr
    assert not (work / "report.txt").exists()

    resumed = skilldeck("resume", sid, "--approve", "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    after = json_events(resumed.stdout)
    assert results_by_id(after)["w1"]["is_error"] is False
    assert after[-1]["status"] == "completed" and after[-1]["text"] == "Finished."
    assert (work / "report.txt").read_text(encoding="utf-8") == "ok\n"


def test_resume_deny_tells_the_model_the_user_denied_it(
    tmp_path: Path, work: Path, skilldeck_home: Path
) -> None:
    code, events, _ = run_json(work, write_then_finish(tmp_path), "write a report")
    sid = events[-1]["session_id"]
    assert code == 0 and events[-1]["status"] == "paused"
    denied = skilldeck("resume", sid, "--deny", "--json", cwd=tmp_path)
    assert denied.returncode == 0, denied.stderr
    result = results_by_id(json_events(denied.stdout))["w1"]
    assert result["is_error"] and result["content"].startswith("The user denied this action")
    assert not (work / "report.txt").exists()
    with SessionStore(skilldeck_home / "sessions.db") as store:
        seen = [m for m in store.load_messages(sid) if isinstance(m, ToolResultMessage)]
        assert seen[-1].content.startswith("The user denied this action")


def test_config_and_flag_rules_decide_without_asking(
    tmp_path: Path, work: Path, skills_root: Path
) -> None:
    config = work / ".skilldeck" / "config.toml"
    config.parent.mkdir()
    config.write_text('[permissions]\ndeny = ["Read(./secrets/**)"]\n', encoding="utf-8")
    (work / "secrets").mkdir()
    (work / "secrets" / "key").write_text("hunter2\n", encoding="utf-8")
    script = write_script(
        tmp_path / "rules.jsonl",
        [
            {
                "tool_calls": [
                    tool_call("s", "Read", file_path="secrets/key"),
                    tool_call("e", "Bash", command="echo allowed"),
                    tool_call("w", "Write", file_path="out.txt", content="x"),
                ]
            },
            {"text": "done"},
        ],
    )
    code, events, stderr = run_json(
        work, script, "use the rules", "--allow", "Bash(echo:*)", "--deny", "Write"
    )
    assert code == 0, stderr
    results = results_by_id(events)
    assert results["s"]["is_error"] and "Read(./secrets/**)" in results["s"]["content"]
    assert "hunter2" not in results["s"]["content"]
    assert not results["e"]["is_error"] and "allowed" in results["e"]["content"]
    assert results["w"]["is_error"] and not (work / "out.txt").exists()
    assert events[-1]["status"] == "completed"  # nothing needed a human
    bad = skilldeck("run", "x", "--model", f"scripted:{script}", "--allow", "Bash(", cwd=work)
    assert bad.returncode == 2 and "--allow" in bad.stderr
    mode = skilldeck(
        "run", "x", "--model", f"scripted:{script}", "--permission-mode", "yolo", cwd=work
    )
    assert mode.returncode == 2 and "acceptEdits" in mode.stderr


def test_run_with_skills_gets_exactly_the_composed_tool_set(
    tmp_path: Path, work: Path, skills_root: Path
) -> None:
    script = write_script(
        tmp_path / "skills.jsonl",
        [
            {
                "tool_calls": [
                    tool_call("r", "Read", file_path="notes.txt"),
                    tool_call("w", "Write", file_path="x.txt", content="x"),
                    tool_call("t", "Task", description="d", prompt="p"),
                ]
            },
            {"text": "read only"},
        ],
    )
    code, events, stderr = run_json(
        work,
        script,
        "read the notes",
        "--skill",
        "notes-reader",
        "--root",
        str(skills_root),
        "--no-defaults",
        "--permission-mode",
        "bypassPermissions",  # the skills' set still binds
    )
    assert code == 0, stderr
    results = results_by_id(events)
    assert not results["r"]["is_error"]
    assert "tool Write is not allowed by the active skills" in results["w"]["content"]
    assert "tool Task is not allowed by the active skills" in results["t"]["content"]
    assert not (work / "x.txt").exists()
    sid = events[-1]["session_id"]
    shown = skilldeck("sessions", "show", sid, "--json", cwd=tmp_path)
    assert "Read the notes before answering" in shown.stdout  # the composed protocol
    assert '- Tools: Read, Glob"' in shown.stdout  # all the model was shown (last line)

    invalid = skilldeck(
        "run",
        "x",
        "--model",
        f"scripted:{script}",
        "--skill",
        "notes-reader",
        "--skill",
        "scribe",
        "--root",
        str(skills_root),
        "--no-defaults",
        cwd=work,
    )
    assert invalid.returncode == 1
    assert "the skill set is invalid" in invalid.stderr and "SD303" in invalid.stderr


def test_ctrl_c_cancels_background_subagents_and_records_it(
    tmp_path: Path, work: Path, skilldeck_home: Path
) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    script = write_script(
        tmp_path / "sleepy.jsonl",
        [
            {
                "tool_calls": [
                    tool_call(
                        "t", "Task", description="wait", prompt="SLEEPER", run_in_background=True
                    )
                ]
            },
            {"tool_calls": [tool_call("o", "TaskOutput", task_id="task_1")]},
            {"text": "never"},
            {"for": "SLEEPER", "tool_calls": [tool_call("z", "Bash", command="sleep 30")]},
            {"for": "SLEEPER", "text": "never"},
        ],
    )
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "skilldeck.cli.main", "run", "wait for it", "--json"),
            *("--model", f"scripted:{script}", "--permission-mode", "bypassPermissions"),
        ],
        cwd=work,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    for line in proc.stdout:  # the parent now waits in TaskOutput
        if '"name":"TaskOutput"' in line:
            break
    deadline = time.monotonic() + 20
    with SessionStore(skilldeck_home / "sessions.db") as store:
        while time.monotonic() < deadline and not any(s.parent_id for s in store.list()):
            time.sleep(0.1)
        time.sleep(1.0)  # its first (instant) turn starts the 30 s Bash call
        started = time.monotonic()
        os.kill(proc.pid, signal.SIGINT)
        proc.wait(timeout=30)
        assert time.monotonic() - started < 15  # it did not wait for the sleep
        stderr = proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
        assert proc.returncode == 130, stderr
        assert "cancelled 1 background sub-agent(s)" in stderr
        statuses = {("child" if s.parent_id else "parent"): s.status for s in store.list()}
    assert statuses == {"parent": "cancelled", "child": "cancelled"}


def test_chat_asks_inline_and_allow_always_lasts_for_the_session(
    tmp_path: Path, work: Path
) -> None:
    script = write_script(
        tmp_path / "chat.jsonl",
        [
            {"tool_calls": [tool_call("w1", "Write", file_path="a.txt", content="a")]},
            {"tool_calls": [tool_call("w2", "Write", file_path="b.txt", content="b")]},
            {"text": "both written"},
            {"tool_calls": [tool_call("b1", "Bash", command="echo no")]},
            {"text": "bash refused"},
        ],
    )
    proc = skilldeck(
        "chat", "--model", f"scripted:{script}", cwd=work, input="write two files\na\nnow bash\nn\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("Permission needed") == 2  # the second Write was remembered
    assert "allow always" in proc.stdout and "both written" in proc.stdout
    assert (work / "a.txt").is_file() and (work / "b.txt").is_file()
    assert "The user denied this action" in proc.stdout and "bash refused" in proc.stdout
