"""``skilldeck skills match`` in a fresh process: the first run builds the routing
index (numpy); a warm run ranks from it without importing numpy, printing the same."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SKILLS = {
    "pdf-tools": ("Extract text and tables from PDF files.", "Use pdfplumber; OCR scans."),
    "git-commit": ("Write conventional commit messages.", "Run git diff --staged first."),
    "table-report": ("Summarise a table as a text report.", "Tables, text, PDF exports."),
}


def run_match(root: Path, home: Path, *extra: str) -> tuple[str, set[str]]:
    """stdout and the modules imported (``-X importtime``) of one match run."""
    env = {**os.environ, "SKILLDECK_HOME": str(home), "HOME": str(home)}
    argv = ["skills", "match", "text from a pdf table", "--root", str(root), "--no-defaults"]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "skilldeck.cli.main", *argv, *extra],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    return proc.stdout, modules


def test_a_warm_match_prints_the_same_without_numpy(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    for name, (description, body) in SKILLS.items():
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n", encoding="utf-8"
        )
    for n, extra in enumerate([("--json",), ("--json", "--top", "1"), ()]):
        home = tmp_path / f"home{n}"
        home.mkdir()
        cold_out, cold_modules = run_match(root, home, *extra)
        assert "numpy" in cold_modules  # the matcher ranked and built the index
        warm_out, warm_modules = run_match(root, home, *extra)
        assert "numpy" not in warm_modules
        assert warm_out == cold_out
        assert "pdf-tools" in warm_out
