"""``python -m bench hardening [short|full]``: run the hardening suite and report its figures.

The figures come from ``tests/stress`` (fuzz cases tried, kill trials survived,
concurrent sessions completed, escape attempts refused); the suite asserts the zeros
(escapes, lost messages, corrupt stores, partial files, "database is locked"), and
writes ``bench/results/hardening.json``, which this prints as a table. ``short`` is
what CI runs (a few minutes on 2 cores); ``full`` is the issue's numbers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "hardening.json"


def main(argv: list[str]) -> int:
    budget = argv[0] if argv else "short"
    if budget not in {"short", "full"}:
        print("usage: python -m bench hardening [short|full]", file=sys.stderr)
        return 2
    env = {**os.environ, "SKILLDECK_STRESS_BUDGET": budget}
    command = [sys.executable, "-m", "pytest", "tests/stress", "-q", "-p", "no:randomly"]
    code = subprocess.call(command, cwd=REPO, env=env)
    if not RESULTS.is_file():
        print("no figures were written (did the suite run?)", file=sys.stderr)
        return code or 1
    report = json.loads(RESULTS.read_text(encoding="utf-8"))
    print(f"\nhardening figures ({report['budget']}, {report['duration_seconds']} s)")
    for key, value in report["figures"].items():
        print(f"  {key:<42} {value}")
    bad = {k: v for k, v in report["zero"].items() if v}
    print("  zeros: " + ("all zero" if not bad else f"NOT ZERO: {bad}"))
    return code or (1 if bad else 0)
