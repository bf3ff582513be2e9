"""Ninth round (docs/routing.md): two more sources of vocabulary, measured on every
burned split and not shipped. Reproduces the figures there.

    python -m bench.routing.vocabulary base
    python -m bench.routing.vocabulary refs-field        # references/*.md as a 6th field
    python -m bench.routing.vocabulary refs-body         # ... appended to the body
    python -m bench.routing.vocabulary lsa:k=256,mw=3,a=0.7,g=0

``refs-*`` index every other Markdown file of a skill folder (first 20,000
characters; weight 0.3, b 0.9 as a field). ``lsa`` mixes a request's cosine in a
catalog-learned latent space (truncated SVD of the tf-idf term × skill matrix of
name, description, when-to-use and tags, their counts × ``mw``, plus the body) into
the semantic half: ``max(a·wordllama + (1−a)·lsa, name evidence)``; ``g=0`` skips it
when a rare name word already names a skill. Each run prints top-1 / top-3 /
recall@20 by kind and the no-skill requests hinted. Monkeypatches the matcher: an
experiment, never a code path of skilldeck.
"""

from __future__ import annotations

import math
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from bench.routing.corpus import CORPUS, load_corpus
from bench.routing.splits import SPLIT_NAMES, load_split
from bench.routing.systems import Skilldeck
from skilldeck.config import HintSettings
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.routing import _bm25f
from skilldeck.skills.routing import _match_index as match_index
from skilldeck.skills.routing._basics import BM25FParams, Match
from skilldeck.skills.routing._embeddings import fuse, load_embedder, top_indices
from skilldeck.skills.routing.match import SkillMatcher
from skilldeck.skills.routing.multilingual import tokenize_query
from skilldeck.skills.routing.tokenize import tokenize

META = ("name", "description", "when_to_use", "tags")
REFS_CHARS = 20_000


def references_text(skill: Skill) -> str:
    """Every Markdown file of the skill's folder but SKILL.md, concatenated, capped."""
    parts = []
    for path in sorted(Path(skill.skill_md_str).parent.rglob("*.md")):
        if path.name != "SKILL.md" and not path.is_symlink():
            try:
                parts.append(path.read_text(errors="replace"))
            except OSError:
                continue
    return "\n".join(parts)[:REFS_CHARS]


def with_references(as_field: bool) -> BM25FParams:
    """Patch the index builder to read references; the parameters that weight them."""
    original = match_index.skill_fields

    def fields(skill: Skill, *, body_chars: int) -> dict[str, list[str]]:
        doc = original(skill, body_chars=body_chars)
        words = tokenize(references_text(skill))
        if as_field:
            doc["refs"] = words
        else:
            doc["body"] = doc["body"] + words
        return doc

    match_index.skill_fields = fields  # type: ignore[assignment]
    params = BM25FParams()
    if not as_field:
        return params
    _bm25f.FIELDS = (*_bm25f.FIELDS, "refs")
    return BM25FParams(weights={**params.weights, "refs": 0.3}, b={**params.b, "refs": 0.9})


def build_lsa(docs: list[dict[str, list[str]]], k: int, mw: float) -> dict[str, Any]:
    """Term and skill vectors of a rank-``k`` randomized SVD (Halko et al.) of the
    catalog's tf-idf matrix (terms in 2 skills or more, in at most half of them)."""
    counts = []
    for doc in docs:
        count: Counter[str] = Counter()
        for field in META:
            for token in doc.get(field, ()):
                count[token] += mw
        count.update(doc.get("body", ()))
        counts.append(count)
    df: Counter[str] = Counter()
    for count in counts:
        df.update(count.keys())
    n = len(docs)
    keep = [t for t, v in df.items() if 2 <= v <= n / 2 and len(t) <= 48]
    vocab = {t: i for i, t in enumerate(keep)}
    idf = np.array([math.log(n / df[t]) for t in keep], dtype=np.float32)
    matrix = np.zeros((n, len(vocab)), dtype=np.float32)
    for row, count in enumerate(counts):
        ids = [vocab[t] for t in count if t in vocab]
        tf = np.array([count[t] for t in count if t in vocab], dtype=np.float32)
        if ids:
            matrix[row, ids] = (1.0 + np.log(tf)) * idf[ids]
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    rng = np.random.default_rng(0)
    basis = matrix @ rng.standard_normal((matrix.shape[1], k + 20), dtype=np.float32)
    for _ in range(3):
        basis, _ = np.linalg.qr(basis)
        basis, _ = np.linalg.qr(matrix @ (matrix.T @ basis))
    small_u, sigma, vt = np.linalg.svd(basis.T @ matrix, full_matrices=False)
    skills = ((basis @ small_u)[:, :k] * sigma[:k]).astype(np.float32)
    skills /= np.maximum(np.linalg.norm(skills, axis=1, keepdims=True), 1e-12)
    return {"vocab": vocab, "idf": idf, "terms": np.ascontiguousarray(vt[:k].T), "skills": skills}


def lsa_cosine(lsa: dict[str, Any], tokens: list[str]) -> Any:
    count = Counter(t for t in tokens if t in lsa["vocab"])
    if not count:
        return None
    ids = [lsa["vocab"][t] for t in count]
    weights = (1.0 + np.log(np.array(list(count.values()), dtype=np.float32))) * lsa["idf"][ids]
    query = weights @ lsa["terms"][ids]
    norm = float(np.linalg.norm(query))
    return None if norm == 0 else np.clip(lsa["skills"] @ (query / norm), 0.0, 1.0)


def with_lsa(lsa: dict[str, Any], mix: float, gate: float) -> None:
    """Patch the matcher's English path to mix the LSA cosine into the semantic half."""

    def rank(self: SkillMatcher, query: str, scores: Any, k: int) -> list[Match]:
        assert self._embedder is not None
        if self._vectors is None:
            self._vectors = self._skill_vectors(self._embedder)
        cosine = np.clip(self._vectors @ self._embedder.embed([query])[0], 0.0, 1.0)
        evidence = self._name_evidence(query)
        if not (gate >= 0 and evidence and max(evidence.values()) > gate):
            extra = lsa_cosine(lsa, tokenize_query(query, self._dictionary))
            if extra is not None:
                cosine = mix * cosine + (1 - mix) * extra
        cosine = cosine.astype(np.float32)
        for row, value in evidence.items():
            cosine[row] = max(cosine[row], value)
        mixed, _ = fuse(scores, cosine)
        return [
            Match(self.skills[i].name, float(mixed[i]), self.skills[i])
            for i in top_indices(mixed, k)
        ]

    SkillMatcher._rank_with_embeddings = rank  # type: ignore[method-assign]


#: the splits the ninth and tenth rounds were tuned on (``heldout11`` came after)
BURNED = SPLIT_NAMES[: SPLIT_NAMES.index("heldout10") + 1]


def evaluate(matcher: SkillMatcher, tag: str, splits: tuple[str, ...] = BURNED) -> None:
    threshold = HintSettings().threshold
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    hinted = 0
    for split in splits:
        for request in load_split(split):
            ranked = matcher.rank(request.text, k=20)
            if not request.expected:
                hinted += bool(ranked and ranked[0].score >= threshold)
                continue
            hit = next(
                (i for i, m in enumerate(ranked) if request.accepts(m.skill, corpus=CORPUS)), None
            )
            kind = request.kind if request.lang == "en" else "foreign"
            for key in ("all", kind):
                row = tally[key]
                row[0] += 1
                row[1] += hit == 0
                row[2] += hit is not None and hit < 3
                row[3] += hit is not None
    for key, (n, top1, top3, r20) in sorted(tally.items()):
        print(f"{tag} {key:9} n={n:4} top1={top1:4} top3={top3:4} r20={r20:4}")
    print(f"{tag} no-skill requests hinted: {hinted}")


def main(spec: str) -> None:
    params = BM25FParams()
    if spec.startswith("refs-"):
        params = with_references(as_field=spec == "refs-field")
    skills = load_corpus()
    matcher = Skilldeck.build(skills, embedder=load_embedder(), params=params).matcher
    if spec.startswith("lsa:"):
        config = dict(item.split("=") for item in spec[4:].split(","))
        started = time.perf_counter()
        docs = [match_index.skill_fields(s, body_chars=params.body_chars) for s in skills]
        lsa = build_lsa(docs, int(config.get("k", 256)), float(config.get("mw", 3)))
        print(f"LSA built in {time.perf_counter() - started:.1f} s")
        with_lsa(lsa, float(config.get("a", 0.7)), float(config.get("g", -1)))
    evaluate(matcher, spec)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "base")
