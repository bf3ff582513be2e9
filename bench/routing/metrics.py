"""Accuracy, hint false positives and latency of one ranker on the development set."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.routing.dataset import Query
from bench.routing.systems import Ranker


@dataclass
class Accuracy:
    queries: int
    top1: float
    top3: float
    mrr: float
    #: share of no-skill requests whose best score reaches the hint threshold
    none_hinted: float
    #: share of answerable requests whose hint (top-k over threshold) holds a right skill
    hint_recall: float
    threshold: float

    def to_dict(self) -> dict[str, Any]:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()}


@dataclass
class Ranked:
    """One ranker's top-10 for every query, with the ranks of the first right answer."""

    query: Query
    scores: list[float]
    hit_rank: int | None  # 0-based rank of the first acceptable skill in the top DEPTH


#: how deep each ranking is read: recall@20 is one of the issue's goals
DEPTH = 20


def run(ranker: Ranker, queries: Sequence[Query], *, corpus: Path | None) -> list[Ranked]:
    out: list[Ranked] = []
    for q in queries:
        result = ranker.rank(q.text, DEPTH)
        hit = next((i for i, (s, _) in enumerate(result) if q.accepts(s, corpus=corpus)), None)
        out.append(Ranked(q, [score for _, score in result], hit))
    return out


def within(r: Ranked, k: int) -> bool:
    """Whether an acceptable skill is in the request's top ``k``."""
    return r.hit_rank is not None and r.hit_rank < k


def accuracy(ranked: Sequence[Ranked], *, threshold: float, hint_k: int = 3) -> Accuracy:
    answerable = [r for r in ranked if r.query.has_answer]
    none = [r for r in ranked if not r.query.has_answer]
    n = max(len(answerable), 1)

    def hinted(r: Ranked) -> bool:
        return bool(r.scores) and r.scores[0] >= threshold

    def hint_hit(r: Ranked) -> bool:
        return r.hit_rank is not None and r.hit_rank < hint_k and r.scores[r.hit_rank] >= threshold

    return Accuracy(
        queries=len(ranked),
        top1=sum(r.hit_rank == 0 for r in answerable) / n,
        top3=sum(r.hit_rank is not None and r.hit_rank < 3 for r in answerable) / n,
        mrr=sum(1 / (r.hit_rank + 1) for r in answerable if within(r, 10)) / n,
        none_hinted=sum(hinted(r) for r in none) / max(len(none), 1),
        hint_recall=sum(hint_hit(r) for r in answerable) / n,
        threshold=threshold,
    )


def threshold_for_none_rate(ranked: Sequence[Ranked], rate: float) -> float:
    """The lowest threshold that hints at most ``rate`` of the no-skill requests —
    the matched operating point used to compare rankers whose scores differ in scale."""
    tops = sorted(
        (r.scores[0] if r.scores else 0.0 for r in ranked if not r.query.has_answer), reverse=True
    )
    allowed = int(rate * len(tops))
    if not tops:
        return 0.0
    return tops[allowed] + 1e-6 if allowed < len(tops) else 0.0


def latency(
    ranker: Ranker, texts: Sequence[str], *, repeat: int = 3, k: int = 10
) -> dict[str, float]:
    """Warm per-query latency in ms (one warm-up pass, then ``repeat`` timed passes)."""
    for text in texts:
        ranker.rank(text, k)
    samples: list[float] = []
    for _ in range(repeat):
        for text in texts:
            start = time.perf_counter()
            ranker.rank(text, k)
            samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return {
        "p50_ms": round(statistics.median(samples), 3),
        "p99_ms": round(samples[min(len(samples) - 1, int(0.99 * len(samples)))], 3),
        "samples": len(samples),
    }
