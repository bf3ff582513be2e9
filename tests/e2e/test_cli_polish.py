"""The install/check/update/pin wording a QA pass found wanting, through the real CLI
at 80 columns: "(1 file)" kept whole, a pinned skill that says it is pinned, what a
content pin holds, a deleted skill that check reports and ``update --force`` restores."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import skilldeck, write_script

from skill_fixtures import write_skill_md
from source_fixtures import git_repo, serve

NARROW = {"COLUMNS": "80"}


def lock_of(ws: Path) -> dict[str, dict[str, str]]:
    data = json.loads((ws / ".skilldeck" / "skills.lock").read_text(encoding="utf-8"))
    return dict(data["skills"])


def one_file_skill(folder: Path, name: str) -> Path:
    write_skill_md(folder, name, "A one-file skill for wording tests.", "Body.")
    return folder


def test_one_file_is_singular_and_never_split_at_80_columns(tmp_path: Path) -> None:
    source = one_file_skill(tmp_path / "src" / "report-writer", "report-writer")
    ws = tmp_path / "a-workspace-with-a-rather-long-name" / "and-a-deep-folder"
    ws.mkdir(parents=True)
    done = skilldeck("skills", "install", str(source), cwd=ws, env=NARROW)
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if line.startswith("Installed")]
    assert "(1 file) → " in line and "files" not in line
    assert line.endswith(str(ws / ".skilldeck" / "skills" / "report-writer")), done.stdout


def test_update_of_a_pinned_url_skill_says_it_is_pinned_and_how_to_move_it(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    one_file_skill(site / "raw", "report-writer")
    ws = tmp_path / "ws"
    ws.mkdir()
    with serve(site) as base:
        url = f"{base}/raw/SKILL.md"
        assert skilldeck("skills", "install", url, cwd=ws).returncode == 0
        held = skilldeck("skills", "pin", "report-writer", "installed", cwd=ws)
        assert held.returncode == 0, held.stderr
        digest = lock_of(ws)["report-writer"]["digest"]
        said = f"Pinned report-writer to its installed content (sha256 {digest[:12]}…) → "
        assert held.stdout.startswith(said), held.stdout
        assert "to installed" not in held.stdout
        kept = skilldeck("skills", "update", "report-writer", cwd=ws, env=NARROW)
    assert kept.returncode == 0, kept.stderr
    lines = kept.stdout.splitlines()
    assert lines[0] == "pinned report-writer (workspace)", kept.stdout
    assert "up to date" not in kept.stdout
    assert all(len(line) <= 80 and line.startswith("  ") for line in lines[1:]), lines
    said = " ".join(line.strip() for line in lines[1:])
    assert f"`skilldeck skills install {url} --force`" in said and "drops the pin" in said


def test_check_reports_a_deleted_skill_and_update_force_restores_it(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "kit", {"": "report-writer"})
    ws = tmp_path / "ws"
    ws.mkdir()
    assert skilldeck("skills", "install", repo.url, cwd=ws).returncode == 0
    folder = ws / ".skilldeck" / "skills" / "report-writer"
    shutil.rmtree(folder)

    check = skilldeck("skills", "check", cwd=ws, env=NARROW)
    assert check.returncode == 1, check.stdout
    assert check.stdout.startswith("missing report-writer (workspace)")
    said = " ".join(check.stdout.split())
    assert f"{folder} was deleted; restore it with" in said
    assert "`skilldeck skills update --force report-writer`" in said
    as_json = skilldeck("skills", "check", "--json", cwd=ws)
    assert as_json.returncode == 1 and json.loads(as_json.stdout)[0]["state"] == "missing"

    verify = skilldeck("skills", "verify", cwd=ws, env=NARROW)
    assert verify.returncode == 1
    assert verify.stdout.startswith("MISSING report-writer (workspace)\n  "), verify.stdout
    assert "  restore it: `skilldeck skills update --force report-writer`" in verify.stdout
    assert all(line.startswith("  ") for line in verify.stdout.splitlines()[1:])

    restored = skilldeck("skills", "update", "--force", "report-writer", cwd=ws, env=NARROW)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert "updated report-writer" in restored.stdout and (folder / "SKILL.md").is_file()
    assert skilldeck("skills", "verify", cwd=ws).returncode == 0
    assert skilldeck("skills", "check", cwd=ws).returncode == 0


@pytest.mark.usefixtures("untrusted_workspaces")
@pytest.mark.parametrize("as_json", [False, True], ids=["typer", "fast-path"])
def test_no_defaults_does_not_warn_about_skill_roots_it_would_not_read(
    tmp_path: Path, as_json: bool
) -> None:
    ws = tmp_path / "ws"
    one_file_skill(ws / ".skilldeck" / "skills" / "planted", "planted")
    mine = tmp_path / "mine"
    one_file_skill(mine / "report-writer", "report-writer")
    listing = ["skills", "list", *(["--json"] if as_json else [])]

    every_root = skilldeck(*listing, cwd=ws)
    assert ".skilldeck/skills is ignored" in every_root.stderr  # it would have been read
    assert "planted" not in every_root.stdout

    only_mine = skilldeck(*listing, "--root", str(mine), "--no-defaults", cwd=ws)
    assert only_mine.returncode == 0, only_mine.stderr
    assert "report-writer" in only_mine.stdout and "planted" not in only_mine.stdout
    assert "not trusted" not in only_mine.stderr

    (ws / ".skilldeck" / "config.toml").write_text("[skills]\n", encoding="utf-8")
    config = skilldeck(*listing, "--root", str(mine), "--no-defaults", cwd=ws)
    assert ".skilldeck/config.toml is ignored" in config.stderr  # still read, still ignored
    assert ".skilldeck/skills" not in config.stderr


@pytest.mark.usefixtures("untrusted_workspaces")
@pytest.mark.parametrize("command", ["run", "chat"])
def test_no_defaults_agents_do_not_warn_about_skill_roots_either(
    tmp_path: Path, command: str
) -> None:
    """``run``/``chat --no-defaults`` read no workspace skill folder, so the
    untrusted-folder warning names only what they would have read (its config)."""
    ws = tmp_path / "ws"
    one_file_skill(ws / ".skilldeck" / "skills" / "planted", "planted")
    mine = tmp_path / "mine"
    one_file_skill(mine / "report-writer", "report-writer")
    script = write_script(tmp_path / "s.jsonl", [{"text": "done"}])
    args = [command, *(["hi"] if command == "run" else []), "--model", f"scripted:{script}"]

    every_root = skilldeck(*args, cwd=ws, input="")
    assert ".skilldeck/skills is ignored" in every_root.stderr, every_root.stderr

    only_mine = skilldeck(*args, "--root", str(mine), "--no-defaults", cwd=ws, input="")
    assert only_mine.returncode == 0, only_mine.stderr
    assert "not trusted" not in only_mine.stderr

    (ws / ".skilldeck" / "config.toml").write_text("[skills]\n", encoding="utf-8")
    config = skilldeck(*args, "--root", str(mine), "--no-defaults", cwd=ws, input="")
    assert ".skilldeck/config.toml is ignored" in config.stderr
    assert ".skilldeck/skills" not in config.stderr


@pytest.mark.usefixtures("untrusted_workspaces")
def test_an_ignored_config_file_alone_is_it_not_them(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".skilldeck").mkdir(parents=True)
    (ws / ".skilldeck" / "config.toml").write_text("[skills]\n", encoding="utf-8")
    done = skilldeck("skills", "list", cwd=ws)
    assert "may have written it); review it, then run" in done.stderr, done.stderr
