"""Script-runner benchmark: what running a script skill costs over a bare subprocess.

A trivial script skill (read the JSON argument, print it back) is run N times each way,
all measured in the same run:

* ``bare subprocess``: ``subprocess.run([python, script, json], input=json)`` — the
  least any runner must do (the baseline);
* ``runner (no sandbox)``: ``ScriptRunner.run`` with ``sandbox.mode = "off"``: entry
  point resolution, scrubbed environment, scratch directory, concurrent capped pipe
  reading, process-group cleanup, JSON parsing;
* ``bare bwrap``: the same ``subprocess.run`` wrapped in the bubblewrap argv — the
  cost of the sandbox itself;
* ``runner (sandbox)``: ``ScriptRunner.run`` with ``sandbox.mode = "required"``.

Figures are medians and best-of times in milliseconds, each with its ratio against
the bare subprocess (and, for the sandboxed runner, against bare bwrap). Modes are
interleaved round by round so load on a shared machine hits them alike; the best-of
ratio is the steadier estimate there. The sandbox rows are skipped, with the
reason, when bubblewrap cannot run here.

Usage: ``python -m bench runner [--repeat N]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from skilldeck.config import Settings
from skilldeck.sandbox import bwrap_argv, probe_sandbox
from skilldeck.skills.execution import ScriptRunner
from skilldeck.skills.model.skill import Skill, SkillKind
from skilldeck.skills.model.spec import SkillMetadata

RESULTS = Path(__file__).resolve().parent / "results" / "runner.json"
SCRIPT = "import json, sys\nprint(json.dumps(json.loads(sys.argv[1])))\n"
PAYLOAD = {"numbers": list(range(20)), "text": "benchmark"}
MODES = ("bare subprocess", "runner (no sandbox)", "bare bwrap", "runner (sandbox)")


def _make_skill(root: Path) -> Skill:
    folder = root / "echo-skill"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "echo.py").write_text(SCRIPT, encoding="utf-8")
    (folder / "SKILL.md").write_text(
        "---\nname: echo-skill\ndescription: bench\nentrypoint: scripts/echo.py\n---\n",
        encoding="utf-8",
    )
    meta = SkillMetadata(name="echo-skill", description="bench", entrypoint="scripts/echo.py")
    return Skill(metadata=meta, folder=folder, skill_md=folder / "SKILL.md", kind=SkillKind.SCRIPT)


def _bare_once(argv: list[str], payload: str, cwd: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        argv, input=payload.encode(), capture_output=True, cwd=cwd, check=True, timeout=60
    )
    json.loads(proc.stdout)
    return time.perf_counter() - started


async def _runner_once(runner: ScriptRunner, skill: Skill) -> float:
    started = time.perf_counter()
    result = await runner.run(skill, PAYLOAD)
    elapsed = time.perf_counter() - started
    if not result.ok:
        raise RuntimeError(result.error)
    return elapsed


def _measure(
    skill: Skill, workspace: Path, repeat: int, bwrap: str | None
) -> dict[str, list[float]]:
    """Every mode once per round, round after round, so load drift on a shared
    machine hits all modes alike."""
    payload = json.dumps(PAYLOAD)
    script = skill.folder / "scripts" / "echo.py"
    plain = [sys.executable, str(script), payload]
    off = ScriptRunner(Settings(workspace=workspace, sandbox={"mode": "off"}), session_id="b")
    boxed = ScriptRunner(
        Settings(workspace=workspace, sandbox={"mode": "required"}), session_id="b"
    )
    wrapped = (
        bwrap_argv(
            bwrap,
            plain,
            workspace=workspace,
            scratch=None,
            network=False,
            cwd=skill.folder,
            readonly=[skill.folder],
        )
        if bwrap
        else []
    )
    times: dict[str, list[float]] = {name: [] for name in MODES}

    async def go() -> None:
        for round_ in range(repeat + 2):
            sample = {
                "bare subprocess": _bare_once(plain, payload, skill.folder),
                "runner (no sandbox)": await _runner_once(off, skill),
            }
            if bwrap:
                sample["bare bwrap"] = _bare_once(wrapped, payload, skill.folder)
                sample["runner (sandbox)"] = await _runner_once(boxed, skill)
            if round_ >= 2:  # the first rounds warm caches
                for name, value in sample.items():
                    times[name].append(value)

    anyio.run(go)
    return {name: values for name, values in times.items() if values}


def _row(name: str, times: list[float], base: list[float]) -> dict[str, Any]:
    """Median and best time, each as a ratio to the baseline's; on a shared machine the
    best-of figure is the steadier estimate of the intrinsic cost."""
    median, best = statistics.median(times), min(times)
    return {
        "name": name,
        "median_ms": round(median * 1000, 2),
        "min_ms": round(best * 1000, 2),
        "ratio": round(median / statistics.median(base), 2),
        "ratio_min": round(best / min(base), 2),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench runner")
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args(argv)
    probe = probe_sandbox()
    with tempfile.TemporaryDirectory(prefix="skilldeck-bench-") as tmp:
        root = Path(tmp)
        skill = _make_skill(root)
        workspace = root / "ws"
        workspace.mkdir()
        bwrap = probe.bwrap if probe.available else None
        times = _measure(skill, workspace, args.repeat, bwrap)
    base = times["bare subprocess"]
    rows = [_row(name, values, base) for name, values in times.items()]
    skipped = None if bwrap else f"sandbox rows skipped: {probe.reason}"
    if bwrap:
        boxed = rows[-1]
        boxed["ratio_vs_bare_bwrap"] = round(
            min(times["runner (sandbox)"]) / min(times["bare bwrap"]), 2
        )
    report = {"repeat": args.repeat, "baseline": "bare subprocess", "rows": rows, "note": skipped}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"{'mode':<22}{'median ms':>11}{'× bare':>9}{'best ms':>10}{'× bare':>9}")
    for row in rows:
        extra = ""
        if "ratio_vs_bare_bwrap" in row:
            extra = f"  (best × bare bwrap {row['ratio_vs_bare_bwrap']})"
        print(
            f"{row['name']:<22}{row['median_ms']:>11.2f}{row['ratio']:>9.2f}"
            f"{row['min_ms']:>10.2f}{row['ratio_min']:>9.2f}{extra}"
        )
    if skipped:
        print(skipped)
    print(f"results: {RESULTS}")
    return 0
