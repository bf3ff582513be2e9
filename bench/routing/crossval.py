"""Grouped cross-validation of score fusions over the *burned* splits.

Every split in ``bench/routing`` has already been used to choose a default, so none
of them can say how a new method generalises on its own. This harness pools
the new splits (``dev``, ``heldout``, ``heldout2``, ``heldout3``), groups their
requests by the skill they were written from (``source``: requests from one skill share words, so
they must fall in the same fold), and for each of ``--folds`` folds picks a fusion's
weights on the other folds and scores the held-out fold with them; ``--seeds``
repeats this over different fold assignments and averages. The old ``devset.jsonl``
(answer sets pooled from our own rankers' top-3: biased) is reported separately,
with the weights chosen on all three pooled splits.

A split joins :data:`BURNED` once it has been used to decide something (``heldout3``
after it was measured and its misses read); the fresh blind split (``heldout4``) is
never read here: only the names in :data:`BURNED` are loaded.

A fusion scores an English request's skill as ``(1 - c - m - n) * lexical + c *
cosine + m * chunk + n * name`` and a non-English one's as ``(1 - f) * lexical + f *
translated``, every feature in [0, 1], so the result stays a 0..1 score the hint
threshold can be compared with:

* ``lexical`` — the matcher's normalised BM25F score (with the dictionaries);
* ``cosine`` — the wordllama cosine of the request with the skill's name +
  description + when-to-use (the shipped default: ``c = 0.4``, the rest 0);
* ``chunk`` — the best cosine over the skill's separate sentences (description
  sentences, when-to-use, the bullets of the body's "when to use"/"triggers"/
  "overview" sections): multi-vector skills for indirect requests;
* ``name`` — the share of the request's idf mass (the BM25F ceiling) found in the
  skill's name field: product names ("Fireflies", "Grafbase");
* ``translated`` — for a non-English request, the cosine of the English words its
  dictionaries give (the default keeps these requests lexical).

A fold's weights are the best top-1 + top-3 + MRR on its training folds among those
that hint no more of the training no-skill requests than the default does.

``python -m bench.routing.crossval [--folds 5] [--seeds 5]`` prints the table.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.routing.corpus import CORPUS, load_corpus
from bench.routing.dataset import DEVSET, Query, load_devset
from bench.routing.splits import HERE
from bench.routing.systems import DICTIONARY_CACHE, Skilldeck
from skilldeck.config import HintSettings
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.routing._basics import MIN_CEILING
from skilldeck.skills.routing._bm25f import BM25FIndex
from skilldeck.skills.routing._embeddings import Embedder, load_embedder
from skilldeck.skills.routing._match_index import embedding_text, skill_fields
from skilldeck.skills.routing.multilingual import looks_foreign, tokenize_query
from skilldeck.skills.routing.tokenize import fold, tokenize

F32 = npt.NDArray[np.float32]
#: the splits already used to choose a default: the only ones this harness reads
BURNED = ("dev", "heldout", "heldout2", "heldout3")
_HEADING = re.compile(r"^#{1,4}\s*(.*)$")
_TRIGGER_SECTION = re.compile(r"when|use|trigger|purpose|overview|scenario|example", re.I)
_BULLET = re.compile(r"^([-*+]|\d+\.)\s+")


@dataclass(frozen=True)
class Fusion:
    """The weights of the features besides ``lexical`` (which gets the rest)."""

    cosine: float
    chunk: float = 0.0
    name: float = 0.0
    translated: float = 0.0

    def __str__(self) -> str:
        return (
            f"cos {self.cosine:.1f} chunk {self.chunk:.1f} name {self.name:.1f} "
            f"foreign {self.translated:.1f}"
        )


DEFAULT = Fusion(0.4)


@dataclass(eq=False)
class Item:
    """One request with every skill's features and which skills are right (compared
    by identity: the feature arrays have no useful equality)."""

    query: Query
    split: str
    source: str
    foreign: bool
    lexical: F32
    cosine: F32  # for a non-English request: of its dictionary translation
    chunk: F32
    name: F32
    right: npt.NDArray[np.bool_]

    def scores(self, fusion: Fusion) -> F32:
        if self.foreign:
            weight = np.float32(fusion.translated)
            mixed: F32 = (np.float32(1) - weight) * self.lexical + weight * self.cosine
            return mixed
        rest = np.float32(1 - fusion.cosine - fusion.chunk - fusion.name)
        out: F32 = rest * self.lexical + np.float32(fusion.cosine) * self.cosine
        out += np.float32(fusion.chunk) * self.chunk
        out += np.float32(fusion.name) * self.name
        return out

    def outcome(self, fusion: Fusion) -> tuple[int | None, float]:
        """(0-based rank of the first right skill in the top 20, best score)."""
        scores = self.scores(fusion)
        top = np.argsort(-scores, kind="stable")[:20]
        top = top[scores[top] > 0]
        hits = np.flatnonzero(self.right[top])
        best = float(scores[top[0]]) if len(top) else 0.0
        return (int(hits[0]) if len(hits) else None), best


def trigger_chunks(skill: Skill, *, limit: int = 24) -> list[str]:
    """The sentences that say when a skill applies, each embedded on its own."""
    meta = skill.metadata
    out = [p for p in re.split(r"(?<=[.!?;])\s+", meta.description) if len(p.split()) >= 3]
    if meta.when_to_use:
        out.append(meta.when_to_use)
    try:
        body = skill.body[:20_000]
    except OSError:
        body = ""
    section = ""
    for line in body.splitlines():
        heading = _HEADING.match(line)
        if heading:
            section = heading.group(1)
            continue
        text = line.strip()
        if _TRIGGER_SECTION.search(section) and _BULLET.match(text):
            text = re.sub(r"[*`_]", "", _BULLET.sub("", text))
            if len(text.split()) >= 3:
                out.append(text)
    return out[:limit]


def _chunk_max(vectors: F32, owner: npt.NDArray[np.intp], n: int, query: F32) -> F32:
    best = np.zeros(n, dtype=np.float32)
    np.maximum.at(best, owner, np.clip(vectors @ query, 0.0, 1.0).astype(np.float32))
    return best


def name_coverage(index: BM25FIndex, names: Sequence[set[str]], tokens: list[str]) -> F32:
    """Per skill, the request's idf mass found in its name field, over the ceiling."""
    unseen = math.log1p((index.n_docs - 0.5) / 1.5)
    out = np.zeros(len(names), dtype=np.float32)
    ceiling = 0.0
    for token in dict.fromkeys(tokens):
        tid = index.vocab.get(token)
        weight = float(index.idf[tid]) if tid is not None else unseen
        ceiling += weight
        out[[n for n, name in enumerate(names) if token in name]] += weight
    result: F32 = out / np.float32(max(ceiling, MIN_CEILING))
    return result


def _sources(path: Path) -> dict[str, str]:
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return {r["id"]: str(r.get("source") or r["id"]) for r in rows}


def build_items(skills: Sequence[Skill], embedder: Embedder) -> list[Item]:
    """Features of every request of the burned splits and of the old devset."""
    matcher = Skilldeck.build(skills, cache_path=DICTIONARY_CACHE / "bm25f.npz").matcher
    whole = embedder.embed([embedding_text(s) for s in skills])
    chunks = [trigger_chunks(s) for s in skills]
    owner = np.repeat(np.arange(len(skills)), [len(c) for c in chunks])
    chunk_vectors = embedder.embed([c for cs in chunks for c in cs])
    name_tokens = [set(skill_fields(s, body_chars=0)["name"]) for s in skills]
    names = [s.name for s in skills]
    paths = [f"path:{s.folder.relative_to(CORPUS).as_posix()}" for s in skills]
    files = {name: HERE / f"{name}.jsonl" for name in BURNED} | {"old-dev": DEVSET}
    items: list[Item] = []
    for split, path in files.items():
        sources = _sources(path)
        for q in load_devset(path):
            tokens = tokenize_query(q.text, matcher._dictionary)
            foreign = looks_foreign(fold(q.text).lower())
            english = " ".join(tokens[len(tokenize(q.text)) :]) if foreign else q.text
            vector = embedder.embed([english])[0]
            cosine = np.clip(whole @ vector, 0.0, 1.0).astype(np.float32)
            chunk = np.maximum(_chunk_max(chunk_vectors, owner, len(skills), vector), cosine)
            right = np.array(
                [n in q.expected or p in q.expected for n, p in zip(names, paths, strict=True)]
            )
            items.append(
                Item(
                    q,
                    split,
                    sources[q.id],
                    foreign,
                    matcher.scores(q.text),
                    cosine,
                    chunk,
                    name_coverage(matcher.index, name_tokens, tokens),
                    right,
                )
            )
    return items


# ---- grouped cross-validation -------------------------------------------------------


def grouped_folds(items: Sequence[Item], folds: int, seed: int) -> list[list[Item]]:
    """``folds`` parts of ``items``; all requests written from one skill in one part."""
    groups = sorted({i.source for i in items})
    random.Random(seed).shuffle(groups)
    part = {g: n % folds for n, g in enumerate(groups)}
    return [[i for i in items if part[i.source] == f] for f in range(folds)]


class Outcomes:
    """Each (request, fusion) outcome computed once: the grid is searched per fold."""

    def __init__(self) -> None:
        self._memo: dict[tuple[int, Fusion], tuple[int | None, float]] = {}

    def __call__(self, item: Item, fusion: Fusion) -> tuple[int | None, float]:
        key = (id(item), fusion)
        if key not in self._memo:
            self._memo[key] = item.outcome(fusion)
        return self._memo[key]


def objective(items: Sequence[Item], fusion: Fusion, outcome: Outcomes) -> tuple[float, int]:
    """(top-1 + top-3 + MRR counts over answerable requests, no-skill requests hinted)."""
    threshold = HintSettings().threshold
    gain, hinted = 0.0, 0
    for item in items:
        rank, best = outcome(item, fusion)
        if not item.query.has_answer:
            hinted += best >= threshold
        elif rank is not None:
            gain += (rank == 0) + (rank < 3) + 1 / (rank + 1)
    return gain, hinted


def choose(items: Sequence[Item], grid: Sequence[Fusion], outcome: Outcomes) -> Fusion:
    """The best fusion on ``items`` hinting no more no-skill requests than the default
    (ties: the earlier, i.e. simpler, grid point)."""
    allowed = objective(items, DEFAULT, outcome)[1]
    scored = [(objective(items, f, outcome), n, f) for n, f in enumerate(grid)]
    fits = [(gain, -n, f) for (gain, hinted), n, f in scored if hinted <= allowed]
    return max(fits, key=lambda row: row[:2])[2]


def cross_validate(
    items: Sequence[Item], grid: Sequence[Fusion], *, folds: int, seeds: int
) -> tuple[list[dict[int, Fusion]], Counter[Fusion]]:
    """Per seed, the fusion each request was scored with (chosen without its fold)."""
    outcome = Outcomes()
    assignments: list[dict[int, Fusion]] = []
    chosen: Counter[Fusion] = Counter()
    for seed in range(seeds):
        parts = grouped_folds(items, folds, seed)
        scored_with: dict[int, Fusion] = {}
        for f, test in enumerate(parts):
            train = [i for g, part in enumerate(parts) if g != f for i in part]
            fusion = choose(train, grid, outcome)
            chosen[fusion] += 1
            scored_with.update({id(i): fusion for i in test})
        assignments.append(scored_with)
    return assignments, chosen


def figures(
    items: Sequence[Item], pick: Callable[[Item], Fusion], outcome: Outcomes
) -> dict[str, Any]:
    """top-1, top-3, recall@20 of the answerable requests, and no-skill hinted."""
    threshold = HintSettings().threshold
    answerable = [i for i in items if i.query.has_answer]
    ranks = [outcome(i, pick(i))[0] for i in answerable]
    n = max(len(answerable), 1)
    hinted = sum(outcome(i, pick(i))[1] >= threshold for i in items if not i.query.has_answer)
    return {
        "n": len(answerable),
        "top1": sum(r == 0 for r in ranks) / n,
        "top3": sum(r is not None and r < 3 for r in ranks) / n,
        "recall20": sum(r is not None for r in ranks) / n,
        "none_hinted": hinted,
        "none": len(items) - len(answerable),
    }


def slices(items: Sequence[Item]) -> dict[str, list[Item]]:
    out: dict[str, list[Item]] = {"pooled": list(items)}
    out |= {name: [i for i in items if i.split == name] for name in BURNED}
    english = [i for i in items if not i.foreign]
    out["direct (en)"] = [i for i in english if i.query.kind == "direct"]
    out["indirect (en)"] = [i for i in english if i.query.kind == "indirect"]
    out["non-English"] = [i for i in items if i.foreign and i.query.has_answer]
    return out


def _line(name: str, cv: dict[str, Any], default: dict[str, Any]) -> str:
    def cell(f: dict[str, Any]) -> str:
        hinted = f"{f['none_hinted']:.1f}/{f['none']}" if f["none"] else "-"
        return f"{f['top1']:.3f} {f['top3']:.3f} {f['recall20']:.3f} {hinted:>6}"

    return f"{name:14} {cv['n']:>3}  {cell(cv)}  | {cell(default)}"


def _assigned(assignment: dict[int, Fusion], item: Item) -> Fusion:
    return assignment[id(item)]


def mean_figures(
    items: Sequence[Item], assignments: list[dict[int, Fusion]], outcome: Outcomes
) -> dict[str, Any]:
    runs = [figures(items, partial(_assigned, a), outcome) for a in assignments]
    return {k: float(np.mean([r[k] for r in runs])) for k in runs[0]} | {"n": runs[0]["n"]}


GRID = [
    Fusion(c / 10, m / 10, n / 10, f / 10)
    for c in range(7)
    for m in range(4)
    for n in range(3)
    for f in range(3)
    if c + m + n <= 8
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.routing.crossval")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    if not CORPUS.is_dir():
        print(f"skipped: corpus not found at {CORPUS}")
        return 0
    items = build_items(load_corpus(), load_embedder(DICTIONARY_CACHE))
    burned = [i for i in items if i.split in BURNED]
    assignments, chosen = cross_validate(burned, GRID, folds=args.folds, seeds=args.seeds)
    outcome = Outcomes()
    print(f"weights chosen per fold: {', '.join(f'{f} ×{n}' for f, n in chosen.most_common())}")
    print(f"{'slice':14} {'n':>3}  {'CV top-1 top-3 r@20 hinted':32}| default {DEFAULT}")
    for name, part in slices(burned).items():
        cv = mean_figures(part, assignments, outcome)
        print(_line(name, cv, figures(part, lambda i: DEFAULT, outcome)))
    frozen = choose(burned, GRID, outcome)
    old = [i for i in items if i.split == "old-dev"]
    print(
        _line(
            f"old-dev {frozen}",
            figures(old, lambda i: frozen, outcome),
            figures(old, lambda i: DEFAULT, outcome),
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
