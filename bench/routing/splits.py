"""The dev and held-out splits, and figures with confidence intervals.

``dev.jsonl`` and ``heldout.jsonl`` (same line format as ``devset.jsonl``, plus
``source``: the skill whose own SKILL.md the request was written from) were made by
the method of docs/routing.md ("How the splits were made"): requests written from a
sampled skill's text before any system output was seen, answer sets judged by
reading a pooled search of the whole catalog (a grep of the names and descriptions
plus the top 12 of two rankers), mixed difficulty (direct, indirect, non-English in
several languages, no-skill). The held-out split was written after that method was
frozen, from skills that appear in no dev answer set, and is never used for tuning.

Every rate is given with its 95% Wilson interval: with 40-odd requests a split's
top-1 is known to about ±0.14, which is what the figures are worth.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.routing.dataset import Query, load_devset
from bench.routing.metrics import Ranked, within
from skilldeck.config import HintSettings

HERE = Path(__file__).resolve().parent
SPLIT_NAMES = (
    "dev",
    "heldout",
    "heldout2",
    "heldout3",
    "heldout4",
    "heldout5",
    "heldout6",
    "heldout7",
    "heldout8",
    "heldout9",
    "heldout10",
    "heldout11",
)
SPLITS = {name: HERE / f"{name}.jsonl" for name in SPLIT_NAMES}
Z95 = 1.959964


def load_split(name: str) -> list[Query]:
    return load_devset(SPLITS[name])


def wilson(hits: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``hits / n``."""
    if n == 0:
        return (0.0, 1.0)
    p = hits / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (round(max(0.0, centre - half), 3), round(min(1.0, centre + half), 3))


def rate(hits: int, n: int) -> dict[str, Any]:
    return {"value": round(hits / n, 4) if n else None, "n": n, "ci95": wilson(hits, n)}


def figures(ranked: Sequence[Ranked], *, threshold: float) -> dict[str, Any]:
    """top-1, top-3, recall@10 and @20 (answerable) and hinted no-skill requests, each with
    its interval; the same by difficulty (``kind``) and by language."""
    out: dict[str, Any] = {"all": _block(ranked, threshold)}
    for kind in sorted({r.query.kind for r in ranked if r.query.has_answer}):
        out[f"kind:{kind}"] = _block([r for r in ranked if r.query.kind == kind], threshold)
    foreign = [r for r in ranked if r.query.lang != "en" and r.query.has_answer]
    out["lang:en"] = _block([r for r in ranked if r.query.lang == "en"], threshold)
    out["lang:non-en"] = _block(foreign, threshold)
    for lang in sorted({r.query.lang for r in foreign}):
        out[f"lang:{lang}"] = _block([r for r in foreign if r.query.lang == lang], threshold)
    return out


def _block(ranked: Sequence[Ranked], threshold: float) -> dict[str, Any]:
    answerable = [r for r in ranked if r.query.has_answer]
    none = [r for r in ranked if not r.query.has_answer]
    n = len(answerable)
    block = {
        "top1": rate(sum(r.hit_rank == 0 for r in answerable), n),
        "top3": rate(sum(r.hit_rank is not None and r.hit_rank < 3 for r in answerable), n),
        "recall10": rate(sum(within(r, 10) for r in answerable), n),
        "recall20": rate(sum(within(r, 20) for r in answerable), n),
    }
    if none:
        hinted = sum(1 for r in none if r.scores and r.scores[0] >= threshold)
        block["none_hinted"] = rate(hinted, len(none))
    return block


def table(results: dict[str, dict[str, Any]]) -> list[str]:
    """One line per (system, split, slice): value [ci] for top-1 and top-3, recall@20."""
    lines = [
        f"{'system':16} {'split':8} {'slice':13} {'n':>3} {'top-1 [95% CI]':>20} "
        f"{'top-3 [95% CI]':>20} {'r@20':>5} {'none hinted':>12}"
    ]
    for system, by_split in results.items():
        for split, slices in by_split.items():
            for name, block in slices.items():
                if name.startswith("lang:") and name not in ("lang:en", "lang:non-en"):
                    continue
                none = block.get("none_hinted")
                hinted = f"{round(none['value'] * none['n'])}/{none['n']}" if none else ""
                lines.append(
                    f"{system:16} {split:8} {name:13} {block['top1']['n']:>3} "
                    f"{_fmt(block['top1']):>20} {_fmt(block['top3']):>20} "
                    f"{block['recall20']['value'] or 0:>5.2f} {hinted:>12}"
                )
    return lines


def print_figures(title: str, ranked: Sequence[Ranked], slices: Sequence[str]) -> None:
    """For the dev-split experiments (``dense``, ``multilingual``): ``title``, top-1
    and top-3 of each slice, and the no-skill requests hinted at the default threshold."""
    result = figures(ranked, threshold=HintSettings().threshold)
    print(title)
    for name in slices:
        top1, top3 = result[name]["top1"], result[name]["top3"]
        print(
            f"  {name:<22} top-1 {_fmt(top1)} (n={top1['n']})  top-3 {_fmt(top3)} (n={top3['n']})"
        )
    hinted = result["all"].get("none_hinted")
    if hinted:
        print(f"  no-skill hinted {hinted['value']} of {hinted['n']}")


def _fmt(r: dict[str, Any]) -> str:
    if r["value"] is None:
        return "-"
    lo, hi = r["ci95"]
    return f"{r['value']:.3f} [{lo:.2f}-{hi:.2f}]"
