"""``skilldeck agents list|show`` and ``skilldeck run --agent NAME`` in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import json_events, skilldeck, tool_call, write_script


def write_agent(folder: Path, filename: str, text: str) -> None:
    path = folder / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_list_and_show_with_a_broken_definition_reported(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    agents = tmp_path / ".skilldeck" / "agents"
    write_agent(
        agents,
        "auditor.md",
        "---\nname: auditor\ndescription: Audits dependencies\ntools: Read, Grep\n"
        "disallowed-tools: Bash\nmax-turns: 6\npermission-mode: plan\n---\nYou audit.\n",
    )
    write_agent(agents, "broken.md", "---\nname: [unclosed\n---\nx\n")
    write_agent(
        skilldeck_home / "agents",
        "helper/AGENT.md",
        "---\ndescription: A user-level helper\n---\nYou help.\n",
    )
    listing = skilldeck("agents", "list", "--json", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    rows = {row["name"]: row for row in json.loads(listing.stdout)}
    assert {"general-purpose", "explore", "plan", "reviewer", "auditor", "helper"} <= set(rows)
    assert "broken" not in rows
    assert "broken.md" in listing.stderr  # reported, not fatal
    auditor = rows["auditor"]
    assert (auditor["source"], auditor["tools"], auditor["disallowed_tools"]) == (
        "workspace",
        ["Read", "Grep"],
        ["Bash"],
    )
    assert auditor["max_turns"] == 6 and auditor["permission_mode"] == "plan"
    assert rows["helper"]["source"] == "user" and rows["reviewer"]["source"] == "bundled"

    human = skilldeck("agents", "list", cwd=tmp_path)
    assert human.returncode == 0 and "auditor" in human.stdout and "agent(s)" in human.stdout

    shown = skilldeck("agents", "show", "auditor", "--json", cwd=tmp_path)
    assert shown.returncode == 0
    data = json.loads(shown.stdout)
    assert data["instructions"] == "You audit." and data["path"].endswith("auditor.md")
    text = skilldeck("agents", "show", "explore", cwd=tmp_path)
    assert "Read, Glob, Grep" in text.stdout and "read-only exploration" in text.stdout
    unknown = skilldeck("agents", "show", "auditr", cwd=tmp_path)
    assert unknown.returncode == 1 and "Did you mean: auditor" in unknown.stderr


def test_run_as_an_agent_definition(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "deps.txt").write_text("requests==2.0\n", encoding="utf-8")
    script = write_script(
        tmp_path / "auditor.jsonl",
        [
            {
                "tool_calls": [
                    tool_call("w", "Write", file_path="deps.txt", content="gone"),
                    tool_call("r", "Read", file_path="deps.txt"),
                ]
            },
            {"tool_calls": [tool_call("g", "Grep", pattern="requests")]},
            {"text": "never reached: max-turns is 2"},
        ],
    )
    write_agent(
        work / ".skilldeck" / "agents",
        "auditor.md",
        f"---\ndescription: Audits\nmodel: scripted:{script}\ntools: Read, Grep\n"
        "max-turns: 2\n---\nYou audit dependencies and never change files.\n",
    )
    proc = skilldeck("run", "audit the dependencies", "--agent", "auditor", "--json", cwd=work)
    assert proc.returncode == 3, proc.stderr  # stopped by the definition's max-turns
    events = json_events(proc.stdout)
    results = {e["id"]: e for e in events if e["type"] == "tool_result"}
    assert "tool Write is not allowed by agent 'auditor'" in results["w"]["content"]
    assert "requests==2.0" in results["r"]["content"]
    assert (work / "deps.txt").read_text(encoding="utf-8") == "requests==2.0\n"
    done = events[-1]
    assert done["status"] == "max_turns" and "(2)" in done["reason"]

    shown = json.loads(skilldeck("sessions", "show", done["session_id"], "--json", cwd=work).stdout)
    assert shown["session"]["agent"] == "auditor"
    system = shown["messages"][0]["content"]
    assert system.startswith("You audit dependencies and never change files.")
    assert "- Tools: Read, Grep" in system

    missing = skilldeck("run", "x", "--agent", "auditr", cwd=work)
    assert missing.returncode == 1 and "No agent named 'auditr'" in missing.stderr
