"""Content-scanner benchmark: false positives on the corpus, detection on hostile samples.

The corpus (``../shared/corpus``, ~3,200 real skills) is taken as benign: a skill
with a finding there is a false positive, or a skill that really does tell the
model to do something risky (security-training skills quote reverse shells; some
automation skills run ``claude --dangerously-skip-permissions``). The corpus is cut
in two halves by a hash of each skill's path: the rules were tuned by reading the
high findings of the *tune* half only, so the *held-out* half's rate is the honest
one. Reported per half: skills, skills with a high finding (what install refuses),
skills with any finding, and the most frequent high codes.

Detection: every hostile sample the tests build
(``tests/unit/skills/scanning/hostile_samples.py``: ≥25, every class, some
obfuscated) is written to a temp dir and scanned; a sample counts as detected when
its expected code is among the findings, and as refused when it has a high one.

Speed: the scan's CPU time per skill (process time: the machine may be shared) over
the whole corpus, against a baseline measured in the same run — reading the same
files without scanning them (the I/O floor) — as a ratio.

Usage: ``python -m bench scan [--corpus DIR] [--limit N] [--results FILE]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from skilldeck.skills.scanning import scan_skill, skill_files
from skilldeck.skills.scanning.files import read_text, skill_folders

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
RESULTS = Path(__file__).resolve().parent / "results" / "scan.json"
SAMPLES_DIR = REPO / "tests" / "unit" / "skills" / "scanning"


def half_of(folder: Path, corpus: Path) -> str:
    """ "tune" or "held-out", stable across runs and machines."""
    digest = hashlib.sha256(folder.relative_to(corpus).as_posix().encode()).digest()
    return "tune" if digest[0] % 2 == 0 else "held-out"


def corpus_rates(corpus: Path, limit: int | None) -> tuple[dict[str, Any], float, float, int]:
    folders = skill_folders(corpus)[:limit]
    _read_only(folders)  # warms the page cache, so both timings below read from memory
    read_seconds = _read_only(folders)
    halves: dict[str, dict[str, Any]] = {}
    scan_seconds = 0.0
    for folder in folders:
        start = time.process_time()
        report = scan_skill(folder)
        scan_seconds += time.process_time() - start
        row = halves.setdefault(
            half_of(folder, corpus), {"skills": 0, "high": 0, "any": 0, "codes": Counter()}
        )
        row["skills"] += 1
        row["any"] += bool(report.findings)
        if report.high:
            row["high"] += 1
            row["codes"].update({f.code for f in report.high})
    for row in halves.values():
        n = max(row["skills"], 1)
        row["high_rate"] = round(row["high"] / n, 4)
        row["any_rate"] = round(row["any"] / n, 4)
        row["codes"] = dict(row["codes"].most_common(6))
    return halves, scan_seconds, read_seconds, len(folders)


def _read_only(folders: list[Path]) -> float:
    start = time.process_time()
    for folder in folders:
        for rel, path in skill_files(folder):
            read_text(path, rel)
    return time.process_time() - start


def detection() -> dict[str, Any]:
    sys.path.insert(0, str(SAMPLES_DIR))
    from hostile_samples import SAMPLES, write_sample  # lazy: a test helper, not skilldeck

    missed: list[str] = []
    refused = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, code, files in SAMPLES:
            report = scan_skill(write_sample(Path(tmp), name, files))
            if code not in {f.code for f in report.findings}:
                missed.append(f"{name} ({code})")
            refused += bool(report.high)
    total = len(SAMPLES)
    return {
        "samples": total,
        "detected": total - len(missed),
        "rate": round((total - len(missed)) / total, 4),
        "refused_high": refused,
        "missed": missed,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench scan")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--limit", type=int, default=None, help="scan only the first N skills")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    found = detection()
    print(
        f"hostile samples: {found['detected']}/{found['samples']} detected "
        f"({found['rate']:.0%}), {found['refused_high']} with a high finding"
    )
    for name in found["missed"]:
        print(f"  missed: {name}")
    result: dict[str, Any] = {"detection": found}
    if not args.corpus.is_dir():
        print(f"corpus {args.corpus} not found: false-positive rates skipped")
    else:
        halves, scan_s, read_s, count = corpus_rates(args.corpus.resolve(), args.limit)
        for name in ("tune", "held-out"):
            row = halves.get(name)
            if row:
                print(
                    f"corpus {name:<8}: {row['skills']} skills, {row['high']} with a high "
                    f"finding ({row['high_rate']:.1%}), {row['any']} with any "
                    f"({row['any_rate']:.1%})"
                )
                print(f"  high codes: {row['codes']}")
        per_skill = scan_s / max(count, 1) * 1000
        ratio = scan_s / read_s if read_s else float("nan")
        print(
            f"scan time: {per_skill:.2f} ms/skill over {count} skills "
            f"({ratio:.1f}x reading the same files, {read_s / max(count, 1) * 1000:.2f} ms/skill)"
        )
        result |= {
            "corpus": halves,
            "skills": count,
            "ms_per_skill": round(per_skill, 3),
            "read_ms_per_skill": round(read_s / max(count, 1) * 1000, 3),
            "ratio_to_read": round(ratio, 2),
        }
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
