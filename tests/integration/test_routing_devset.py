"""The routing development set is well-formed and its answers exist in the corpus."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from bench.routing.dataset import load_devset


def test_devset_shape() -> None:
    queries = load_devset()
    assert len(queries) >= 150
    assert len({q.id for q in queries}) == len(queries)
    assert len({q.text for q in queries}) == len(queries)
    kinds = Counter(q.kind for q in queries)
    assert kinds["none"] >= 20 and kinds["indirect"] >= 20
    assert all((q.kind == "none") == (not q.expected) for q in queries)
    langs = {q.lang for q in queries}
    assert {"en", "es", "pt", "fr", "de", "zh"} <= langs
    splits = Counter(q.split for q in queries)
    assert set(splits) == {"dev", "test"} and splits["test"] >= 50


@pytest.mark.corpus
def test_every_expected_answer_is_a_skill_of_the_corpus(corpus: Path) -> None:
    from bench.routing.corpus import load_corpus

    skills = load_corpus(corpus)
    names = {s.name for s in skills}
    folders = {s.folder.relative_to(corpus).as_posix() for s in skills}
    for q in load_devset():
        for answer in q.expected:
            if answer.startswith("path:"):
                assert answer[5:] in folders, (q.id, answer)
            else:
                assert answer in names, (q.id, answer)
