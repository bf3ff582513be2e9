"""``python -m bench compare``: figures read back, classified and judged; one tiny run
of the loop benchmark for two revisions end to end. (No test asserts a timing.)"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

compare = pytest.importorskip("bench.compare")


def test_flatten_names_list_items_and_skips_run_metadata() -> None:
    data = {
        "meta": {"started": 1.0},
        "results": [
            {"tree": "corpus", "cold_s": 0.5, "ok": True, "medians": {"cold_s": 0.6}, "cpus": 2}
        ],
        "loop": {"ms_per_turn": {"baseline": 0.2, "agent_disk_db": 0.8}},
    }
    assert dict(compare.flatten(data)) == {
        "results.corpus.cold_s": 0.5,
        "results.corpus.medians.cold_s": 0.6,
        "loop.ms_per_turn.baseline": 0.2,
        "loop.ms_per_turn.agent_disk_db": 0.8,
    }


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("results.corpus.cold_s", "time"),
        ("results.corpus.skills_ref_s", "control"),
        ("results.corpus.cold_speedup", "info"),
        ("loop.ms_per_turn.agent_disk_db", "time"),
        ("loop.ms_per_turn.baseline", "control"),
        ("loop.ratio_vs_baseline.disk_db", "info"),
        ("trim.naive_recount_and_trim_ms", "control"),
        ("systems.skilldeck.all.top1", "quality"),
        ("systems.skilldeck.latency_3200.p99_ms", "time"),
        ("systems.bm25-name-desc.latency_3200.p99_ms", "control"),
        ("corpus_skills", "info"),
        ("build_seconds.skilldeck", "time"),
        ("results.corpus.skills_ref_loaded", "info"),
        ("systems.keyword-overlap.all.top1", "control"),
    ],
)
def test_kind(key: str, kind: str) -> None:
    assert compare.kind(key) == kind


def test_verdicts_and_the_best_of_the_rounds() -> None:
    assert compare.verdict("x.cold_s", 1.0, 1.06, 0.05) == "REGRESSION"
    assert compare.verdict("x.cold_s", 1.0, 1.04, 0.05) == ""
    assert compare.verdict("x.cold_s", 1.0, 0.90, 0.05) == "faster"
    assert compare.verdict("s.all.top1", 0.80, 0.75, 0.05) == "REGRESSION"
    assert compare.verdict("s.all.top1", 0.80, 0.81, 0.05) == "changed"
    assert compare.verdict("s.all.none_hinted", 0.05, 0.06, 0.05) == "REGRESSION"
    assert compare.verdict("x.cold_speedup", 10.0, 1.0, 0.05) == ""  # derived: never flagged
    rounds = [{"cold_s": 2.0, "top1": 0.7}, {"cold_s": 1.0, "top1": 0.9}, {"cold_s": 3.0}]
    assert compare.combine(rounds) == {"cold_s": 1.0, "top1": 0.8}  # min time, median else


def test_compare_runs_the_loop_benchmark_for_two_revisions(tmp_path: Path) -> None:
    inside = subprocess.run(
        ["git", "-C", str(compare.REPO), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    if inside.returncode != 0:
        pytest.skip("not a git checkout")
    out = tmp_path / "compare.json"
    argv = ["loop", "--baseline", "HEAD", "--new", "HEAD", "--rounds", "1", "--json", str(out)]
    argv += ["--args", "loop=--turns 3 --repeat 1 --history 40"]
    assert compare.main(argv) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    figures = {row["figure"]: row for row in report["loop"]["rows"]}
    assert figures["loop.ms_per_turn.agent_disk_db"]["kind"] == "time"
    assert figures["loop.ms_per_turn.agent_disk_db"]["old"] > 0
    assert report["loop"]["args"] == ["--turns", "3", "--repeat", "1", "--history", "40"]
