"""The rankers compared by the routing benchmark, behind one small interface.

* ``keyword-overlap`` — the default ``can_handle`` of the seed design
  (``../shared/seeds/000_*.txt``): the share of the query's words found in the
  skill's name + description (skilldeck's ``codeskill.keyword_score``), computed per
  skill per query exactly as a ``SkillManager.match`` loop would.
* ``bm25-name-desc`` — off-the-shelf BM25 (bm25s, Lucene variant, its English
  stopwords and tokeniser) over name + description only: what routing on the
  ``<available_skills>`` text alone achieves.
* ``bm25-full-text`` — the same bm25s over name + description + the body's first
  20,000 characters (what skilldeck's BM25F indexes, as one bag of words).
* ``skilldeck`` — :class:`skilldeck.skills.routing.match.SkillMatcher` (BM25F over all
  fields and the body, skilldeck's tokeniser), with the bilingual dictionaries
  installed on this machine; ``skilldeck-lexicon`` — the same without them (the
  hand-written lexicon a machine without dictionary packages falls back to).
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from skilldeck.skills.model.skill import Skill

if TYPE_CHECKING:
    from skilldeck.skills.routing import SkillMatcher


#: where the bench compiles the installed bilingual dictionaries (once per machine)
DICTIONARY_CACHE = Path(tempfile.gettempdir()) / "skilldeck-routing-bench"


class Ranker(Protocol):
    name: str

    def rank(self, query: str, k: int) -> list[tuple[Skill, float]]: ...


class KeywordOverlap:
    """The seed's default ``can_handle``: keyword overlap with name + description."""

    name = "keyword-overlap"

    def __init__(self, skills: Sequence[Skill]) -> None:
        from skilldeck.skills.code import keyword_score

        self._score = keyword_score
        self.skills = list(skills)
        self._texts = [f"{s.name.replace('-', ' ')} {s.description}" for s in self.skills]

    def rank(self, query: str, k: int) -> list[tuple[Skill, float]]:
        scores = [self._score(query, text) for text in self._texts]
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
        return [(self.skills[i], scores[i]) for i in order if scores[i] > 0]


class BM25NameDescription:
    """bm25s over name + description; scores normalised by the query's idf ceiling
    (the same normalisation skilldeck uses), so a threshold means the same thing."""

    name = "bm25-name-desc"

    def __init__(self, skills: Sequence[Skill]) -> None:
        import bm25s

        self._bm25s = bm25s
        self.skills = list(skills)
        corpus = [self.text(s) for s in self.skills]
        tokens = bm25s.tokenize(corpus, stopwords="en", show_progress=False)
        self._retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        self._retriever.index(tokens, show_progress=False)
        self._vocab: dict[str, int] = tokens.vocab
        n = len(self.skills)
        df = np.zeros(len(self._vocab), dtype=np.int64)
        for doc in tokens.ids:
            for tid in set(doc):
                df[tid] += 1
        self._idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
        self._unseen = math.log(1 + (n - 0.5) / 1.5)

    def rank(self, query: str, k: int) -> list[tuple[Skill, float]]:
        words = self._bm25s.tokenize(
            [query], stopwords="en", return_ids=False, show_progress=False
        )[0]
        known = [w for w in dict.fromkeys(words) if w in self._vocab]
        if not known:
            return []
        scores = self._retriever.get_scores(known)
        # Lucene BM25 saturates each term below its idf, so this bounds the score
        ceiling = sum(self._idf[self._vocab[w]] for w in known)
        ceiling += self._unseen * (len(set(words)) - len(known))
        order = np.argsort(-scores, kind="stable")[:k]
        return [(self.skills[i], float(scores[i] / ceiling)) for i in order if scores[i] > 0]

    @staticmethod
    def text(skill: Skill) -> str:
        return f"{skill.name.replace('-', ' ')} {skill.description}"


class BM25FullText(BM25NameDescription):
    """bm25s over name + description + body (its first 20,000 characters)."""

    name = "bm25-full-text"

    @staticmethod
    def text(skill: Skill) -> str:
        return f"{skill.name.replace('-', ' ')} {skill.description} {skill.body[:20_000]}"


class Skilldeck:
    """skilldeck's :class:`~skilldeck.skills.routing.match.SkillMatcher`."""

    def __init__(self, matcher: SkillMatcher, *, name: str = "skilldeck") -> None:
        self.matcher = matcher
        self.name = name

    @classmethod
    def build(
        cls, skills: Sequence[Skill], *, name: str = "skilldeck", **options: Any
    ) -> Skilldeck:
        """The matcher as a user's machine has it: with the installed dictionaries
        (compiled once under :data:`DICTIONARY_CACHE`) unless ``dictionary`` is given."""
        from skilldeck.skills.routing import SkillMatcher
        from skilldeck.skills.routing.multilingual import dictionary_for

        options.setdefault("dictionary", dictionary_for(DICTIONARY_CACHE))
        return cls(SkillMatcher.from_skills(skills, **options), name=name)

    @classmethod
    def lexicon_only(cls, skills: Sequence[Skill]) -> Skilldeck:
        """The matcher on a machine with no dictionary installed (hand-written lexicon)."""
        return cls.build(skills, name="skilldeck-lexicon", dictionary=NoDictionary())

    def rank(self, query: str, k: int) -> list[tuple[Skill, float]]:
        return [(m.skill, m.score) for m in self.matcher.rank(query, k=k)]


class WithoutNameEvidence:
    """A ranker with all the name evidence of :mod:`skilldeck.skills.routing._name_words`
    (rare words and brands) turned off while it ranks."""

    def __init__(self, ranker: Skilldeck, *, name: str = "skilldeck-no-names") -> None:
        self.ranker = ranker
        self.name = name

    def rank(self, query: str, k: int) -> list[tuple[Skill, float]]:
        from skilldeck.skills.routing import _name_words

        scale, brand = _name_words.NAME_EVIDENCE_SCALE, _name_words.BRAND_EVIDENCE
        _name_words.NAME_EVIDENCE_SCALE = _name_words.BRAND_EVIDENCE = 0.0
        try:
            return self.ranker.rank(query, k)
        finally:
            _name_words.NAME_EVIDENCE_SCALE, _name_words.BRAND_EVIDENCE = scale, brand


class PreviousDefault:
    """The fused default before brand evidence (the fourth round's): no brand
    evidence, and non-English requests — by the old test, which missed Cyrillic and
    Greek — ranked by words alone, so a change and its baseline run in the same
    process. Not bit-for-bit the old code: weekdays and months no longer count as
    capitalised names for its rare-word evidence either, and timings include the
    new code's work."""

    def __init__(self, ranker: Skilldeck, *, name: str = "skilldeck-no-brands") -> None:
        self.ranker = ranker
        self.name = name

    def rank(self, query: str, k: int) -> list[tuple[Skill, float]]:
        from skilldeck.skills.routing import _name_words
        from skilldeck.skills.routing._embeddings import top_indices
        from skilldeck.skills.routing.multilingual import _lexicon
        from skilldeck.skills.routing.tokenize import fold

        folded = fold(query).lower()
        old_foreign = _lexicon._has_cjk(folded) or any(
            w in _lexicon._FOREIGN_MARKERS for w in _lexicon._WORD_RE.findall(folded)
        )
        matcher = self.ranker.matcher
        scores = matcher.scores(query)
        if old_foreign:
            return [(matcher.skills[i], float(scores[i])) for i in top_indices(scores, k)]
        brand = _name_words.BRAND_EVIDENCE
        _name_words.BRAND_EVIDENCE = 0.0
        try:
            found = matcher._rank_with_embeddings(query, scores, k)
        finally:
            _name_words.BRAND_EVIDENCE = brand
        return [(m.skill, m.score) for m in found]


class NoDictionary:
    """No dictionary data: the matcher falls back to its hand-written lexicon."""

    def translate(self, folded_lower: str) -> list[str] | None:
        return None
