"""``skills install --json`` when a source holds several skills: ``error`` is the
whole message (not its first line), and each candidate is an object naming its
folder inside the source — two skills of one name are told apart; ``--all`` over
two skills of one name installs nothing and says which folders."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from cli_helpers import skilldeck

from source_fixtures import skill_md


def same_name(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("one/SKILL.md", skill_md("twin", "one"))
        zf.writestr("two/SKILL.md", skill_md("twin", "two"))
    return path


def test_json_candidates_name_their_folders(tmp_path: Path) -> None:
    archive = same_name(tmp_path / "samename.zip")
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"SKILLDECK_HOME": str(tmp_path / "home")}

    listed = skilldeck("skills", "install", str(archive), "--json", cwd=ws, env=env)
    assert listed.returncode == 1
    doc = json.loads(listed.stdout)
    assert doc["error"] == (
        f"{archive} holds 2 skills; choose with --skill NAME (repeatable) or install them "
        "all with --all."
    )
    description = "The twin skill for source tests ({}). Use when testing installs."
    assert doc["candidates"] == [
        {"name": "twin", "subpath": "one", "description": description.format("one")},
        {"name": "twin", "subpath": "two", "description": description.format("two")},
    ]


def test_all_over_two_skills_of_one_name_installs_nothing(tmp_path: Path) -> None:
    archive = same_name(tmp_path / "samename.zip")
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"SKILLDECK_HOME": str(tmp_path / "home")}

    done = skilldeck("skills", "install", str(archive), "--all", cwd=ws, env=env)
    assert done.returncode == 1
    assert "2 skills named 'twin', in one, two" in done.stderr, done.stderr
    assert "Nothing was installed" in done.stderr and "Traceback" not in done.stderr
    assert "Installed" not in done.stdout and not (ws / ".skilldeck").exists()

    as_json = skilldeck("skills", "install", str(archive), "--all", "--json", cwd=ws, env=env)
    assert as_json.returncode == 1
    doc = json.loads(as_json.stdout)
    assert doc["error"].startswith(f"{archive} holds 2 skills named 'twin', in one, two: ")
    assert doc["error"].endswith("any others with more --skill NAME.")
    assert [(c["name"], c["subpath"]) for c in doc["candidates"]] == [
        ("twin", "one"),
        ("twin", "two"),
    ]
