"""How the matcher's defaults were chosen: coordinate ascent on the *dev* split only.

``python -m bench routing --tune`` re-runs it and prints every step. The objective is
top-1 + top-3 + MRR on the answerable dev requests; the held-out ``test`` split is
never looked at here. Field tokens are computed once per ``body_chars`` value and
reused, so each candidate costs one index build (about a second on the corpus).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.routing import metrics
from bench.routing.dataset import Query
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.routing import SkillMatcher, skill_fields, split_fused_names
from skilldeck.skills.routing._bm25f import BM25FIndex, BM25FParams

_GRID: dict[str, list[float]] = {
    "k1": [0.9, 1.2, 1.6, 2.0, 2.5, 3.0],
    "w.name": [1.5, 3.0, 5.0],
    "w.description": [1.0, 2.0, 3.0],
    "w.when_to_use": [0.5, 1.5, 3.0],
    "w.tags": [0.5, 1.5, 3.0],
    "w.body": [0.2, 0.4, 0.6, 1.0],
    "b.name": [0.0, 0.3, 0.6],
    "b.description": [0.3, 0.5, 0.75],
    "b.body": [0.5, 0.75, 0.9],
    "body_chars": [4000, 10000, 20000, 40000],
}


#: a change must win at least about one request's top-1 (1/124) to be kept; smaller
#: gains on 124 requests are noise and would only fit the dev split
MIN_GAIN = 0.008


class _Adapter:
    name = "skilldeck"

    def __init__(self, matcher: SkillMatcher) -> None:
        self.matcher = matcher

    def rank(self, query: str, k: int) -> list[tuple[Skill, float]]:
        return [(m.skill, m.score) for m in self.matcher.rank(query, k=k)]


def _with(params: BM25FParams, key: str, value: float) -> BM25FParams:
    if key == "k1":
        return dataclasses.replace(params, k1=float(value))
    if key == "body_chars":
        return dataclasses.replace(params, body_chars=int(value))
    table, field = key.split(".")
    if table == "w":
        return dataclasses.replace(params, weights={**params.weights, field: value})
    return dataclasses.replace(params, b={**params.b, field: value})


def _value(params: BM25FParams, key: str) -> float:
    if key in ("k1", "body_chars"):
        return float(getattr(params, key))
    table, field = key.split(".")
    return float((params.weights if table == "w" else params.b)[field])


def tune(
    skills: Sequence[Skill],
    dev: Sequence[Query],
    *,
    corpus: Path,
    rounds: int = 2,
    min_gain: float = MIN_GAIN,
) -> dict[str, Any]:
    documents_by_cap: dict[int, list[dict[str, list[str]]]] = {}

    def objective(params: BM25FParams) -> float:
        cap = params.body_chars
        if cap not in documents_by_cap:
            docs = [skill_fields(s, body_chars=cap) for s in skills]
            split_fused_names(docs)
            documents_by_cap[cap] = docs
        index = BM25FIndex.build(documents_by_cap[cap], params)
        ranked = metrics.run(_Adapter(SkillMatcher(skills, index)), dev, corpus=corpus)
        acc = metrics.accuracy(ranked, threshold=0.35)
        return acc.top1 + acc.top3 + acc.mrr

    params = BM25FParams()
    best = objective(params)
    steps: list[dict[str, Any]] = [{"start": best}]
    print(f"start: objective {best:.4f}")
    for round_no in range(rounds):
        for key, values in _GRID.items():
            current = _value(params, key)
            for value in values:
                if value == current:
                    continue
                candidate = _with(params, key, value)
                score = objective(candidate)
                if score > best + min_gain:
                    best, params = score, candidate
                    steps.append({"round": round_no, "set": key, "to": value, "objective": score})
                    print(f"round {round_no}: {key} = {value} → {score:.4f}")
    print(f"best: {params} objective {best:.4f}")
    return {"params": dataclasses.asdict(params), "objective": best, "steps": steps}
