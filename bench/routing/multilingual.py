"""Dev-split experiments for the multilingual component (``_dictionary.py``).

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
from bench.routing.splits import figures, load_split
from bench.routing.systems import DICTIONARY_CACHE as CACHE
from bench.routing.systems import NoDictionary, Skilldeck
from skilldeck.skills.routing._dictionary import BilingualDictionary

THRESHOLD = 0.35


def _line(name: str, block: dict[str, dict[str, object]]) -> str:
    def cell(key: str) -> str:
        r = block[key]
        return f"{r['value']:.3f} [{r['ci95'][0]:.2f}-{r['ci95'][1]:.2f}] (n={r['n']})"

    return f"  {name:<22} top-1 {cell('top1')}  top-3 {cell('top3')}"


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
        result = figures(ranked, threshold=THRESHOLD)
        print(f"{args.split} — {variant}")
        for key in ("all", "lang:en", "lang:non-en"):
            print(_line(key, result[key]))
        hinted = result["all"].get("none_hinted")
        if hinted:
            print(f"  no-skill hinted {hinted['value']} of {hinted['n']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
