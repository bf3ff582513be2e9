"""Dev-split experiments for the ``[embeddings]`` extra (wordllama, static embeddings).

``python -m bench.routing.dense [--split dev] [--weights 0.1,0.2]`` embeds the corpus
once (timed; cached next to the bench index), then ranks the split lexically, with
reciprocal rank fusion, and with a weighted score fusion for each weight. The weight
is chosen on ``dev`` only; ``heldout`` is measured once, with the chosen method.
"""

from __future__ import annotations

import argparse
import time
from unittest import mock

from bench.routing import metrics
from bench.routing.corpus import CORPUS, load_corpus
from bench.routing.splits import load_split, print_figures
from bench.routing.systems import DICTIONARY_CACHE, Skilldeck
from skilldeck.skills.routing import match as match_mod
from skilldeck.skills.routing._embeddings import load_embedder


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", default="dev")
    parser.add_argument("--weights", default="rrf,0.1,0.2,0.3,0.5")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"skipped: corpus not found at {CORPUS}")
        return 0
    skills = load_corpus()
    queries = load_split(args.split)
    cache = DICTIONARY_CACHE / "bm25f.npz"
    lexical = Skilldeck.build(skills, cache_path=cache)
    started = time.perf_counter()
    embedder = load_embedder()
    print(f"model loaded in {time.perf_counter() - started:.2f}s")
    dense = Skilldeck.build(skills, cache_path=cache, embedder=embedder)
    started = time.perf_counter()
    vectors = dense.matcher._skill_vectors(embedder)
    print(f"{len(vectors)} skills embedded (or loaded) in {time.perf_counter() - started:.1f}s")
    dense.matcher._vectors = vectors
    started = time.perf_counter()
    for q in queries:
        embedder.embed([q.text])
    per_query = (time.perf_counter() - started) / len(queries) * 1000
    print(f"query embedding: {per_query:.2f} ms mean over {len(queries)}")
    slices = ("all", "lang:en")
    print_figures(f"{args.split} — lexical", metrics.run(lexical, queries, corpus=CORPUS), slices)
    for weight in args.weights.split(","):
        value = None if weight == "rrf" else float(weight)
        with mock.patch.object(match_mod, "FUSION_WEIGHT", value):
            ranked = metrics.run(dense, queries, corpus=CORPUS)
        print_figures(f"{args.split} — embeddings, fusion {weight}", ranked, slices)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
