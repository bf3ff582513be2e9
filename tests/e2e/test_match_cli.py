from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skill_fixtures import write_skill_md

SKILLS = {
    "pdf-tools": ("Extract text and tables from PDF files.", "Use pdfplumber; OCR scans."),
    "git-commit": ("Write conventional commit messages.", "Run git diff --staged first."),
    "slack-gif-creator": ("Animated GIFs for Slack.", "Keep emoji under 128 KB."),
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "skills"
    for name, (description, body) in SKILLS.items():
        folder = base / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n", encoding="utf-8"
        )
    return base


def skilldeck(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SKILLDECK_HOME": str(cwd / "home"), "HOME": str(cwd)}
    return subprocess.run(
        [sys.executable, "-m", "skilldeck.cli.main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_match_json_lists_name_path_score_best_first(root: Path, tmp_path: Path) -> None:
    out = skilldeck(
        "skills",
        "match",
        "pull the text out of a pdf",
        "--root",
        str(root),
        "--no-defaults",
        "--json",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert rows[0]["name"] == "pdf-tools"
    assert Path(rows[0]["path"]) == root / "pdf-tools"
    assert all(set(row) == {"name", "path", "score"} for row in rows)
    scores = [row["score"] for row in rows]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1 for s in scores)
    # the index was cached under SKILLDECK_HOME; a second run uses it
    assert list((tmp_path / "home" / "cache" / "routing").glob("bm25f-*.npz"))
    again = skilldeck(
        "skills",
        "match",
        "commit message",
        "--root",
        str(root),
        "--no-defaults",
        "--json",
        "--top",
        "1",
        cwd=tmp_path,
    )
    assert [row["name"] for row in json.loads(again.stdout)] == ["git-commit"]


def test_match_without_json_prints_a_table(root: Path, tmp_path: Path) -> None:
    out = skilldeck("skills", "match", "animated gif", "--root", str(root), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "slack-gif-creator" in out.stdout


def test_no_match_is_an_empty_array(root: Path, tmp_path: Path) -> None:
    out = skilldeck(
        "skills",
        "match",
        "zebra xylophone",
        "--root",
        str(root),
        "--no-defaults",
        "--json",
        cwd=tmp_path,
    )
    assert out.returncode == 0 and json.loads(out.stdout) == []


def test_usage_errors(tmp_path: Path) -> None:
    out = skilldeck("skills", "match", "x", "--no-defaults", cwd=tmp_path)
    assert out.returncode == 2 and "--root" in out.stderr
    out = skilldeck("skills", "match", "x", "--root", str(tmp_path / "missing"), cwd=tmp_path)
    assert out.returncode == 2 and "not a folder" in out.stderr


def test_a_skill_this_machine_cannot_serve_is_ranked_and_marked(root: Path, tmp_path: Path) -> None:
    """A gated skill still ranks (the request is about it), but the listing says why
    an agent here would not offer it: `unavailable` in --json, a note in the table."""
    (root / "pdf-tools" / "SKILL.md").write_text(
        "---\nname: pdf-tools\ndescription: Extract text and tables from PDF files.\n"
        "requires-bins: [no-such-program-xyz]\n---\n\nUse pdfplumber.\n",
        encoding="utf-8",
    )
    args = ("skills", "match", "pull the text out of a pdf", "--root", str(root), "--no-defaults")
    rows = json.loads(skilldeck(*args, "--json", cwd=tmp_path).stdout)
    assert rows[0]["name"] == "pdf-tools"
    assert "no-such-program-xyz" in rows[0]["unavailable"]
    assert all("unavailable" not in row for row in rows[1:])
    env_width = {**os.environ, "COLUMNS": "80"}
    table = subprocess.run(
        [sys.executable, "-m", "skilldeck.cli.main", *args],
        cwd=tmp_path,
        env={**env_width, "SKILLDECK_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert table.returncode == 0, table.stderr
    assert "(unavailable:" in table.stdout
    assert all(len(line) <= 80 for line in table.stdout.splitlines())


@pytest.mark.usefixtures("untrusted_workspaces")
@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
def test_the_untrusted_folder_warning_is_printed_once(tmp_path: Path, as_json: bool) -> None:
    """``skills match`` loads settings twice; the warning line came out twice."""
    write_skill_md(tmp_path / ".skilldeck" / "skills" / "planted", description="Planted.")
    out = skilldeck(
        "skills", "match", "plant things", *(["--json"] if as_json else []), cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("this folder is not trusted") == 1, out.stderr


@pytest.mark.parametrize("cold", [True, False])
def test_bytes_that_are_not_utf8_in_the_request_are_no_traceback(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cold: bool
) -> None:
    """A shell passes the bytes it was given: ``skilldeck skills match $'\\xff gif'``
    reaches Python as a lone surrogate, which SQLite and the tokenizer refuse (a
    traceback, exit 1). With embeddings on (the default), cold and warm, the word is
    ignored and the rest is ranked."""
    pytest.importorskip("wordllama")
    monkeypatch.delenv("SKILLDECK_EMBEDDINGS", raising=False)
    env = {**os.environ, "SKILLDECK_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    args = [sys.executable.encode(), b"-m", b"skilldeck.cli.main", b"skills", b"match"]
    args += [b"\xff animated gif for slack", b"--root", str(root).encode(), b"--no-defaults"]
    if not cold:  # a first run builds the index and the vectors; the second is warm
        subprocess.run([*args, b"--json"], cwd=tmp_path, env=env, capture_output=True, timeout=60)
    out = subprocess.run([*args, b"--json"], cwd=tmp_path, env=env, capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    assert b"Traceback" not in out.stderr
    assert json.loads(out.stdout)[0]["name"] == "slack-gif-creator"


def test_a_root_whose_name_is_not_utf8_is_kept_and_ranked(root: Path, tmp_path: Path) -> None:
    """A folder named with bytes that are not UTF-8 is a valid root: the argument
    naming it keeps its bytes, and the registry's fingerprint (a cache key) hashes
    them instead of failing to encode the path (a traceback before)."""
    odd = tmp_path / "skills\udcff"
    root.rename(odd)
    env = {**os.environ, "SKILLDECK_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    args = [sys.executable.encode(), b"-m", b"skilldeck.cli.main", b"skills", b"match"]
    args += [b"animated gif for slack", b"--root", os.fsencode(odd), b"--no-defaults", b"--json"]
    out = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    rows = json.loads(out.stdout.decode("utf-8", "surrogateescape"))  # the path's own bytes
    assert rows[0]["name"] == "slack-gif-creator"
