"""CLI start-up benchmark: skilldeck's commands against skills-ref's ``agentskills``.

A CLI is judged by how fast it answers, and for short commands nearly all of that is
imports. This measures, in one run, the CPU time (user + system of the child process,
from ``getrusage(RUSAGE_CHILDREN)`` deltas) of:

=====================  ==================================  ===========================
row                    skilldeck                           baseline (goal)
=====================  ==================================  ===========================
help                   ``skilldeck --help``                ``agentskills --help`` (1×)
version                ``skilldeck --version``             ``agentskills --help`` (1×)
validate               ``skilldeck skills validate ONE``   ``agentskills validate ONE``
                                                           (1×)
match (warm)           ``skilldeck skills match Q --root   ``agentskills validate ONE``
                       CORPUS --no-defaults --json``       (2×)
                       (the default: BM25F + embeddings)
match --lexical        the same with ``--lexical``         ``agentskills validate ONE``
                                                           (2×)
missing key            ``skilldeck run --model             ``agentskills --help``
                       anthropic:… hi`` without a key      (reported, no goal)
=====================  ==================================  ===========================

Each command runs ``--repeat`` times; the median is reported (the best is stored
too). ``ratio`` is skilldeck / baseline, next to the goal. ONE is a small generated
skill; the corpus (``../shared/corpus``) is needed only for the match row, which is
skipped without it, after one untimed run that builds the snapshot and routing index
in a temporary ``SKILLDECK_HOME``. The missing-key row also says whether the model
SDK was imported before the error, and the match rows whether numpy was imported (a
warm match ranks from the cached index and vectors without it, embeddings included;
``python -X importtime``, one extra run each).

Without ``agentskills`` (the dev extra's skills-ref) the benchmark prints why and
exits 0. The results go to ``bench/results/startup.json``.

Usage: ``python -m bench startup [--repeat N] [--corpus DIR] [--results FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
RESULTS = Path(__file__).resolve().parent / "results" / "startup.json"
QUERY = "extract the text and tables from a PDF file"
SDKS = frozenset({"anthropic", "openai"})
SKILL_MD = """---
name: one-skill
description: A small skill for the start-up benchmark. Use it to time validation.
---

# One skill

Say hello.
"""


def cpu_seconds(argv: list[str], *, env: dict[str, str], cwd: Path) -> tuple[float, int]:
    """CPU time (user + system) of one run of ``argv`` and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return used, proc.returncode


def timed(argv: list[str], *, repeat: int, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """Median and best CPU time over ``repeat`` runs, with the (last) exit code."""
    runs: list[float] = []
    code = 0
    for _ in range(repeat):
        seconds, code = cpu_seconds(argv, env=env, cwd=cwd)
        runs.append(seconds)
    return {"median_s": statistics.median(runs), "best_s": min(runs), "exit": code}


def imports_any(argv: list[str], names: frozenset[str], *, env: dict[str, str], cwd: Path) -> bool:
    """Whether ``argv`` (a ``python -m skilldeck.cli.main …`` line) imports one of
    ``names`` (module names, as ``python -X importtime`` lists them)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    return bool(modules & names)


def commands(skill: Path, corpus: Path | None) -> list[dict[str, Any]]:
    """The rows: name, skilldeck argv (after ``python -m skilldeck.cli.main``), baseline
    argv, goal ratio (None: reported only)."""
    validate_ref = ["validate", str(skill)]
    rows: list[dict[str, Any]] = [
        {"row": "help", "argv": ["--help"], "ref": ["--help"], "goal": 1.0},
        {"row": "version", "argv": ["--version"], "ref": ["--help"], "goal": 1.0},
        {
            "row": "validate",
            "argv": ["skills", "validate", str(skill)],
            "ref": validate_ref,
            "goal": 1.0,
        },
    ]
    if corpus is not None:
        match = ["skills", "match", QUERY, "--root", str(corpus), "--no-defaults", "--json"]
        rows.append({"row": "match (warm)", "argv": match, "ref": validate_ref, "goal": 2.0})
        rows.append(
            {
                "row": "match --lexical",
                "argv": [*match, "--lexical"],
                "ref": validate_ref,
                "goal": 2.0,
            }
        )
    rows.append(
        {
            "row": "missing key",
            "argv": ["run", "--model", "anthropic:claude-sonnet-4-5", "hi"],
            "ref": ["--help"],
            "goal": None,
        }
    )
    return rows


def child_env(home: Path) -> dict[str, str]:
    """The caller's environment with a private skilldeck home, no model keys, and
    byte-compiled modules allowed (as an installed package has them)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"):
        env.pop(key, None)
    env["SKILLDECK_HOME"] = str(home)
    env["COLUMNS"] = "100"
    return env


def measure(agentskills: str, corpus: Path | None, repeat: int) -> list[dict[str, Any]]:
    """Every row measured in a temporary home and workspace."""
    skilldeck = [sys.executable, "-m", "skilldeck.cli.main"]
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        base = Path(tmp)
        skill = base / "one-skill"
        skill.mkdir()
        (skill / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
        workspace = base / "workspace"
        workspace.mkdir()
        env = child_env(base / "home")
        out = []
        for row in commands(skill, corpus):
            argv = [*skilldeck, *row["argv"]]
            cpu_seconds(argv, env=env, cwd=workspace)  # warm-up: caches, byte-code
            cpu_seconds([agentskills, *row["ref"]], env=env, cwd=workspace)
            mine = timed(argv, repeat=repeat, env=env, cwd=workspace)
            ref = timed([agentskills, *row["ref"]], repeat=repeat, env=env, cwd=workspace)
            result = {
                "row": row["row"],
                "command": "skilldeck " + " ".join(row["argv"]),
                "baseline": "agentskills " + " ".join(row["ref"]),
                "skilldeck_s": mine["median_s"],
                "skilldeck_best_s": mine["best_s"],
                "skilldeck_exit": mine["exit"],
                "baseline_s": ref["median_s"],
                "baseline_best_s": ref["best_s"],
                "ratio": mine["median_s"] / ref["median_s"] if ref["median_s"] else None,
                "goal": row["goal"],
            }
            python_argv = ["-m", "skilldeck.cli.main", *row["argv"]]
            if row["row"] == "missing key":
                result["sdk_imported"] = imports_any(python_argv, SDKS, env=env, cwd=workspace)
            if row["row"].startswith("match"):
                result["numpy_imported"] = imports_any(
                    python_argv, frozenset({"numpy"}), env=env, cwd=workspace
                )
            out.append(result)
        return out


def print_table(rows: list[dict[str, Any]], repeat: int) -> None:
    print(f"CPU time (user+sys), median of {repeat} run(s); ratio = skilldeck / agentskills")
    print(f"{'row':<14} {'skilldeck':>10} {'agentskills':>12} {'ratio':>6} {'goal':>6}  note")
    for r in rows:
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "-"
        goal = f"{r['goal']:.1f}" if r["goal"] is not None else "-"
        note = ""
        if r["goal"] is not None and r["ratio"] is not None:
            note = "met" if r["ratio"] <= r["goal"] else "not met"
        if "numpy_imported" in r:
            note += "; numpy imported" if r["numpy_imported"] else "; no numpy"
        if "sdk_imported" in r:
            note = "SDK imported first" if r["sdk_imported"] else "reported before any SDK import"
        line = f"{r['row']:<14} {r['skilldeck_s']:>9.3f}s {r['baseline_s']:>11.3f}s"
        print(f"{line} {ratio:>6} {goal:>6}  {note}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench startup")
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (median)")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="tree for the match row")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where the JSON goes")
    args = parser.parse_args(argv)
    agentskills = shutil.which("agentskills") or shutil.which(
        "agentskills", path=str(Path(sys.executable).parent)
    )
    if agentskills is None:
        print("skipped: agentskills (skills-ref, in the dev extra) is not installed")
        return 0
    corpus: Path | None = args.corpus if args.corpus.is_dir() else None
    if corpus is None:
        print(f"corpus not found at {args.corpus}: the match row is skipped", file=sys.stderr)
    rows = measure(agentskills, corpus, max(1, args.repeat))
    print_table(rows, max(1, args.repeat))
    args.results.parent.mkdir(parents=True, exist_ok=True)
    meta = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "repeat": args.repeat}
    args.results.write_text(
        json.dumps({"meta": meta, "results": rows}, indent=2) + "\n", encoding="utf-8"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
