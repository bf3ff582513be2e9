"""The real CLI: a zip of several skills is listed and chosen from like a git source,
a malformed skills.lock entry does not block ``uninstall``, and a dangling
``.skilldeck`` symlink is one clear error — never a traceback."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from cli_helpers import skilldeck

from source_fixtures import skill_md


def kit(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name in ("alpha", "beta"):
            zf.writestr(f"kit-main/skills/{name}/SKILL.md", skill_md(name))
    return path


def test_an_archive_of_several_skills_is_listed_then_chosen(tmp_path: Path) -> None:
    archive = kit(tmp_path / "kit.zip")
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"SKILLDECK_HOME": str(tmp_path / "home")}

    listed = skilldeck("skills", "install", str(archive), cwd=ws, env=env)
    assert listed.returncode == 1
    assert f"{archive} holds 2 skills:" in listed.stderr
    assert "alpha — " in listed.stderr and "--skill NAME" in listed.stderr
    assert "Traceback" not in listed.stderr and not (ws / ".skilldeck").exists()

    as_json = skilldeck("skills", "install", str(archive), "--json", cwd=ws, env=env)
    assert as_json.returncode == 1
    listing = json.loads(as_json.stdout)["candidates"]
    assert [(c["name"], c["subpath"]) for c in listing] == [
        ("alpha", "kit-main/skills/alpha"),
        ("beta", "kit-main/skills/beta"),
    ]

    done = skilldeck("skills", "install", str(archive), "--skill", "beta", cwd=ws, env=env)
    assert done.returncode == 0, done.stderr
    assert "Installed beta" in done.stdout
    lock = json.loads((ws / ".skilldeck" / "skills.lock").read_text(encoding="utf-8"))
    assert lock["skills"]["beta"]["subpath"] == "kit-main/skills/beta"

    every = skilldeck("skills", "install", str(archive), "--all", "--force", cwd=ws, env=env)
    assert every.returncode == 0, every.stderr
    assert sorted(p.name for p in (ws / ".skilldeck" / "skills").iterdir()) == ["alpha", "beta"]


def test_uninstall_works_past_a_malformed_entry(tmp_path: Path) -> None:
    archive = kit(tmp_path / "kit.zip")
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"SKILLDECK_HOME": str(tmp_path / "home")}
    done = skilldeck("skills", "install", str(archive), "--all", cwd=ws, env=env)
    assert done.returncode == 0, done.stderr
    lock_file = ws / ".skilldeck" / "skills.lock"
    doc = json.loads(lock_file.read_text(encoding="utf-8"))
    doc["skills"]["alpha"]["files"] = ["SKILL.md"]
    doc["skills"]["beta"]["digest"] = None
    lock_file.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    refused = skilldeck("skills", "verify", cwd=ws, env=env)
    assert refused.returncode == 1 and "malformed lock file" in refused.stderr
    assert "--skill kit-main/skills/alpha" in refused.stderr
    assert "Traceback" not in refused.stderr

    gone = skilldeck("skills", "uninstall", "beta", cwd=ws, env=env)
    assert gone.returncode == 0, gone.stderr
    assert not (ws / ".skilldeck" / "skills" / "beta").exists()
    left = json.loads(lock_file.read_text(encoding="utf-8"))["skills"]
    assert left == {"alpha": doc["skills"]["alpha"]}  # still malformed, untouched


def test_a_dangling_skilldeck_symlink_is_one_clear_error(tmp_path: Path) -> None:
    archive = kit(tmp_path / "kit.zip")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".skilldeck").symlink_to(tmp_path / "nowhere")
    env = {"SKILLDECK_HOME": str(tmp_path / "home")}
    refused = skilldeck("skills", "install", str(archive), "--skill", "alpha", cwd=ws, env=env)
    assert refused.returncode == 1
    assert f"{ws / '.skilldeck'} is a symlink to {tmp_path / 'nowhere'}" in refused.stderr
    assert "File exists" not in refused.stderr and "Traceback" not in refused.stderr
