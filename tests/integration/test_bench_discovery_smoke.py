"""The discovery benchmark keeps running: a tiny generated tree, one repeat, every
figure present and sane. (The figures themselves come from ``python -m bench
discovery``; no test asserts a timing.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("skills_ref")
discovery = pytest.importorskip("bench.discovery")


def test_discovery_benchmark_runs_on_a_small_generated_tree(tmp_path: Path) -> None:
    results = tmp_path / "discovery.json"
    argv = ["--skills", "60", "--repeat", "1", "--ref-repeat", "1", "--no-corpus"]
    assert discovery.main([*argv, "--results", str(results)]) == 0
    [row] = json.loads(results.read_text(encoding="utf-8"))["results"]
    assert row["tree"] == "generated" and row["skills"] == 60
    assert row["loaded"] == row["skills_ref_loaded"] == 60 and row["invalid"] == 0
    timings = (
        "cold_s",
        "cold_one_process_s",
        "warm_s",
        "skills_ref_s",
        "cli_list_json_warm_s",
        "per_folder_cpu_s",
    )
    for key in (*timings, "floor_cold_s", "floor_warm_s"):
        assert row[key] > 0
