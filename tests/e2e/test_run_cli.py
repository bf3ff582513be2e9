"""``skilldeck run`` end to end: a real corpus skill, the file tools, Bash, Grep, todos.

Driven in a subprocess with the scripted model; asserts the files on disk, the JSON
events on stdout and what the session store holds afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import REPO, json_events, skilldeck, tool_call, write_script

from skilldeck.agent.store import SessionStore
from skilldeck.llm.messages import AssistantMessage, ToolResultMessage

SKILL = Path("anthropics__skills/skills/brand-guidelines")


def todos(first: str, second: str) -> list[dict[str, str]]:
    return [
        {"content": "Write the stylesheet", "status": first, "activeForm": "Writing it"},
        {"content": "Check the accent colour", "status": second, "activeForm": "Checking it"},
    ]


@pytest.mark.corpus
def test_run_loads_a_corpus_skill_then_writes_edits_runs_greps_and_tracks_todos(
    tmp_path: Path, corpus: Path, skilldeck_home: Path
) -> None:
    skill_dir = corpus / SKILL
    if not skill_dir.is_dir():
        pytest.skip(f"{skill_dir} not in this corpus")
    work = tmp_path / "work"
    work.mkdir()
    script = write_script(
        tmp_path / "script.jsonl",
        [
            {
                "text": "Loading the brand skill.",
                "tool_calls": [tool_call("s1", "Skill", skill="brand-guidelines")],
            },
            {
                "tool_calls": [
                    tool_call(
                        "w1",
                        "Write",
                        file_path="brand.css",
                        content="h1 { color: #141413; }\na { color: #000000; }\n",
                    )
                ]
            },
            {
                "tool_calls": [
                    tool_call(
                        "e1",
                        "Edit",
                        file_path="brand.css",
                        old_string="#000000",
                        new_string="#d97757",
                    )
                ]
            },
            {"tool_calls": [tool_call("b1", "Bash", command="wc -l brand.css && cat brand.css")]},
            {"tool_calls": [tool_call("g1", "Grep", pattern="#d97757", output_mode="content")]},
            {"tool_calls": [tool_call("t1", "TodoWrite", todos=todos("completed", "completed"))]},
            {"text": "brand.css now uses the brand's dark text and orange accent."},
        ],
    )
    proc = skilldeck(
        "run",
        "Style brand.css with our brand colours",
        "--model",
        f"scripted:{script}",
        "--root",
        str(skill_dir),
        "--json",
        # Write/Edit/Bash ask in the default mode; let edits and this one command through
        "--permission-mode",
        "acceptEdits",
        "--allow",
        "Bash(wc -l:*)",
        "--allow",
        "Bash(cat brand.css)",
        cwd=work,
    )
    assert proc.returncode == 0, proc.stderr

    # the files
    assert (work / "brand.css").read_text(encoding="utf-8") == (
        "h1 { color: #141413; }\na { color: #d97757; }\n"
    )

    # the events
    events = json_events(proc.stdout)
    calls = [e["name"] for e in events if e["type"] == "tool_call"]
    assert calls == ["Skill", "Write", "Edit", "Bash", "Grep", "TodoWrite"]
    by_id = {e["id"]: e for e in events if e["type"] == "tool_result"}
    assert not any(e["is_error"] for e in by_id.values()), by_id
    assert "Anthropic Brand Styling" in by_id["s1"]["content"]
    assert "#d97757" in by_id["b1"]["content"] and by_id["b1"]["content"].startswith("2")
    assert "#d97757" in by_id["g1"]["content"]
    done = events[-1]
    assert done["type"] == "done" and done["status"] == "completed"
    assert done["text"].startswith("brand.css now uses")
    assert any(e["type"] == "text" and e["text"] == "Loading the brand skill." for e in events)

    # the stored session
    with SessionStore(skilldeck_home / "sessions.db") as store:
        record = store.get(done["session_id"])
        assert (record.status, record.task) == (
            "completed",
            "Style brand.css with our brand colours",
        )
        assert record.cwd == str(work.resolve())
        messages = store.load_messages(record.id)
        assert "brand-guidelines" in messages[0].content  # type: ignore[union-attr]  # level 1
        assert sum(isinstance(m, AssistantMessage) for m in messages) == 7
        results = [m for m in messages if isinstance(m, ToolResultMessage)]
        assert [r.name for r in results] == calls
        assert store.todos(record.id) == todos("completed", "completed")
        assert len(store.usage(record.id)) == 7
        assert [e.type for e in store.events(record.id)][-1] == "done"


def test_the_shipped_demo_runs_offline(tmp_path: Path, skilldeck_home: Path) -> None:
    """The README's offline demo, exactly as documented."""
    demo = tmp_path / "demo"
    demo.mkdir()
    proc = skilldeck(
        "run",
        "Write and run FizzBuzz",
        "--model",
        "scripted:examples/demo.jsonl",
        "--cwd",
        str(demo),
        "--permission-mode",
        "acceptEdits",
        "--allow",
        "Bash",
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    assert (demo / "fizzbuzz.py").is_file()
    assert "FizzBuzz" in proc.stdout and "Done." in proc.stdout
    assert "Write" in proc.stdout and "Bash" in proc.stdout  # tool cards
    listing = skilldeck("sessions", "list", "--json", cwd=tmp_path)
    (session,) = json.loads(listing.stdout)
    assert session["status"] == "completed" and session["task"] == "Write and run FizzBuzz"
    shown = skilldeck("sessions", "show", session["id"][:6], cwd=tmp_path)
    assert shown.returncode == 0 and "fizzbuzz.py" in shown.stdout
    assert "✔ Write fizzbuzz.py" in shown.stdout


def test_run_without_a_model_says_how_to_choose_one(tmp_path: Path) -> None:
    proc = skilldeck("run", "anything", cwd=tmp_path)
    assert proc.returncode == 1
    assert "No model chosen" in proc.stderr and "SKILLDECK_MODEL" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_model_from_config_then_environment(tmp_path: Path, skilldeck_home: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"text": "from config"}])
    other = write_script(tmp_path / "o.jsonl", [{"text": "from env"}])
    proc = skilldeck(
        "run", "x", "--json", cwd=tmp_path, env={"SKILLDECK_MODEL": f"scripted:{other}"}
    )
    assert json_events(proc.stdout)[-1]["text"] == "from env"
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    (skilldeck_home / "config.toml").write_text(f'model = "scripted:{script}"\n', encoding="utf-8")
    proc = skilldeck(
        "run", "x", "--json", cwd=tmp_path, env={"SKILLDECK_MODEL": f"scripted:{other}"}
    )
    assert json_events(proc.stdout)[-1]["text"] == "from config"


def test_max_turns_and_errors_set_the_exit_code(tmp_path: Path) -> None:
    loop = write_script(
        tmp_path / "loop.jsonl",
        [{"tool_calls": [tool_call(f"c{i}", "Glob", pattern="*")]} for i in range(5)],
    )
    proc = skilldeck(
        "run", "x", "--model", f"scripted:{loop}", "--max-turns", "2", "--json", cwd=tmp_path
    )
    assert proc.returncode == 3
    assert json_events(proc.stdout)[-1]["status"] == "max_turns"
    short = write_script(
        tmp_path / "short.jsonl", [{"tool_calls": [tool_call("c", "Glob", pattern="*")]}]
    )
    proc = skilldeck("run", "x", "--model", f"scripted:{short}", cwd=tmp_path)
    assert proc.returncode == 1 and "ran out of lines" in proc.stderr


def test_preloaded_skill_body_reaches_the_model(tmp_path: Path) -> None:
    skill = tmp_path / "skills" / "greeter"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: greeter\ndescription: Greets people warmly.\n---\n"
        "Always greet with the word MARMALADE.\n",
        encoding="utf-8",
    )
    script = write_script(tmp_path / "s.jsonl", [{"text": "MARMALADE, friend"}])
    proc = skilldeck(
        "run",
        "greet me",
        "--model",
        f"scripted:{script}",
        "--skill",
        "greeter",
        "--root",
        str(tmp_path / "skills"),
        "--json",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    sid = json_events(proc.stdout)[-1]["session_id"]
    shown = json.loads(skilldeck("sessions", "show", sid, "--json", cwd=tmp_path).stdout)
    bodies = [m for m in shown["messages"] if m.get("meta") == "skill-body"]
    assert len(bodies) == 1 and "MARMALADE" in bodies[0]["content"]
    assert '<skill name="greeter">' in bodies[0]["content"]
    unknown = skilldeck(
        "run", "x", "--model", f"scripted:{script}", "--skill", "nope", cwd=tmp_path
    )
    assert unknown.returncode == 1 and "No skill named 'nope'" in unknown.stderr


def test_scripted_path_is_stored_absolute_for_resume_elsewhere(tmp_path: Path) -> None:
    write_script(tmp_path / "rel.jsonl", [{"text": "ok"}])
    proc = skilldeck("run", "x", "--model", "scripted:rel.jsonl", "--json", cwd=tmp_path)
    sid = json_events(proc.stdout)[-1]["session_id"]
    (session,) = json.loads(skilldeck("sessions", "list", "--json", cwd=tmp_path).stdout)
    assert session["id"] == sid
    assert session["model"] == f"scripted:{(tmp_path / 'rel.jsonl').resolve()}"


def _dynamic_skill(tmp_path: Path, allowed: str = "") -> Path:
    skill = tmp_path / "skills" / "stamper"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: stamper\ndescription: Stamps the reply.\n{allowed}---\n"
        "The stamp is: !`echo SENTINEL`\n",
        encoding="utf-8",
    )
    return tmp_path / "skills"


def test_run_skill_expands_dynamic_context_through_the_gate(tmp_path: Path) -> None:
    """Issue 16: ``run --skill`` loads like the Skill tool — the stored body holds the
    command's output, not the raw !`…`, when a rule allows the command."""
    root = _dynamic_skill(tmp_path, "allowed-tools: Bash(echo:*)\n")
    script = write_script(tmp_path / "s.jsonl", [{"text": "done"}])
    proc = skilldeck(
        "run", "stamp it", "--model", f"scripted:{script}", "--skill", "stamper",
        "--root", str(root), "--allow", "Bash(echo:*)", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    sid = json_events(proc.stdout)[-1]["session_id"]
    shown = json.loads(skilldeck("sessions", "show", sid, "--json", cwd=tmp_path).stdout)
    bodies = [m["content"] for m in shown["messages"] if m.get("meta") == "skill-body"]
    assert len(bodies) == 1
    assert "The stamp is: SENTINEL" in bodies[0] and "!`echo" not in bodies[0]


def test_run_skill_refuses_dynamic_context_the_gate_does_not_allow(tmp_path: Path) -> None:
    """Without a rule allowing the command the run stops before the model is called
    and says why (as the Skill tool: an unapproved command aborts the load)."""
    root = _dynamic_skill(tmp_path)
    script = write_script(tmp_path / "s.jsonl", [{"text": "done"}])
    proc = skilldeck(
        "run", "stamp it", "--model", f"scripted:{script}", "--skill", "stamper",
        "--root", str(root), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "stamper" in proc.stderr and "echo SENTINEL" in proc.stderr
    assert "not allowed" in proc.stderr
    assert "SENTINEL\n" not in proc.stdout


def test_a_task_holding_bytes_that_are_not_utf8_runs_and_is_stored(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    """``skilldeck run $'\\xff hello'``: the shell passes bytes that are not UTF-8,
    which reach Python as a lone surrogate; the session store refused it (a
    traceback, exit 1). They become U+FFFD."""
    import os
    import subprocess
    import sys

    script = write_script(tmp_path / "script.jsonl", [{"text": "hi there"}])
    args = [sys.executable.encode(), b"-m", b"skilldeck.cli.main", b"run", b"\xff hello"]
    args += [b"--model", f"scripted:{script}".encode()]
    done = subprocess.run(args, cwd=tmp_path, env=os.environ, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"hi there" in done.stdout and b"Traceback" not in done.stderr
    sessions = SessionStore(skilldeck_home / "sessions.db").list()
    assert [s.task for s in sessions] == ["\ufffd hello"]
