"""Per-skill environment benchmark: uv against ``python -m venv`` + ``pip``, same run.

A local folder of small pure-Python wheels (written here, so no network is used) is
installed, from a ``requirements.txt`` naming all of them, into a fresh environment
each way, round by round (interleaved, so load on a shared machine hits both alike):

* ``venv + pip`` (the baseline): ``python -m venv DIR`` then ``DIR/bin/pip install
  --no-index --find-links WHEELS -r requirements.txt`` — what a user would do by hand;
* ``uv (skilldeck)``: :meth:`skilldeck.skills.execution.Environments.ensure` with
  ``offline=True, find_links=[WHEELS]`` into an empty home — ``uv venv`` + ``uv pip
  install``, what ``skilldeck skills deps NAME --offline --find-links WHEELS`` runs;
* ``uv (already built)``: ``ensure`` again for a second skill with the same
  requirements — the shared, content-addressed environment is reused.

Figures are medians and best-of times in seconds, with the baseline's time divided
by each (×: how many times faster than venv + pip).

Usage: ``python -m bench envs [--repeat N] [--packages N]``
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from skilldeck.skills.execution import Environments
from skilldeck.skills.format import load_skill

RESULTS = Path(__file__).resolve().parent / "results" / "envs.json"


def _wheel(folder: Path, name: str) -> None:
    info = f"{name}-1.0.dist-info"
    files = {
        f"{name}/__init__.py": b"VALUE = 1\n" + b"# padding\n" * 200,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }

    def digest(data: bytes) -> str:
        raw = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        return f"sha256={raw.decode()}"

    record = "".join(f"{p},{digest(d)},{len(d)}\n" for p, d in files.items()) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(folder / f"{name}-1.0-py3-none-any.whl", "w") as zf:
        for member, data in files.items():
            zf.writestr(member, data)
        zf.writestr(f"{info}/RECORD", record)


def _skill(root: Path, name: str, requirements: list[str]) -> Any:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: bench\n---\nx\n")
    (folder / "requirements.txt").write_text("\n".join(requirements) + "\n")
    skill, _ = load_skill(folder)
    return skill


def _venv_pip(work: Path, wheels: Path, requirements: Path) -> float:
    target = work / "venv-pip"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True)
    subprocess.run(
        [str(target / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
         "--no-index", "--find-links", str(wheels), "-r", str(requirements)],
        check=True,
    )  # fmt: skip
    return time.perf_counter() - started


def _uv(work: Path, wheels: Path, requirements: list[str]) -> tuple[float, float]:
    envs = Environments(work / "home")
    first = _skill(work / "skills", "first", requirements)
    second = _skill(work / "skills", "second", requirements)
    started = time.perf_counter()
    envs.ensure(first, offline=True, find_links=[wheels])
    built = time.perf_counter() - started
    started = time.perf_counter()
    envs.ensure(second, offline=True, find_links=[wheels])
    return built, time.perf_counter() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench envs")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--packages", type=int, default=20)
    args = parser.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="skilldeck-bench-envs-"))
    try:
        wheels = base / "wheels"
        wheels.mkdir()
        names = [f"benchpkg{i}" for i in range(args.packages)]
        for name in names:
            _wheel(wheels, name)
        requirements = base / "requirements.txt"
        requirements.write_text("\n".join(names) + "\n")
        times: dict[str, list[float]] = {"venv + pip": [], "uv (skilldeck)": [], "uv (shared)": []}
        for round_ in range(args.repeat):
            work = base / f"round{round_}"
            times["venv + pip"].append(_venv_pip(work, wheels, requirements))
            built, shared = _uv(work, wheels, names)
            times["uv (skilldeck)"].append(built)
            times["uv (shared)"].append(shared)
            shutil.rmtree(work, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return _report(times, args)


def _report(times: dict[str, list[float]], args: argparse.Namespace) -> int:
    baseline = statistics.median(times["venv + pip"])
    best_baseline = min(times["venv + pip"])
    rows = []
    print(f"environment creation, {args.packages} local wheels, {args.repeat} rounds, offline")
    print(f"{'method':<16} {'median s':>9} {'best s':>8} {'× faster':>9}")
    for name, values in times.items():
        median, best = statistics.median(values), min(values)
        ratio = baseline / median if median else float("inf")
        rows.append({"method": name, "median_s": median, "best_s": best, "speedup": ratio,
                     "best_speedup": best_baseline / best if best else None})  # fmt: skip
        print(f"{name:<16} {median:>9.3f} {best:>8.3f} {ratio:>8.1f}×")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"packages": args.packages, "rounds": rows}, indent=1))
    print(f"results: {RESULTS}")
    return 0
