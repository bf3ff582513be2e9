"""The hardening suite: budget, shared figures and the end-of-run report.

``SKILLDECK_STRESS_BUDGET`` (read once, at import, before the per-test fixture in
``tests/conftest.py`` clears ``SKILLDECK_*`` variables) scales every trial count:
``short`` (the default; what ``.ci/run`` uses, a few minutes on 2 cores) or ``full``
(the numbers issue 8 asks for: ≥ 50 kill trials, 50 concurrent sessions…).

Every test adds what it tried and what happened to :data:`stress_helpers.FIGURES`;
at the end of the run the totals are printed and written to
``bench/results/hardening.json``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "unit" / "hardening"))  # shared hostile-input helpers

import hardening_helpers  # noqa: E402  (needs the path above)
import stress_helpers as H  # noqa: E402

RESULTS = H.REPO / "bench" / "results" / "hardening.json"


def pytest_configure(config: pytest.Config) -> None:
    H.FIGURES["budget"] = H.BUDGET
    H.FIGURES["started"] = time.time()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.stress)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    counters = {k: v for k, v in H.FIGURES.items() if isinstance(v, int) and k != "started"}
    if not counters:
        return
    for key, hits in hardening_helpers.KNOWN_BUG_HITS.items():
        H.FIGURES[f"known_bug_hits: {key}"] = hits
    report = H.summary()
    terminalreporter.section("skilldeck hardening figures")
    for key, value in report["figures"].items():
        terminalreporter.write_line(f"{key:<40} {value}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    terminalreporter.write_line(f"written to {RESULTS.relative_to(H.REPO)}")
