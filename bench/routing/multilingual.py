"""Dev-split experiments for the multilingual component (``skills/routing/multilingual/``).

``python -m bench.routing.multilingual [--split dev] [--variants a,b]`` ranks a split
with the hand-written lexicon (no dictionary installed) and with the packaged
dictionaries (which replace the lexicon when installed), on one index of
the corpus (cached under ``$TMPDIR/skilldeck-routing-bench``). Only ``dev`` is for
choosing; ``heldout`` is measured once, after the method is frozen.
"""

from __future__ import annotations

import argparse
import time

from bench.routing import metrics
from bench.routing.corpus import CORPUS, load_corpus
from bench.routing.splits import load_split, print_figures
from bench.routing.systems import DICTIONARY_CACHE as CACHE
from bench.routing.systems import NoDictionary, Skilldeck
from skilldeck.skills.routing.multilingual import BilingualDictionary


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", default="dev")
    parser.add_argument("--variants", default="lexicon,dictionary")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"skipped: corpus not found at {CORPUS}")
        return 0
    skills = load_corpus()
    queries = load_split(args.split)
    dictionary = BilingualDictionary(CACHE)
    started = time.perf_counter()
    dictionary.translate("ein wort")
    print(f"dictionary ready in {time.perf_counter() - started:.1f}s")
    for variant in args.variants.split(","):
        words = NoDictionary() if variant == "lexicon" else dictionary
        ranker = Skilldeck.build(skills, cache_path=CACHE / "bm25f.npz", dictionary=words)
        ranked = metrics.run(ranker, queries, corpus=CORPUS)
        print_figures(f"{args.split} — {variant}", ranked, ("all", "lang:en", "lang:non-en"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
