"""Old code against new in one run: ``python -m bench compare [discovery|loop|routing ...]``.

Issue 16 asks that a redesign keep the ``discovery``, ``loop`` and ``routing`` figures
within 5% of the old code's, measured in the same run: on a shared machine, figures
recorded on another day (or minutes apart, while someone else compiles) differ by
more than that. So this runs each chosen benchmark for two trees in one invocation:

* **old** — a baseline git revision (``--baseline``, default ``2eb92dc``, the commit
  before the redesign started), extracted with ``git archive`` into a temporary folder;
* **new** — the working tree as it is (uncommitted edits included), or ``--new REV``.

Each benchmark runs in a fresh interpreter (``python -m bench NAME``) with ``cwd`` at
that tree's copy of ``bench/`` and ``PYTHONPATH`` at its ``src/``: each side runs the
benchmark as its own tree ships it, against its own library (a benchmark edited
since the baseline measures differently: check ``git diff REV -- bench``). Runs alternate
old/new (and the order flips every round) so both share the machine's noise; a
figure is the best of the rounds for times (noise only ever adds time), the median
otherwise. The benchmarks write their JSON into their tree's ``bench/results/``; this
reads it back, flattens it, and prints the figures old vs new with new/old (counts,
derived ratios and accuracy figures equal on both sides only with ``--all``):

* **time** (``*_s``, ``*_ms``, ``*seconds``, per-turn milliseconds) of skilldeck's code:
  lower is better; a ratio above 1.05 is flagged ``REGRESSION``;
* **quality** (top-1, top-3, MRR, hint recall): higher is better; any change is
  shown, a drop of more than 5% flagged;
* **control**: the same code in both trees (skills-ref, the bare loop, the system-call
  floor, the routing baselines); their ratios show how noisy the machine was.

The corpus is found as each benchmark expects it (``../shared/corpus`` next to the
tree): the temporary folder gets a ``shared`` link to this checkout's. The table
also goes to ``bench/results/compare.json``.

Usage: ``python -m bench compare [NAMES] [--baseline REV] [--new REV] [--rounds N]
[--quick] [--args NAME='ARGS'] [--threshold 0.05] [--all] [--strict]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "compare.json"
DEFAULT_BASELINE = "2eb92dc"
BENCHMARKS = ("discovery", "loop", "routing")
#: smaller runs of each benchmark (``--quick``): minutes instead of a quarter hour
QUICK = {
    "discovery": ["--skills", "2000", "--repeat", "3", "--ref-repeat", "1"],
    "loop": ["--turns", "100", "--repeat", "3"],
    "routing": ["--synthetic", "0", "--repeat", "2"],
}
#: keys (at any depth) that describe the run, not the code
SKIPPED = frozenset({"meta", "machine", "targets", "threshold", "repeat", "cpus"})
#: figures of code that is the same in both trees: the machine's noise, not a change
CONTROLS = (
    "skills_ref",
    "floor_",
    "baseline",
    "naive",
    "keyword-overlap",
    "bm25-name-desc",
    "generate_seconds",
    "encoding_load",
)
QUALITY = frozenset({"top1", "top3", "mrr", "hint_recall"})
#: quality where less is better: the share of no-skill requests that get a hint
LOWER_QUALITY = frozenset({"none_hinted"})
#: derived figures (one time over another): shown with ``--all``, never flagged
DERIVED = ("ratio", "speedup", "ceiling")
TIME_RE = re.compile(r"(_s|_ms|seconds)$")


@dataclass(frozen=True)
class Tree:
    """One side of the comparison: ``root`` holds its ``bench/``, ``src`` its library."""

    label: str
    root: Path
    src: Path

    def env(self) -> dict[str, str]:
        return {**os.environ, "PYTHONPATH": os.pathsep.join([str(self.src), str(self.root)])}

    def check(self) -> None:
        """Fail early unless this tree's interpreter imports this tree's skilldeck (an
        installed copy or an import hook must not stand in for it)."""
        code = "import skilldeck, bench; print(skilldeck.__file__); print(bench.__file__)"
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=self.root,
            env=self.env(),
            capture_output=True,
            text=True,
            check=True,
        )
        lib, suite = (Path(p).resolve() for p in done.stdout.split())
        if self.src.resolve() not in lib.parents or self.root.resolve() not in suite.parents:
            raise RuntimeError(f"{self.label}: imports {lib} and {suite}, not its own")

    def run(self, name: str, args: list[str], *, timeout: float) -> dict[str, Any]:
        """``python -m bench NAME ARGS`` in this tree; the JSON it wrote."""
        out = self.root / "bench" / "results" / f"{name}.json"
        out.unlink(missing_ok=True)  # a failed run must not report the last one's figures
        done = subprocess.run(
            [sys.executable, "-m", "bench", name, *args],
            cwd=self.root,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0 or not out.is_file():
            tail = (done.stdout + done.stderr)[-2000:]
            raise RuntimeError(f"{self.label}: bench {name} exited {done.returncode}:\n{tail}")
        data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        return data


def _git(*args: str) -> bytes:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, check=True).stdout


def archived(rev: str, dest: Path, label: str) -> Tree:
    """``src/`` and ``bench/`` of ``rev`` extracted into ``dest`` (the checkout untouched)."""
    dest.mkdir(parents=True)
    tar = _git("archive", "--format=tar", rev, "src", "bench")
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return Tree(f"{label} ({rev})", dest, dest / "src")


def working(dest: Path) -> Tree:
    """The working tree's library as it is; a copy of its ``bench/`` (so results and
    byproducts land in the copy, not in files other people are reading)."""
    ignore = shutil.ignore_patterns("results", "__pycache__")
    shutil.copytree(REPO / "bench", dest / "bench", ignore=ignore)
    return Tree("new (working tree)", dest, REPO / "src")


# ---- figures -----------------------------------------------------------------------------


def flatten(data: Any, prefix: str = "") -> Iterator[tuple[str, float]]:
    """Every number in a benchmark's JSON as ``(dotted.key, value)``; list items are
    named by their ``tree``/``name`` when they have one."""
    if isinstance(data, dict):
        for key, value in data.items():
            if key not in SKIPPED:
                yield from flatten(value, f"{prefix}{key}.")
    elif isinstance(data, list):
        for i, item in enumerate(data):
            label = item.get("tree") or item.get("name") if isinstance(item, dict) else None
            yield from flatten(item, f"{prefix}{label or i}.")
    elif isinstance(data, int | float) and not isinstance(data, bool):
        yield prefix.rstrip("."), float(data)


def kind(key: str) -> str:
    """``time`` (lower is better), ``quality`` (higher is better), ``control`` or ``info``."""
    leaf = key.rsplit(".", 1)[-1]
    if any(d in key for d in DERIVED):
        return "info"
    if leaf in QUALITY or leaf in LOWER_QUALITY:
        what = "quality"
    elif any(TIME_RE.search(part) for part in key.split(".")) or "ms_per_turn" in key:
        what = "time"
    else:
        return "info"  # counts, sizes, settings
    return "control" if any(c in key for c in CONTROLS) else what


def combine(runs: list[dict[str, Any]]) -> dict[str, float]:
    """One figure per key over the rounds: the best time, the median of the rest."""
    values: dict[str, list[float]] = {}
    for data in runs:
        for key, value in flatten(data):
            values.setdefault(key, []).append(value)
    return {
        key: min(vs) if kind(key) in {"time", "control"} else statistics.median(vs)
        for key, vs in values.items()
    }


def verdict(key: str, old: float, new: float, threshold: float) -> str:
    what = kind(key)
    if what == "time" and old > 0 and new / old > 1 + threshold:
        return "REGRESSION"
    if what == "time" and old > 0 and new / old < 1 - threshold:
        return "faster"
    worse = (
        new > old * (1 + threshold)
        if key.endswith(tuple(LOWER_QUALITY))
        else (new < old * (1 - threshold))
    )
    if what == "quality" and worse:
        return "REGRESSION"
    if what == "quality" and new != old:
        return "changed"
    return ""


# ---- running -----------------------------------------------------------------------------


def measure(
    trees: tuple[Tree, Tree], name: str, args: list[str], *, rounds: int, timeout: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``rounds`` runs of ``name`` per tree, alternating, the order flipped each round."""
    runs: dict[str, list[dict[str, Any]]] = {t.label: [] for t in trees}
    for r in range(rounds):
        for tree in trees if r % 2 == 0 else trees[::-1]:
            started = time.monotonic()
            print(f"  {name} round {r + 1}/{rounds}: {tree.label} …", end="", file=sys.stderr)
            sys.stderr.flush()
            runs[tree.label].append(tree.run(name, args, timeout=timeout))
            print(f" {time.monotonic() - started:.0f} s", file=sys.stderr)
    return runs[trees[0].label], runs[trees[1].label]


def table(
    name: str, old: dict[str, float], new: dict[str, float], args: Any
) -> list[dict[str, Any]]:
    """The rows of one benchmark (printed, and returned for the JSON). Counts and
    derived ratios are shown only with ``--all``; so are accuracy figures that are
    the same in both trees (they are summed up in one line instead)."""
    rows, same = [], 0
    print(f"\n{name}")
    print(f"  {'figure':58} {'old':>12} {'new':>12} {'new/old':>8}  {'kind':8}")
    for key in sorted(old.keys() & new.keys()):
        what, o, n = kind(key), old[key], new[key]
        ratio = 1.0 if o == n else n / o if o else float("nan")
        flag = verdict(key, o, n, args.threshold)
        rows.append({"figure": key, "old": o, "new": n, "ratio": ratio, "kind": what, "flag": flag})
        accuracy = key.rsplit(".", 1)[-1] in QUALITY | LOWER_QUALITY
        if not args.all and (what == "info" or (accuracy and o == n)):
            same += accuracy and o == n
            continue
        print(f"  {key[:58]:58} {o:12.5g} {n:12.5g} {ratio:8.3f}  {what:8} {flag}")
    if same:
        print(f"  ({same} accuracy figures identical in both trees; --all shows them)")
    for key in sorted(old.keys() ^ new.keys()):
        side = "old" if key in old else "new"
        print(f"  {key[:58]:58} only in {side}")
    return rows


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench compare", description=__doc__)
    parser.add_argument("names", nargs="*", metavar="NAME", help=", ".join(BENCHMARKS))
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="the old revision")
    parser.add_argument("--new", default=None, help="a revision instead of the working tree")
    parser.add_argument("--rounds", type=int, default=3, help="runs per tree and benchmark")
    parser.add_argument("--quick", action="store_true", help="smaller benchmark sizes")
    parser.add_argument(
        "--args", action="append", default=[], metavar="NAME=ARGS", help="extra benchmark args"
    )
    parser.add_argument("--threshold", type=float, default=0.05, help="flag above this change")
    parser.add_argument("--all", action="store_true", help="also show counts and ratios")
    parser.add_argument("--strict", action="store_true", help="exit 1 on a regression")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per run")
    parser.add_argument("--json", type=Path, default=RESULTS, help="where the table goes")
    return parser.parse_args(argv)


def bench_args(args: argparse.Namespace) -> dict[str, list[str]]:
    out = {name: list(QUICK[name]) if args.quick else [] for name in BENCHMARKS}
    for item in args.args:
        name, _, extra = item.partition("=")
        if name not in out:
            raise SystemExit(f"--args: unknown benchmark {name!r}")
        out[name] += shlex.split(extra)
    return out


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    names = list(dict.fromkeys(args.names or BENCHMARKS))
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; choose from {BENCHMARKS}", file=sys.stderr)
        return 2
    extra = bench_args(args)
    report: dict[str, Any] = {"baseline": args.baseline, "new": args.new or "working tree"}
    regressions = 0
    with tempfile.TemporaryDirectory(prefix="skilldeck-compare-") as tmp:
        base = Path(tmp)
        shared = REPO.parent / "shared"
        if shared.is_dir():  # the benchmarks look for ../shared/corpus next to their tree
            (base / "shared").symlink_to(shared)
        old = archived(args.baseline, base / "old", "old")
        new = archived(args.new, base / "new", "new") if args.new else working(base / "new")
        old.check()
        new.check()
        for name in names:
            runs = measure((old, new), name, extra[name], rounds=args.rounds, timeout=args.timeout)
            rows = table(name, combine(runs[0]), combine(runs[1]), args)
            regressions += sum(r["flag"] == "REGRESSION" for r in rows)
            report[name] = {"args": extra[name], "rounds": args.rounds, "rows": rows}
    print(f"\n{regressions} figure(s) more than {args.threshold:.0%} worse than {args.baseline}")
    print("(control figures run the same code on both sides: their spread is the noise)")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"written to {args.json}")
    return 1 if args.strict and regressions else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
