"""On the real corpus, ``skills match``'s numpy-free warm ranking gives exactly the
matcher's rankings and scores for every query of the routing splits."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.routing.splits import load_split

from skilldeck.config import load_settings
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.routing import SkillMatcher, warm_rank


@pytest.mark.corpus
def test_warm_rank_equals_the_matcher_on_the_corpus(corpus: Path, tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path / "home", workspace=tmp_path)
    registry = SkillRegistry.discover(settings, roots=[corpus], no_defaults=True)
    matcher = SkillMatcher.for_registry(registry)
    queries = [q.text for split in ("dev", "heldout") for q in load_split(split)]
    for query in queries:
        for k in (1, 5, 40):
            warm = warm_rank(registry, query, k=k)
            assert warm is not None
            expected = [(m.name, m.score, m.skill.folder) for m in matcher.rank(query, k=k)]
            assert [(m.name, m.score, m.skill.folder) for m in warm] == expected, (query, k)
