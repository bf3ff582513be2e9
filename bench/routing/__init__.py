"""Routing benchmark: does the right skill trigger, and how fast?

On the real corpus (``../shared/corpus``, every folder: about 3,200 skills including
the many near-copies) and the hand-written development set (``devset.jsonl``: 211
requests in users' own words, 25 non-English, 26 that no skill covers, each with the
*set* of acceptable skills), it reports for skilldeck's matcher and two baselines
measured in the same run:

* top-1, top-3 and MRR on the answerable requests, per split (``dev`` was used for
  tuning, ``test`` was held out) and overall;
* the share of no-skill requests that would get a hint at the configured threshold
  (``settings.skills.hints.threshold``), and the share of answerable requests whose
  hint holds a right skill; plus the same at a matched operating point (each ranker's
  own threshold letting through at most 10% of no-skill requests), since the
  baselines' scores live on other scales;
* warm query latency p50/p99 on the corpus and on a generated catalog of 50,000
  skills (recombined corpus text under new names), plus index build and cache-load
  times.

It then reports the **new splits** (``bench/routing/splits.py``: ``dev``, written from
sampled skills' own text with answer sets judged over the whole catalog, and
``heldout``, written after that method was frozen and never used for tuning) beside
the old development set, for skilldeck and the off-the-shelf BM25 baselines (bm25s),
by difficulty and language, each rate with its 95% Wilson interval.

Usage: ``python -m bench routing [--synthetic N] [--repeat N] [--tune] [--no-embeddings]
[--splits-only]``.
Writes ``bench/results/routing.json`` and prints a table. Targets (reported, not
asserted): top-1 ≥ 0.75, top-3 ≥ 0.90, ≤ 10% of no-skill requests hinted, warm p99
< 20 ms on 3,200 skills and < 100 ms on 50,000.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

from bench.routing import metrics
from bench.routing.corpus import CORPUS, load_corpus, synthetic_catalog
from bench.routing.dataset import load_devset, select
from bench.routing.splits import SPLITS, figures, load_split, table
from bench.routing.systems import (
    BM25FullText,
    BM25NameDescription,
    KeywordOverlap,
    PreviousDefault,
    Ranker,
    Skilldeck,
    WithoutNameEvidence,
)

RESULTS = Path(__file__).resolve().parents[1] / "results" / "routing.json"
TARGETS = {"top1": 0.75, "top3": 0.90, "none_hinted": 0.10, "p99_ms_3200": 20, "p99_ms_50000": 100}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench routing")
    parser.add_argument("--synthetic", type=int, default=50_000, help="0 to skip")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes over the queries")
    parser.add_argument("--tune", action="store_true", help="re-run the dev-split tuning")
    parser.add_argument(
        "--no-embeddings",
        dest="embeddings",
        action="store_false",
        help="skip the shipped default (BM25F fused with wordllama embeddings)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--splits-only", action="store_true", help="only the dev/held-out figures (no timing)"
    )
    args = parser.parse_args(argv)
    if not CORPUS.is_dir():
        print(f"skipped: corpus not found at {CORPUS}")
        return 0
    from skilldeck.config import HintSettings

    threshold = HintSettings().threshold
    queries = load_devset()
    started = time.perf_counter()
    skills = load_corpus()
    print(f"corpus: {len(skills)} skills loaded in {time.perf_counter() - started:.1f}s")
    if args.tune:
        from bench.routing.tune import tune

        tune(skills, select(queries, "dev"), corpus=CORPUS)
        return 0
    report: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "load_average_at_start": os.getloadavg()},
        "corpus_skills": len(skills),
        "queries": _query_counts(queries),
        "threshold": threshold,
        "targets": TARGETS,
        "systems": {},
    }
    rankers, build = _rankers(skills, embeddings=args.embeddings)
    report["build_seconds"] = build
    texts = [q.text for q in queries]
    report["splits"] = _splits(rankers, queries, threshold)
    if args.splits_only:
        _write(report, args.out)
        print("\n".join(table(report["splits"])))
        return 0
    for ranker in rankers:
        report["systems"][ranker.name] = _evaluate(ranker, queries, threshold, texts, args.repeat)
    if args.synthetic:
        report["synthetic"] = _synthetic(skills, args.synthetic, texts, args.repeat)
    _write(report, args.out)
    _print_table(report)
    print("\n".join(["", *table(report["splits"])]))
    return 0


def _write(report: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")


def _splits(rankers: list[Ranker], old: list[Any], threshold: float) -> dict[str, dict[str, Any]]:
    """Every ranker on the old development set (all of it, as before) and on the new
    dev and held-out splits, sliced by difficulty and language."""
    sets = {"old-dev": old, **{name: load_split(name) for name in SPLITS}}
    out: dict[str, dict[str, Any]] = {}
    for ranker in rankers:
        out[ranker.name] = {
            name: figures(metrics.run(ranker, queries, corpus=CORPUS), threshold=threshold)
            for name, queries in sets.items()
        }
    return out


def _query_counts(queries: list[Any]) -> dict[str, int]:
    return {
        "total": len(queries),
        "dev": sum(q.split == "dev" for q in queries),
        "test": sum(q.split == "test" for q in queries),
        "no_skill": sum(not q.has_answer for q in queries),
        "non_english": sum(q.lang != "en" for q in queries),
        "indirect": sum(q.kind == "indirect" for q in queries),
    }


def _rankers(skills: list[Any], *, embeddings: bool) -> tuple[list[Ranker], dict[str, float]]:
    """Every system, built in this run. ``skilldeck`` is what a user gets by default
    (BM25F fused with embeddings and name evidence; without embeddings, with
    ``--no-embeddings``), ``skilldeck-no-brands`` the default before brand evidence
    (no brands, non-English requests by words alone), ``skilldeck-no-names`` the fused
    router without name evidence, ``skilldeck-lexical`` the router by words only."""
    build: dict[str, float] = {}
    rankers: list[Ranker] = []
    lexical = partial(Skilldeck.build, name="skilldeck-lexical" if embeddings else "skilldeck")
    factories = (lexical, Skilldeck.lexicon_only, KeywordOverlap)
    for factory in (*factories, BM25NameDescription, BM25FullText):
        started = time.perf_counter()
        ranker = factory(skills)
        build[ranker.name] = _since(started)
        rankers.append(ranker)
    if embeddings:
        from skilldeck.skills.routing._embeddings import load_embedder

        started = time.perf_counter()
        fused = Skilldeck.build(skills, name="skilldeck", embedder=load_embedder())
        fused.rank("warm up: embeds every skill once", 1)
        build[fused.name] = _since(started)
        rankers.insert(0, fused)
        rankers.insert(1, PreviousDefault(fused))
        rankers.insert(2, WithoutNameEvidence(fused))
        build["skilldeck-no-brands"] = build["skilldeck-no-names"] = build[fused.name]
    return rankers, build


def _evaluate(
    ranker: Ranker, queries: list[Any], threshold: float, texts: list[str], repeat: int
) -> dict[str, Any]:
    ranked = metrics.run(ranker, queries, corpus=CORPUS)
    matched = metrics.threshold_for_none_rate(ranked, 0.10)
    out: dict[str, Any] = {}
    for split in ("dev", "test", None):
        part = [r for r in ranked if split is None or r.query.split == split]
        acc = metrics.accuracy(part, threshold=threshold).to_dict()
        acc["at_matched_threshold"] = metrics.accuracy(part, threshold=matched).to_dict()
        out[split or "all"] = acc
    foreign = [r for r in ranked if r.query.lang != "en"]
    out["non_english"] = metrics.accuracy(foreign, threshold=threshold).to_dict()
    held_out = [r for r in foreign if r.query.split == "test"]
    out["non_english_test"] = metrics.accuracy(held_out, threshold=threshold).to_dict()
    indirect = [r for r in ranked if r.query.kind == "indirect"]
    out["indirect"] = metrics.accuracy(indirect, threshold=threshold).to_dict()
    out["latency_3200"] = metrics.latency(ranker, texts, repeat=repeat)
    return out


def _synthetic(skills: list[Any], count: int, texts: list[str], repeat: int) -> dict[str, Any]:
    """Latency on a generated catalog; also cold build, cache write and warm load."""
    from skilldeck.skills.routing import SkillMatcher

    started = time.perf_counter()
    catalog = synthetic_catalog(skills, count)
    out: dict[str, Any] = {"skills": count, "generate_seconds": _since(started)}
    with tempfile.TemporaryDirectory(prefix="routing-cache-") as tmp:
        cache = Path(tmp) / "bm25f.npz"
        started = time.perf_counter()
        SkillMatcher.from_skills(catalog, cache_path=cache)
        out["cold_build_seconds"] = _since(started)
        out["cache_mb"] = round(cache.stat().st_size / 1e6, 1)
        started = time.perf_counter()
        warm = SkillMatcher.from_skills(catalog, cache_path=cache)
        out["warm_load_seconds"] = _since(started)
    out["skilldeck"] = metrics.latency(Skilldeck(warm), texts, repeat=repeat)
    out["bm25-name-desc"] = metrics.latency(BM25NameDescription(catalog), texts, repeat=repeat)
    # the seed's keyword overlap costs ~1 s per query at this size: time a sample
    out["keyword-overlap"] = metrics.latency(KeywordOverlap(catalog), texts[::10], repeat=1)
    return out


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 3)


def _print_table(report: dict[str, Any]) -> None:
    systems = report["systems"]
    print(f"\nrouting on {report['corpus_skills']} skills, {report['queries']['total']} requests")
    print(
        f"{'system':22} {'split':5} {'top1':>6} {'top3':>6} {'mrr':>6} {'none→hint':>9} "
        f"{'hint ok':>8} {'p50 ms':>7} {'p99 ms':>7}"
    )
    for name, res in systems.items():
        for split in ("dev", "test", "all"):
            acc = res[split]
            lat = res["latency_3200"] if split == "all" else {"p50_ms": "", "p99_ms": ""}
            print(
                f"{name:22} {split:5} {acc['top1']:6.3f} {acc['top3']:6.3f} {acc['mrr']:6.3f} "
                f"{acc['none_hinted']:9.2f} {acc['hint_recall']:8.2f} "
                f"{lat['p50_ms']:>7} {lat['p99_ms']:>7}"
            )
    base = systems.get("bm25-name-desc", {}).get("all")
    ours = systems.get("skilldeck", {}).get("all")
    if base and ours:
        print(
            f"\nskilldeck vs bm25-name-desc: top-1 ×{ours['top1'] / base['top1']:.2f}, "
            f"top-3 ×{ours['top3'] / base['top3']:.2f}, MRR ×{ours['mrr'] / base['mrr']:.2f}"
        )
    synth = report.get("synthetic")
    if synth:
        print(
            f"\n{synth['skills']} generated skills: cold build {synth['cold_build_seconds']}s, "
            f"warm load {synth['warm_load_seconds']}s, cache {synth['cache_mb']} MB"
        )
        for name in ("skilldeck", "bm25-name-desc", "keyword-overlap"):
            lat = synth[name]
            print(f"  {name:18} p50 {lat['p50_ms']} ms  p99 {lat['p99_ms']} ms")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
