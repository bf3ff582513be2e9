"""Parse benchmark: SKILL.md frontmatter reading against skills-ref, on the same files.

On the real corpus (``../shared/corpus``), in one run, per skill:

* baseline: skills-ref's ``read_properties(folder)`` (strictyaml, whole file read);
* skilldeck ``parse_skill_md`` (frontmatter bytes only) and ``load_skill`` (parse +
  validation + Skill object), lenient;
* ``skilldeck.compat.skills_ref``'s ``read_properties`` and ``validate`` against the
  originals, with the share of folders where both give identical results.

Figures are the best of ``--repeat`` runs (CPU noise only ever adds time); ratios
are baseline / skilldeck (``compat.validate`` against ``skills_ref.validate``, the
rest against ``read_properties``). Usage: ``python -m bench parse [--repeat N] [--limit N]``
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
RESULTS = Path(__file__).resolve().parent / "results" / "parse.json"


def _best(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def _outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        value = call()
    except Exception as e:  # compared between the two libraries, not swallowed
        return ("raised", (type(e).__name__, str(e)))
    return ("value", value.to_dict() if hasattr(value, "to_dict") else value)


def _quiet(call: Callable[[], object]) -> None:
    try:
        call()
    except Exception:  # timing only: the outcome is compared separately
        return


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench parse")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=int, default=0, help="only the first N skills")
    args = parser.parse_args(argv)
    try:
        import skills_ref
    except ImportError:
        print("skills-ref is not installed (pip install skilldeck[dev]); nothing to compare")
        return 0
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}; skipping")
        return 0

    from skilldeck.compat import skills_ref as compat
    from skilldeck.skills.format import load_skill, parse_skill_md

    files = sorted(p for p in CORPUS.rglob("SKILL.md"))
    if args.limit:
        files = files[: args.limit]
    folders = [f.parent for f in files]
    n = len(files)

    def each(fn: Callable[[Path], object], items: list[Path]) -> Callable[[], None]:
        def run() -> None:
            for item in items:
                _quiet(lambda item=item: fn(item))

        return run

    timings = {
        "skills_ref.read_properties": _best(each(skills_ref.read_properties, folders), 1),
        "skilldeck parse_skill_md": _best(each(parse_skill_md, files), args.repeat),
        "skilldeck load_skill": _best(each(load_skill, files), args.repeat),
        "compat.read_properties": _best(each(compat.read_properties, folders), args.repeat),
        "skills_ref.validate": _best(each(skills_ref.validate, folders), 1),
        "compat.validate": _best(each(compat.validate, folders), args.repeat),
    }
    same = sum(
        _outcome(lambda f=folder, fn=fn: getattr(skills_ref, fn)(f))
        == _outcome(lambda f=folder, fn=fn: getattr(compat, fn)(f))
        for folder in folders
        for fn in ("read_properties", "validate")
    )
    baseline = timings["skills_ref.read_properties"]
    rows = []
    print(f"{n} skills from {CORPUS}")
    print(f"{'what':32} {'total s':>9} {'µs/skill':>10} {'speed-up':>10}")
    for what, seconds in timings.items():
        reference = timings["skills_ref.validate"] if what == "compat.validate" else baseline
        ratio = reference / seconds if seconds else float("inf")
        rows.append({"what": what, "seconds": seconds, "us_per_skill": seconds / n * 1e6,
                     "speedup": ratio})  # fmt: skip
        print(f"{what:32} {seconds:9.3f} {seconds / n * 1e6:10.1f} {ratio:9.1f}×")
    match = same / (2 * n)
    print(f"compat identical to skills-ref: {same}/{2 * n} ({match:.2%})")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps({"skills": n, "rows": rows, "compat_match_rate": match}, indent=2) + "\n",
        encoding="utf-8",
    )
    return 0
