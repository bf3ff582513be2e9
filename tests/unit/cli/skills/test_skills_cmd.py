"""``skilldeck skills list|validate|show|prompt|enable|disable|new`` in-process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from skill_fixtures import write_skill_md as write_skill
from skilldeck.cli.main import build_app
from skilldeck.config import read_toml
from skilldeck.errors import SkillNotFoundError


def run(*args: str) -> Any:
    argv = ["skills", *args]
    return CliRunner().invoke(build_app(argv), argv)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace = tmp_path / "ws"
    write_skill(workspace / ".claude" / "skills" / "alpha", description="Workspace alpha.")
    write_skill(workspace / ".claude" / "skills" / "beta")
    monkeypatch.chdir(workspace)
    return workspace


def test_list_json_fields(ws: Path) -> None:
    result = run("list", "--json")
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    alpha = rows["alpha"]
    assert alpha["description"] == "Workspace alpha."
    assert alpha["path"] == str(ws / ".claude" / "skills" / "alpha")
    assert (alpha["source"], alpha["kind"], alpha["enabled"], alpha["version"]) == (
        "workspace",
        "prompt",
        True,
        None,
    )
    assert all(r["status"] == "active" for r in rows.values())


def test_list_roots_precede_defaults_in_order(ws: Path, tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    write_skill(one / "alpha", description="From one.")
    write_skill(two / "alpha", description="From two.")
    rows = json.loads(run("list", "--json", "--root", str(one), "--root", str(two)).stdout)
    alpha = next(r for r in rows if r["name"] == "alpha")
    assert (alpha["description"], alpha["source"]) == ("From one.", "root")
    everything = json.loads(
        run("list", "--json", "--all", "--root", str(one), "--root", str(two)).stdout
    )
    alphas = [(r["description"], r["status"]) for r in everything if r["name"] == "alpha"]
    assert alphas == [
        ("From one.", "active"),
        ("From two.", "shadowed"),
        ("Workspace alpha.", "shadowed"),
    ]


def test_list_no_defaults(ws: Path, tmp_path: Path) -> None:
    write_skill(tmp_path / "only" / "solo")
    rows = json.loads(
        run("list", "--json", "--no-defaults", "--root", str(tmp_path / "only")).stdout
    )
    assert [r["name"] for r in rows] == ["solo"]


def test_list_all_shows_invalid_and_disabled(ws: Path) -> None:
    bad = ws / ".claude" / "skills" / "broken"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: broken\n---\n", encoding="utf-8")
    assert run("disable", "beta").exit_code == 0
    rows = {r["name"]: r for r in json.loads(run("list", "--json", "--all").stdout)}
    assert rows["broken"]["status"] == "invalid"
    assert rows["broken"]["errors"] and {"code", "message", "line"} <= set(
        rows["broken"]["errors"][0]
    )
    assert (rows["beta"]["status"], rows["beta"]["enabled"]) == ("disabled", False)
    plain = [r["name"] for r in json.loads(run("list", "--json").stdout)]
    assert "beta" not in plain and "broken" not in plain


def test_list_human_output(ws: Path) -> None:
    result = run("list")
    assert result.exit_code == 0
    assert "alpha" in result.stdout and "Workspace alpha." in result.stdout
    assert "skill(s)" in result.stdout


def test_list_missing_root_is_usage_error(ws: Path, tmp_path: Path) -> None:
    result = run("list", "--root", str(tmp_path / "missing"))
    assert result.exit_code == 2
    assert "not a folder" in result.stderr
    assert run("list", "--no-defaults").exit_code == 2


def test_validate_exit_codes_and_json(ws: Path, tmp_path: Path) -> None:
    good = ws / ".claude" / "skills" / "alpha"
    assert run("validate", str(good)).exit_code == 0
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: bad\n---\n", encoding="utf-8")
    result = run("validate", str(good), str(bad / "SKILL.md"), "--json")
    assert result.exit_code == 1
    reports = json.loads(result.stdout)
    assert [r["valid"] for r in reports] == [True, False]
    assert set(reports[1]) >= {"path", "name", "valid", "errors", "warnings"}
    assert set(reports[1]["errors"][0]) >= {"code", "message", "line"}
    assert run("validate", str(tmp_path / "nope")).exit_code == 2


def test_validate_human_lines_carry_path_line_code(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: bad\ndescription: [x\n---\n", encoding="utf-8")
    result = run("validate", str(tmp_path))
    assert result.exit_code == 1
    # the line that opens the unclosed `[`, not the closing `---` where libyaml gave up
    assert f"{bad / 'SKILL.md'}:3: error SD003" in " ".join(result.stdout.split())


def test_validate_strict(tmp_path: Path) -> None:
    folder = tmp_path / "extra-field"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: extra-field\ndescription: d\nversion: '1'\n---\n", encoding="utf-8"
    )
    assert run("validate", str(folder)).exit_code == 0
    assert run("validate", "--strict", str(folder)).exit_code == 1


def test_show_json_and_human(ws: Path) -> None:
    (ws / ".claude" / "skills" / "alpha" / "references").mkdir()
    (ws / ".claude" / "skills" / "alpha" / "references" / "x.md").write_text("x", encoding="utf-8")
    data = json.loads(run("show", "alpha", "--json").stdout)
    assert data["name"] == "alpha" and data["body"] == "# Body"
    assert data["resources"] == ["references/x.md"]
    assert data["metadata"]["description"] == "Workspace alpha."
    assert data["skill_md"].endswith("alpha/SKILL.md")
    human = run("show", "alpha")
    assert human.exit_code == 0 and "# Body" in human.stdout and "references/x.md" in human.stdout


def test_show_renders_credentials_and_dependencies_readably(ws: Path) -> None:
    folder = ws / ".claude" / "skills" / "creds"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: creds\ndescription: Uses tokens.\ncredentials:\n"
        "  - name: GITHUB_TOKEN\n    description: a token with repo scope\n"
        "  - name: OTHER_KEY\n    required: false\n"
        "dependencies: {python: [requests>=2.31, pyyaml]}\n---\n\nBody\n",
        encoding="utf-8",
    )
    out = run("show", "creds").stdout
    assert "{" not in out and "[" not in out and "'" not in out  # no Python repr
    lines = [line.strip() for line in out.splitlines()]
    assert "GITHUB_TOKEN (required, not set: skilldeck secrets set GITHUB_TOKEN)" in lines
    assert "a token with repo scope" in lines
    assert "OTHER_KEY (optional, not set: skilldeck secrets set OTHER_KEY)" in lines
    assert "python: requests>=2.31, pyyaml" in lines
    stored = CliRunner().invoke(
        build_app(["secrets", "set"]), ["secrets", "set", "GITHUB_TOKEN"], input="ghp_secret1\n"
    )
    assert stored.exit_code == 0, stored.output
    out = run("show", "creds").stdout
    assert "GITHUB_TOKEN (required, set)" in out and "ghp_secret1" not in out


def test_show_unknown_suggests(ws: Path) -> None:
    result = run("show", "alpah")
    assert isinstance(result.exception, SkillNotFoundError)
    assert "alpha" in result.exception.suggestions


def test_prompt_prints_the_block_within_budget(ws: Path) -> None:
    result = run("prompt")
    assert result.exit_code == 0
    assert result.stdout.startswith("<available_skills>")
    assert "<name>alpha</name>" in result.stdout
    small = run("prompt", "--budget", "300")
    assert len(small.stdout.rstrip("\n")) <= 300
    assert "not shown" in small.stdout


def test_prompt_with_nothing_to_show_says_why_on_stderr(ws: Path) -> None:
    write_skill(
        ws / ".claude" / "skills" / "manual",
        description="Only by hand.\ndisable-model-invocation: true",
    )
    assert run("disable", "alpha").exit_code == 0
    assert run("disable", "beta").exit_code == 0
    result = run("prompt", "--root", str(ws / ".claude" / "skills"), "--no-defaults")
    assert result.exit_code == 0
    assert result.stdout == ""  # not an empty line: nothing is what the model sees
    assert result.stderr.startswith(
        "note: no skill is shown to the model (3 found: 2 disabled, 0 unavailable here, "
        "1 with disable-model-invocation)."
    )


def test_enable_disable_persist(ws: Path, skilldeck_home: Path) -> None:
    assert run("disable", "alpha").exit_code == 0
    assert read_toml(skilldeck_home / "config.toml")["skills"]["disabled"] == ["alpha"]
    assert "<name>alpha</name>" not in run("prompt").stdout
    assert run("enable", "alpha").exit_code == 0
    assert read_toml(skilldeck_home / "config.toml")["skills"]["disabled"] == []
    assert isinstance(run("disable", "nope").exception, SkillNotFoundError)


@pytest.mark.parametrize("kind", ["prompt", "script", "code"])
def test_new_creates_a_strict_valid_skill(ws: Path, kind: str) -> None:
    result = run("new", f"made-{kind}", "--kind", kind)
    assert result.exit_code == 0, result.output
    folder = ws / ".skilldeck" / "skills" / f"made-{kind}"
    assert (folder / "SKILL.md").is_file()
    assert run("validate", "--strict", str(folder)).exit_code == 0
    rows = {r["name"]: r for r in json.loads(run("list", "--json").stdout)}
    assert rows[f"made-{kind}"]["kind"] == kind


def test_new_into_dir_and_refusals(tmp_path: Path) -> None:
    assert run("new", "x-skill", "--dir", str(tmp_path)).exit_code == 0
    again = run("new", "x-skill", "--dir", str(tmp_path))
    assert again.exit_code != 0 and "already exists" in str(again.exception)
    assert run("new", "y", "--kind", "binary").exit_code == 2


def test_show_a_broken_skill_explains_why(ws: Path) -> None:
    bad = ws / ".claude" / "skills" / "broken"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: broken\n---\n", encoding="utf-8")
    human = run("show", "broken")
    assert human.exit_code == 1
    assert "does not load" in human.stderr and "SD" in human.stderr
    data = json.loads(run("show", "broken", "--json").stdout)
    assert data[0]["status"] == "invalid" and data[0]["errors"]
