"""Tools for writing routing requests and judging their answer sets (the method of
``docs/routing.md``, "How the splits were made"); not part of any measurement.

* ``python -m bench.routing.authoring sample SEED N [--exclude FILE]`` prints N skills
  drawn at random (one folder per distinct name, seeded) with their own text — the
  description and the start of the body — to write requests from. Nothing the
  router outputs is shown.
* ``python -m bench.routing.authoring pool "REQUEST" TERM...`` prints the candidates
  to judge a request against: every skill whose name or description matches one of
  the regular expressions TERM (a grep over the whole catalog), plus the top 12 of
  skilldeck's matcher and the top 12 of plain BM25 over the full text, one line per
  distinct name (how many folders carry it, which pools found it, its description),
  so the answer set is judged by reading, not taken from one ranker's top-3.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path

from bench.routing.corpus import load_corpus
from bench.routing.systems import BM25FullText, Skilldeck

#: how many of each ranker's best skills join the pool
TOP = 12


def _by_name(skills: list) -> dict[str, list]:
    names: dict[str, list] = defaultdict(list)
    for s in skills:
        names[s.name].append(s)
    return names


def sample(seed: int, count: int, exclude: set[str]) -> None:
    names = _by_name(load_corpus())
    pool = sorted(n for n in names if n not in exclude)
    for name in random.Random(seed).sample(pool, count):
        skill = names[name][0]
        body = " ".join(skill.body.split())[:700]
        print(f"### {name}  ({len(names[name])} folders)\n{skill.description}\n--- {body}\n")


def pool(
    request: str, terms: list[str], skills: list | None = None, rankers: list | None = None
) -> None:
    skills = skills if skills is not None else load_corpus()
    rankers = rankers or [Skilldeck.build(skills), BM25FullText(skills)]
    found: dict[str, set[str]] = defaultdict(set)
    for pattern in terms:
        rx = re.compile(pattern, re.IGNORECASE)
        for s in skills:
            if rx.search(s.name) or rx.search(s.description):
                found[s.name].add("grep")
    for ranker in rankers:
        for s, _score in ranker.rank(request, TOP):
            found[s.name].add(ranker.name)
    names = _by_name(skills)
    for name in sorted(found, key=lambda n: (-len(found[n]), n)):
        desc = " ".join(names[name][0].description.split())[:230]
        print(f"{name} [{len(names[name])}] {','.join(sorted(found[name]))}: {desc}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["sample"]:
        exclude: set[str] = set()
        if "--exclude" in argv:
            path = Path(argv[argv.index("--exclude") + 1])
            lines = path.read_text(encoding="utf-8").splitlines()
            exclude = {line.strip() for line in lines} - {""}
        sample(int(argv[1]), int(argv[2]), exclude)
        return 0
    if argv[:1] == ["pool-batch"] and len(argv) == 2:  # a JSON list of [request, terms]
        skills = load_corpus()
        rankers = [Skilldeck.build(skills), BM25FullText(skills)]
        for request, terms in json.loads(Path(argv[1]).read_text(encoding="utf-8")):
            print(f"\n======== {request}")
            pool(request, terms, skills, rankers)
        return 0
    if argv[:1] == ["pool"] and len(argv) >= 2:
        pool(argv[1], argv[2:])
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
