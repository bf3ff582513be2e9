"""``skilldeck chat`` with stdin not a terminal: lines in, rendered turns out."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import skilldeck, tool_call, write_script

QUESTION = {
    "question": "Tea or coffee?",
    "header": "Drink",
    "options": [
        {"label": "Tea", "description": "hot leaves"},
        {"label": "Coffee", "description": "hot beans"},
    ],
}


def make_skill(root: Path) -> None:
    folder = root / "haiku"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: haiku\ndescription: Writes a haiku about a topic.\n---\n"
        "Write a haiku about $ARGUMENTS in three lines.\n",
        encoding="utf-8",
    )


def test_chat_keeps_one_session_and_runs_commands(tmp_path: Path) -> None:
    make_skill(tmp_path / "skills")
    todo = {"content": "Say hello", "status": "completed", "activeForm": "Saying hello"}
    script = write_script(
        tmp_path / "chat.jsonl",
        [
            {"tool_calls": [tool_call("t", "TodoWrite", todos=[todo])]},
            {"text": "Hello! How can I help?"},
            {"text": "You said your name is Ada."},
            {"text": "Autumn moon rises"},
        ],
    )
    stdin = (
        "\n".join(
            [
                "hi there",
                "/todos",
                "my name is \\",
                "Ada",
                "/skills",
                "/skill haiku the sea",
                "/session",
                "/nope",
                "/exit",
                "never sent",
            ]
        )
        + "\n"
    )
    proc = skilldeck(
        "chat",
        "--model",
        f"scripted:{script}",
        "--root",
        str(tmp_path / "skills"),
        cwd=tmp_path,
        input=stdin,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Hello! How can I help?" in out
    assert "✔ Say hello" in out
    assert "You said your name is Ada." in out
    assert "haiku" in out and "Writes a haiku" in out
    assert "Autumn moon rises" in out
    assert "Unknown command /nope" in out

    (session,) = json.loads(skilldeck("sessions", "list", "--json", cwd=tmp_path).stdout)
    shown = json.loads(skilldeck("sessions", "show", session["id"], "--json", cwd=tmp_path).stdout)
    users = [
        m["content"] for m in shown["messages"] if m["role"] == "user" and m.get("meta") is None
    ]
    assert users == ["hi there", "my name is \nAda", "the sea"]
    bodies = [m["content"] for m in shown["messages"] if m.get("meta") == "skill-body"]
    assert len(bodies) == 1 and "haiku about the sea" in bodies[0]
    assert session["id"] in out  # /session printed it


def test_chat_asks_questions_inline_and_reads_the_answer(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "ask.jsonl",
        [
            {"tool_calls": [tool_call("q", "AskUserQuestion", questions=[QUESTION])]},
            {"text": "Enjoy your drink."},
        ],
    )
    proc = skilldeck(
        "chat",
        "--model",
        f"scripted:{script}",
        "--json",
        cwd=tmp_path,
        input="what should I drink?\nTea\n",
    )
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    result = next(e for e in events if e["type"] == "tool_result")
    assert result["name"] == "AskUserQuestion" and "Tea" in result["content"]
    assert events[-1]["type"] == "done" and events[-1]["status"] == "completed"
    assert "Tea or coffee?" in proc.stderr  # the question went to the console


def test_chat_continues_an_existing_session(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"text": "first"}, {"text": "second"}])
    skilldeck("chat", "--model", f"scripted:{script}", cwd=tmp_path, input="one\n")
    (session,) = json.loads(skilldeck("sessions", "list", "--json", cwd=tmp_path).stdout)
    proc = skilldeck(
        "chat",
        "--model",
        f"scripted:{script}",
        "--session",
        session["id"],
        cwd=tmp_path,
        input="two\n",
    )
    assert proc.returncode == 0, proc.stderr
    assert "second" in proc.stdout
    (again,) = json.loads(skilldeck("sessions", "list", "--json", cwd=tmp_path).stdout)
    assert again["id"] == session["id"] and again["message_count"] == 5


def test_skill_invoked_by_hand_preapproves_its_allowed_tools(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "scribe"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: scribe\ndescription: Writes notes to files.\nallowed-tools: Write\n"
        "forbidden-tools: Bash\n---\nWrite the notes to notes.txt.\n",
        encoding="utf-8",
    )
    script = write_script(
        tmp_path / "chat.jsonl",
        [
            {"tool_calls": [tool_call("w", "Write", file_path="notes.txt", content="hi\n")]},
            {"tool_calls": [tool_call("b", "Bash", command="echo nope")]},
            {"text": "Saved."},
        ],
    )
    proc = skilldeck(
        "chat", "--model", f"scripted:{script}", "--root", str(tmp_path / "skills"),
        cwd=tmp_path, input="/skill scribe meeting notes\n/exit\n",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "hi\n"
    assert "approve?" not in proc.stdout  # Write was pre-approved, Bash denied outright
    (session,) = json.loads(skilldeck("sessions", "list", "--json", cwd=tmp_path).stdout)
    shown = json.loads(skilldeck("sessions", "show", session["id"], "--json", cwd=tmp_path).stdout)
    bash = next(m for m in shown["messages"] if m["role"] == "tool" and m["name"] == "Bash")
    assert bash["is_error"] and "denied" in bash["content"].lower()


def test_skill_by_hand_expands_dynamic_context_through_the_sessions_gate(
    tmp_path: Path,
) -> None:
    """Issue 16: chat's /skill loads like the Skill tool: an allowed command's output
    replaces the !`…` in the stored body; a refused one is reported, nothing sent."""
    folder = tmp_path / "skills" / "stamp"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: stamp\ndescription: Stamps.\nallowed-tools: Bash(echo:*)\n---\n"
        "Stamp: !`echo SENTINEL`\n",
        encoding="utf-8",
    )
    script = write_script(tmp_path / "chat.jsonl", [{"text": "Stamped."}])
    proc = skilldeck(
        "chat", "--model", f"scripted:{script}", "--root", str(tmp_path / "skills"),
        cwd=tmp_path, input="/skill stamp\n/exit\n",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (session,) = json.loads(skilldeck("sessions", "list", "--json", cwd=tmp_path).stdout)
    shown = json.loads(skilldeck("sessions", "show", session["id"], "--json", cwd=tmp_path).stdout)
    bodies = [m["content"] for m in shown["messages"] if m.get("meta") == "skill-body"]
    assert len(bodies) == 1 and "Stamp: SENTINEL" in bodies[0] and "!`echo" not in bodies[0]
    denied = skilldeck(
        "chat", "--model", f"scripted:{script}", "--root", str(tmp_path / "skills"),
        "--deny", "Bash(echo:*)", cwd=tmp_path, input="/skill stamp\n/exit\n",
    )  # fmt: skip
    assert "echo SENTINEL" in denied.stdout + denied.stderr
    assert "not allowed" in denied.stdout + denied.stderr
