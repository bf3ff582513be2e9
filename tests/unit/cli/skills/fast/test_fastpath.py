"""``skills list --json`` without typer gives what the typer command gives, or declines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from skilldeck.cli.main import build_app
from skilldeck.cli.skills.fast.fastpath import _parse, try_fast


def write_skill(folder: Path, name: str | None = None, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    md = folder / "SKILL.md"
    md.write_text(
        f"---\nname: {name or folder.name}\ndescription: Does {folder.name}.\n{extra}---\n\nB\n",
        encoding="utf-8",
    )
    return md


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skilldeck_home: Path) -> Path:
    workspace = tmp_path / "ws"
    write_skill(workspace / ".claude" / "skills" / "alpha", extra="version: 1.10\nfoo: bar\n")
    write_skill(workspace / ".claude" / "skills" / "beta", name="Beta_Skill")
    write_skill(workspace / ".claude" / "skills" / "gated", extra="requires-bins: [no-such-bin]\n")
    bad = workspace / ".claude" / "skills" / "broken"
    bad.mkdir(parents=True)
    (bad / "SKILL.md").write_text("---\nname: broken\n---\n", encoding="utf-8")
    write_skill(tmp_path / "other" / "alpha")
    write_skill(tmp_path / "other" / "gamma", extra="allowed-tools: Read, Grep\n")
    monkeypatch.chdir(workspace)
    return workspace


def typer_rows(*args: str) -> Any:
    argv = ["skills", "list", *args]
    result = CliRunner().invoke(build_app(argv), argv)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def fast_rows(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    assert try_fast(["skills", "list", *args]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    "args",
    [
        ("--json",),
        ("--json", "--all"),
        ("--all", "--json", "--root", "../other"),
        ("--json", "--no-defaults", "--root=../other"),
    ],
)
def test_same_rows_as_the_typer_command(
    ws: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    expected = typer_rows(*args)
    assert expected
    assert fast_rows(capsys, *args) == expected
    assert fast_rows(capsys, *args) == expected  # warm, from the snapshot


@pytest.mark.parametrize("args", [("--json",), ("--json", "--all")])
def test_scan_problems_go_to_stderr_beside_the_json(
    ws: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    skills = ws / ".claude" / "skills"
    (skills / "dangling").symlink_to(ws / "nowhere")
    (skills / "alpha" / "loop").symlink_to(skills)
    argv = ["skills", "list", *args]
    typer = CliRunner().invoke(build_app(argv), argv)
    for _ in range(2):  # cold, then warm from the snapshot
        assert try_fast(argv) == 0
        out, err = capsys.readouterr()
        assert json.loads(out) == json.loads(typer.stdout)
        assert err == typer.stderr
        assert f"warning {skills / 'dangling'}: SD202 " in err
        assert f"warning {skills / 'alpha' / 'loop'}: SD201 " in err


def test_disabled_skills_and_config_files(
    ws: Path, skilldeck_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    (skilldeck_home / "config.toml").write_text(
        '[skills]\ndisabled = ["beta"]\n[agent]\nmax_turns = 3\n', encoding="utf-8"
    )
    rows = fast_rows(capsys, "--json")
    assert rows == typer_rows("--json")
    assert "beta" not in {r["name"] for r in rows}


def test_usage_errors(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert try_fast(["skills", "list", "--json", "--root", "missing"]) == 2
    assert "--root missing: not a folder." in capsys.readouterr().err
    assert try_fast(["skills", "list", "--json", "--no-defaults"]) == 2
    assert "needs at least one --root" in capsys.readouterr().err


def test_broken_config_is_a_clean_error(
    ws: Path, skilldeck_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    (skilldeck_home / "config.toml").write_text("[skills\n", encoding="utf-8")
    assert try_fast(["skills", "list", "--json"]) == 1
    assert capsys.readouterr().err.startswith("error: ")


@pytest.mark.parametrize(
    "args",
    [
        ["skills", "list"],  # human output: rich
        ["skills", "list", "--json", "--help"],
        ["skills", "list", "--json", "-h"],
        ["skills", "list", "--json", "--root"],
        ["skills", "list", "--json", "--root", "--all"],
        ["skills", "list", "--json", "--roots", "x"],
        ["skills", "list", "--json", "extra"],
        ["skills", "show", "x", "--json"],
    ],
)
def test_everything_else_goes_to_typer(args: list[str]) -> None:
    assert try_fast(args) is None


def test_shell_completion_goes_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_SKILLDECK_COMPLETE", "bash_complete")
    assert try_fast(["skills", "list", "--json"]) is None


def test_parse() -> None:
    assert _parse(["--json", "--root", "a", "--root=b", "--all"]) == (
        [Path("a"), Path("b")],
        False,
        True,
    )
    assert _parse(["--root", "a"]) is None  # not --json
