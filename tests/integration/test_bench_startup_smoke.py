"""The start-up benchmark keeps running: one repetition, every row present, figures
positive. (The figures come from ``python -m bench startup``; no test asserts a
timing.)"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

startup = pytest.importorskip("bench.startup")


def test_startup_benchmark_runs_once_and_prints_its_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not (shutil.which("agentskills") or (Path(sys.executable).parent / "agentskills").exists()):
        pytest.skip("agentskills (skills-ref) is not installed")
    results = tmp_path / "startup.json"
    argv = ["--repeat", "1", "--corpus", str(tmp_path / "no-corpus"), "--results", str(results)]
    assert startup.main(argv) == 0
    out = capsys.readouterr().out
    assert "ratio = skilldeck / agentskills" in out
    rows = json.loads(results.read_text(encoding="utf-8"))["results"]
    assert [r["row"] for r in rows] == ["help", "version", "validate", "missing key"]
    for row in rows:
        assert row["row"] in out
        assert row["skilldeck_s"] > 0 and row["baseline_s"] > 0 and row["ratio"] > 0
    by_row = {r["row"]: r for r in rows}
    assert by_row["help"]["skilldeck_exit"] == by_row["version"]["skilldeck_exit"] == 0
    assert by_row["validate"]["skilldeck_exit"] == 0  # the generated skill is valid
    assert by_row["missing key"]["skilldeck_exit"] == 1
    assert isinstance(by_row["missing key"]["sdk_imported"], bool)


def test_startup_benchmark_skips_cleanly_without_agentskills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(startup.shutil, "which", lambda *a, **k: None)
    assert startup.main(["--results", str(tmp_path / "r.json")]) == 0
    assert "skipped" in capsys.readouterr().out
    assert not (tmp_path / "r.json").exists()
