"""The dev and held-out routing splits: well-formed, answers that exist, held-out
written from skills the dev split never names, and the interval arithmetic."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from bench.routing.splits import load_split, wilson


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_split_shape(split: str) -> None:
    queries = load_split(split)
    assert len(queries) >= 40
    assert len({q.id for q in queries}) == len(queries)
    assert len({q.text for q in queries}) == len(queries)
    assert {q.split for q in queries} == {split}
    kinds = Counter(q.kind for q in queries)
    assert kinds["none"] >= 5 and kinds["indirect"] >= 10 and kinds["direct"] >= 10
    assert all((q.kind == "none") == (not q.expected) for q in queries)
    foreign = {q.lang for q in queries} - {"en"}
    assert len(foreign) >= 5  # several languages, not one


def test_heldout_skills_are_not_in_the_dev_split() -> None:
    dev_names = {name for q in load_split("dev") for name in q.expected}
    for q in load_split("heldout"):
        assert not (q.expected & dev_names), (q.id, sorted(q.expected & dev_names))


def test_wilson_interval() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(27, 40)
    assert lo < 27 / 40 < hi
    assert (round(lo, 2), round(hi, 2)) == (0.52, 0.80)
    assert wilson(10, 10)[1] == 1.0 and wilson(10, 10)[0] > 0.6


@pytest.mark.corpus
@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_every_expected_answer_is_a_skill_of_the_corpus(corpus: Path, split: str) -> None:
    from bench.routing.corpus import load_corpus

    names = {s.name for s in load_corpus(corpus)}
    for q in load_split(split):
        assert q.expected <= names, (q.id, sorted(q.expected - names))
