"""QA findings on lock files and installs, through the real CLI: a malformed
``skills.lock`` is one error line (not a traceback) in verify/check/update, a refused
install or a no-op uninstall leaves no ``./.skilldeck``, ``--skill`` refuses an
ambiguous name, and validation errors name the source, not a staging folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import skilldeck

GOOD_MD = "---\nname: good\ndescription: A good skill for testing things.\n---\nBody here.\n"
ENV = {"SKILLDECK_EMBEDDINGS": "none"}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "good").mkdir(parents=True)
    (ws / "good" / "SKILL.md").write_text(GOOD_MD, encoding="utf-8")
    return ws


def test_a_malformed_lock_is_one_clear_error(ws: Path, skilldeck_home: Path) -> None:
    done = skilldeck("skills", "install", "./good", "--scope", "user", cwd=ws, env=ENV)
    assert done.returncode == 0, done.stderr
    lock = skilldeck_home / "skills.lock"
    doc = json.loads(lock.read_text(encoding="utf-8"))
    doc["skills"]["good"]["files"] = ["SKILL.md"]
    lock.write_text(json.dumps(doc), encoding="utf-8")
    for command in (["verify"], ["check"], ["update", "--all"]):
        out = skilldeck("skills", *command, cwd=ws, env=ENV)
        assert out.returncode == 1, command
        assert "Traceback" not in out.stderr and "has no attribute" not in out.stderr
        assert "malformed lock file" in out.stderr and "'good'" in out.stderr
        assert "'files' is a list" in out.stderr
    lock.write_text(json.dumps({"format": 1, "skills": []}), encoding="utf-8")
    out = skilldeck("skills", "verify", cwd=ws, env=ENV)
    assert out.returncode == 1 and "malformed lock file" in out.stderr
    assert "No installed skills" not in out.stdout


def test_refusals_leave_no_workspace_folder(ws: Path) -> None:
    (ws / "notzip.skill").write_text("not a zip\n", encoding="utf-8")
    out = skilldeck("skills", "install", "notzip.skill", cwd=ws, env=ENV)
    assert out.returncode == 1 and "not a readable" in out.stderr
    assert not (ws / ".skilldeck").exists()
    out = skilldeck("skills", "uninstall", "nothere", cwd=ws, env=ENV)
    assert out.returncode == 1 and "not installed" in out.stderr
    assert not (ws / ".skilldeck").exists()


def test_an_ambiguous_skill_name_is_refused(ws: Path) -> None:
    for side in ("a", "b"):
        (ws / "multi" / side / "good").mkdir(parents=True)
        (ws / "multi" / side / "good" / "SKILL.md").write_text(GOOD_MD, encoding="utf-8")
    out = skilldeck("skills", "install", "./multi", "--skill", "good", cwd=ws, env=ENV)
    assert out.returncode == 1
    assert "2 skills named 'good'" in out.stderr and "a/good, b/good" in out.stderr
    assert "skilldeck skills install ./multi/a/good" in out.stderr
    assert not (ws / ".skilldeck").exists()


def test_an_invalid_skill_is_named_by_its_source(ws: Path) -> None:
    (ws / "bad").mkdir()
    (ws / "bad" / "SKILL.md").write_text("---\nname: bad\ndescription:\n---\nb\n", "utf-8")
    out = skilldeck("skills", "install", "./bad", "--scope", "user", cwd=ws, env=ENV)
    assert out.returncode == 1
    assert "bad/SKILL.md:3: SD110" in out.stderr
    assert ".install-" not in out.stderr
