"""``skilldeck skills eval`` ranks what an agent here would see: a disabled or
unavailable skill never takes another skill's request; the evals of skills nothing
could pick are listed as not run; a disabled skill the author names (by folder or
name) is evaluated as if enabled, and the report says so. Through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import skilldeck

QUERY = "extract the tables from this PDF file"
EVALS = [
    {"query": QUERY, "should_trigger": True},
    {"query": "write a commit message for my staged git changes", "should_trigger": False},
]
CATALOG = {
    "pdf-tools": ("Extract text and tables from PDF files, fill PDF forms.", ""),
    "git-commit": ("Write conventional commit messages for staged git changes.", ""),
    "slack-gif-creator": ("Create animated GIFs sized for Slack emoji and messages.", ""),
    # the best match for QUERY, but this machine lacks its program
    "gated-pdf": (
        "Extract the tables from this PDF file; PDF tables extraction.",
        "requires-bins: [no-such-program-xyz]\n",
    ),
    # a good match too, disabled in the user's config
    "pdf-extract-pro": ("Extract text and tables from PDF files; PDF table extraction.", ""),
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "skills"
    for name, (description, extra) in CATALOG.items():
        folder = base / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n# {name}\n",
            encoding="utf-8",
        )
    for name in ("pdf-tools", "pdf-extract-pro"):
        (base / name / "evals").mkdir()
        (base / name / "evals" / "trigger_evals.json").write_text(json.dumps(EVALS))
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[skills]\ndisabled = ["pdf-extract-pro"]\n')
    return base


def run(*args: str, cwd: Path) -> Any:
    env = {"SKILLDECK_HOME": str(cwd / "home"), "HOME": str(cwd)}
    base = ("--no-defaults", "--threshold", "0.05")
    return skilldeck("skills", "eval", *args, *base, cwd=cwd, env=env)


def test_unusable_skills_never_take_requests(root: Path, tmp_path: Path) -> None:
    done = run("--root", str(root), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    (pdf,) = data["skills"]  # the disabled skill's evals are not run...
    assert pdf["skill"] == "pdf-tools" and pdf["confusions"] == {}  # ...gated-pdf takes none
    assert data["summary"]["passed"] == 2
    assert data["not_run"] == [
        {
            "skill": "pdf-extract-pro",
            "reason": "disabled in config; `skilldeck skills eval pdf-extract-pro` "
            "evaluates it as if enabled",
            "cases": 2,
        }
    ]
    assert data["evaluated_as_if_enabled"] == []
    text = run("--root", str(root), cwd=tmp_path)
    assert "pdf-extract-pro not evaluated (2 request(s)): disabled in config" in " ".join(
        text.stdout.split()
    )
    assert max(map(len, text.stdout.splitlines())) <= 80


@pytest.mark.parametrize("by", ["name", "folder"])
def test_a_named_disabled_skill_is_evaluated_as_if_enabled(
    root: Path, tmp_path: Path, by: str
) -> None:
    target = "pdf-extract-pro" if by == "name" else str(root / "pdf-extract-pro")
    done = run(target, "--root", str(root), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [s["skill"] for s in data["skills"]] == ["pdf-extract-pro"]
    assert data["summary"]["passed"] == 2  # it took its request: gated-pdf could not
    assert data["not_run"] == [] and data["evaluated_as_if_enabled"] == ["pdf-extract-pro"]
    text = run(target, "--root", str(root), cwd=tmp_path)
    flat = " ".join(text.stdout.split())
    assert "pdf-extract-pro is disabled in config: evaluated as if enabled" in flat
    assert "skilldeck skills enable pdf-extract-pro" in flat
    assert max(map(len, text.stdout.splitlines())) <= 80
    config = (tmp_path / "home" / "config.toml").read_text()
    assert "pdf-extract-pro" in config  # nothing was enabled for real


def test_a_suite_naming_a_disabled_skill_says_why_it_was_not_run(
    root: Path, tmp_path: Path
) -> None:
    suite = tmp_path / "suite.json"
    suite.write_text(
        json.dumps(
            [
                {"skill": "pdf-extract-pro", "query": QUERY},
                {"skill": "pdf-tools", "query": QUERY},
            ]
        )
    )
    done = run(str(suite), "--root", str(root), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [n["skill"] for n in data["not_run"]] == ["pdf-extract-pro"]
    assert [c["skill"] for c in data["cases"]] == ["pdf-tools"]
    assert data["cases"][0]["picks"] == ["pdf-tools"]


def test_coexist_counts_only_what_an_agent_here_sees(root: Path, tmp_path: Path) -> None:
    new = tmp_path / "new" / "pdf-table-grabber"
    new.mkdir(parents=True)
    (new / "SKILL.md").write_text(
        "---\nname: pdf-table-grabber\ndescription: Grab tables from a PDF file.\n---\n\n# g\n",
        encoding="utf-8",
    )
    done = run("--root", str(root), "--coexist", str(new), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["checked_requests"] == 1  # pdf-tools' one should-trigger request
    assert data["level1_before"]["skills"] == 3  # gated-pdf and the disabled one left out
    assert data["level1_after"]["skills"] == 4
