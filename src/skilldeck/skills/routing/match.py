"""Ranking skills for a task: BM25F over the skill's fields, fused with code skills'
``can_handle`` and, optionally, sentence embeddings.

How a query is ranked (docs/routing.md has the measurements):

1. The query is tokenised like the skills (:mod:`.tokenize`), plus English
   equivalents of common non-English words.
2. BM25F (:mod:`._bm25f`) scores every skill over ``name``, ``description``,
   ``when_to_use`` (+ ``triggers``), ``tags`` (+ ``category``/``keywords``) and the
   body (first ``body_chars`` characters), each field weighted and length-normalised
   on its own. The body matters: descriptions alone miss most indirect requests.
3. The raw score is divided by the query's ceiling (the sum of its words' idf), which
   gives a **normalised score in [0, 1]**: roughly "how much of what the query says,
   weighted by rarity, this skill covers". Hints compare it to a threshold.
4. A code skill's ``can_handle(query)`` (0–1) lifts its score by noisy-OR:
   ``s' = 1 - (1 - s)(1 - CAN_HANDLE_WEIGHT * can_handle)``; it can only raise a score.
5. With an embedder (wordllama's, on by default: ``skills.match_embeddings``), skills
   are ranked and scored by ``(1 - w) * BM25F + w * cosine`` (:func:`._embeddings.fuse`,
   both normalised to [0, 1]). The packaged model is English-only, so requests that look
   non-English stay lexical.

The index is built once per registry state and cached on disk under
``settings.cache_dir / "routing"``, keyed by ``registry.fingerprint`` and the skills'
names and SKILL.md paths; a warm process loads arrays and never re-reads a SKILL.md.
A one-shot ``skilldeck skills match`` ranks from that file without numpy
(:mod:`._warm`, same rankings and scores).
"""

from __future__ import annotations

import io
import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from weakref import WeakKeyDictionary

import numpy as np

from skilldeck._atomic import atomic_write_bytes
from skilldeck.errors import SkilldeckError
from skilldeck.skills.model.skill import Skill, SkillKind
from skilldeck.skills.routing import _embeddings
from skilldeck.skills.routing._basics import (
    MIN_CEILING,
    BM25FParams,
    Match,
    cache_key,
    identity,
    index_path,
    routing_dir,
)
from skilldeck.skills.routing._bm25f import F32, BM25FIndex
from skilldeck.skills.routing._embeddings import (
    Embedder,
    default_embedder,
    fuse,
    reciprocal_rank_fusion,
    top_indices,
)
from skilldeck.skills.routing._match_index import (
    embedding_text,
    load_or_build,
    skill_fields,
    split_fused_names,
    vector_path,
)
from skilldeck.skills.routing._name_words import brand_index, name_evidence, name_tokens
from skilldeck.skills.routing._warm import embeddings_on
from skilldeck.skills.routing.multilingual import (
    Translator,
    dictionary_for,
    looks_foreign,
    tokenize_query,
)
from skilldeck.skills.routing.tokenize import fold

if TYPE_CHECKING:
    from skilldeck.config import Settings

__all__ = [
    "CAN_HANDLE_WEIGHT",
    "MIN_CEILING",
    "Match",
    "SkillMatcher",
    "rank_for_disclosure",
    "skill_fields",
    "split_fused_names",
]

log = logging.getLogger(__name__)

#: how strongly a code skill's own can_handle() score lifts its ranking score
CAN_HANDLE_WEIGHT = 0.5
_MEMO_SIZE = 8
_INDEX_MEMO: OrderedDict[str, BM25FIndex] = OrderedDict()
#: registry → ((fingerprint, embedder id), matcher): the matcher of its current state
_MATCHER_MEMO: WeakKeyDictionary[Any, tuple[tuple[str, int], SkillMatcher]] = WeakKeyDictionary()


class RegistryLike(Protocol):
    """What the matcher needs from :class:`~skilldeck.skills.registry.registry.SkillRegistry`."""

    settings: Settings

    @property
    def fingerprint(self) -> str: ...

    def list(self, *, include_disabled: bool = False) -> list[Skill]: ...


Handler = Callable[[str], float]


class SkillMatcher:
    """Ranks a fixed list of skills for free-text queries."""

    def __init__(
        self,
        skills: Sequence[Skill],
        index: BM25FIndex,
        *,
        handlers: Mapping[str, Handler] | Callable[[], Mapping[str, Handler]] | None = None,
        embedder: Embedder | None = None,
        vector_cache: Path | None = None,
        dictionary: Translator | None = None,
    ) -> None:
        if index.n_docs != len(skills):
            raise ValueError(f"index has {index.n_docs} documents for {len(skills)} skills")
        self.skills = list(skills)
        self.index = index
        self._handlers_source = handlers
        self._handlers: dict[int, Handler] | None = None
        self._embedder = embedder
        self._vector_cache = vector_cache
        self._vectors: F32 | None = None
        self._dictionary = dictionary
        self._name_word_memo: dict[int, frozenset[str]] = {}
        self._brand_rows: dict[str, tuple[int, ...]] | None = None

    # ---- construction ------------------------------------------------------------

    @classmethod
    def from_skills(
        cls,
        skills: Sequence[Skill],
        *,
        params: BM25FParams | None = None,
        cache_path: Path | None = None,
        handlers: Mapping[str, Handler] | Callable[[], Mapping[str, Handler]] | None = None,
        embedder: Embedder | None = None,
        dictionary: Translator | None = None,
    ) -> SkillMatcher:
        """Index ``skills`` (reading their bodies), or load ``cache_path`` when it holds
        an index of exactly these skills (by name and folder) built with ``params``.

        Non-English requests use ``dictionary``; by default, with a ``cache_path``,
        the packaged dictionaries compiled next to it (none without one)."""
        params = params or BM25FParams()
        index = load_or_build(list(skills), params, cache_path)
        vectors = vector_path(cache_path) if cache_path and embedder else None
        if dictionary is None and cache_path is not None:
            dictionary = dictionary_for(cache_path.parent)
        return cls(
            skills,
            index,
            handlers=handlers,
            embedder=embedder,
            vector_cache=vectors,
            dictionary=dictionary,
        )

    @classmethod
    def for_registry(
        cls, registry: RegistryLike, *, embedder: Embedder | None = None
    ) -> SkillMatcher:
        """The matcher for the registry's enabled skills, cached by its fingerprint:
        in memory for this process and on disk under ``settings.cache_dir``.

        With ``skills.match_embeddings`` on (or an ``embedder`` given), sentence
        embeddings are fused in; if the extra is not installed, a warning says how to
        install it and ranking stays lexical. The same registry in the same state gets
        the same matcher back, so asking once per user message costs nothing.
        """
        if embedder is None and embeddings_on(registry.settings):
            embedder = default_embedder(routing_dir(registry.settings.cache_dir))
        state = (registry.fingerprint, id(embedder))
        try:
            memo = _MATCHER_MEMO.get(registry)
        except TypeError:  # an unhashable or non-weakref-able stand-in registry
            return cls._build_for_registry(registry, embedder)
        if memo is not None and memo[0] == state:
            return memo[1]
        matcher = cls._build_for_registry(registry, embedder)
        _MATCHER_MEMO[registry] = (state, matcher)
        return matcher

    @classmethod
    def _build_for_registry(cls, registry: RegistryLike, embedder: Embedder | None) -> SkillMatcher:
        skills = registry.list()
        params = BM25FParams()
        key = cache_key(registry.fingerprint, params, identity(skills))
        path = index_path(registry.settings.cache_dir, key)
        index = _INDEX_MEMO.get(key)
        if index is None:
            index = load_or_build(skills, params, path)
            _INDEX_MEMO[key] = index
            while len(_INDEX_MEMO) > _MEMO_SIZE:
                _INDEX_MEMO.popitem(last=False)
        _INDEX_MEMO.move_to_end(key)
        settings = registry.settings
        return cls(
            skills,
            index,
            handlers=lambda: _code_skill_handlers(skills, settings),
            embedder=embedder,
            vector_cache=vector_path(path) if embedder else None,
            dictionary=dictionary_for(path.parent),
        )

    # ---- ranking -----------------------------------------------------------------

    def scores(self, query: str) -> F32:
        """Normalised score in [0, 1] of every skill, in ``self.skills`` order."""
        tokens = tokenize_query(query, self._dictionary)
        if tokens:
            raw, ceiling = self.index.scores(tokens, min_ceiling=MIN_CEILING)
            scores = raw / np.float32(ceiling) if ceiling > 0 else raw
        else:
            scores = np.zeros(len(self.skills), dtype=np.float32)
        for row, handler in self._code_handlers().items():
            lift = CAN_HANDLE_WEIGHT * _safe_call(handler, query, self.skills[row].name)
            if lift > 0:
                scores[row] = 1.0 - (1.0 - scores[row]) * (1.0 - lift)
        return np.clip(scores, 0.0, 1.0, out=scores)

    def rank(self, query: str, *, k: int = 10) -> list[Match]:
        """The ``k`` best skills for ``query``, best first; skills scoring 0 are left out."""
        if k <= 0 or not self.skills:
            return []
        scores = self.scores(query)
        if self._embedder is not None and looks_foreign(fold(query).lower()):
            return self._rank_with_names(query, scores, k)
        if self._embedder is not None:
            return self._rank_with_embeddings(query, scores, k)
        return [
            Match(self.skills[i].name, float(scores[i]), self.skills[i])
            for i in top_indices(scores, k)
        ]

    def _rank_with_embeddings(self, query: str, scores: F32, k: int) -> list[Match]:
        assert self._embedder is not None
        if self._vectors is None:
            self._vectors = self._skill_vectors(self._embedder)
        query_vec = self._embedder.embed([query])[0]
        cosine = np.clip(self._vectors @ query_vec, 0.0, 1.0).astype(np.float32)
        for row, evidence in self._name_evidence(query).items():
            cosine[row] = max(cosine[row], evidence)
        mixed, mean = fuse(scores, cosine)
        if _embeddings.FUSION_WEIGHT is not None:
            return [
                Match(self.skills[i].name, float(mixed[i]), self.skills[i])
                for i in top_indices(mixed, k)
            ]
        depth = max(k * 5, 50)
        lexical = [int(i) for i in top_indices(scores, depth)]
        semantic = [int(i) for i in top_indices(cosine, depth)]
        fused = reciprocal_rank_fusion([lexical, semantic])[:k]
        return [Match(self.skills[i].name, float(mean[i]), self.skills[i]) for i in fused]

    def _rank_with_names(self, query: str, scores: F32, k: int) -> list[Match]:
        """A non-English request: the English embeddings cannot read it, so the
        semantic half is its name evidence alone ("Leg in sevDesk eine Rechnung an")."""
        semantic = np.zeros(len(self.skills), dtype=np.float32)
        for row, evidence in self._name_evidence(query, brands=False).items():
            semantic[row] = evidence
        mixed, _ = fuse(scores, semantic)
        return [
            Match(self.skills[i].name, float(mixed[i]), self.skills[i])
            for i in top_indices(mixed, k)
        ]

    def _name_evidence(self, query: str, *, brands: bool = True) -> dict[int, float]:
        """Row → how strongly the request names the skill by a rare word of its name
        (:mod:`._name_words`): a floor under its cosine."""
        index = self.index

        def lookup(token: str) -> tuple[float, list[int]] | None:
            tid = index.vocab.get(token)
            if tid is None:
                return None
            start, end = int(index.indptr[tid]), int(index.indptr[tid + 1])
            return float(index.idf[tid]), index.docs[start:end].tolist()

        tokens = tokenize_query(query, self._dictionary)
        by_brand = self._brands if brands else None
        return name_evidence(query, tokens, index.n_docs, lookup, self._name_words, by_brand)

    def _name_words(self, row: int) -> frozenset[str]:
        words = self._name_word_memo.get(row)
        if words is None:
            words = self._name_word_memo[row] = frozenset(name_tokens(self.skills[row]))
        return words

    def _brands(self, key: str) -> tuple[int, ...]:
        """Rows of the skills wrapping the product ``key`` (built once, from the
        immutable skills: no request's state)."""
        if self._brand_rows is None:
            self._brand_rows = brand_index(self.skills)
        return self._brand_rows.get(key, ())

    def _skill_vectors(self, embedder: Embedder) -> F32:
        """Every skill's embedding: from the cache file next to the index when it has
        one row per skill, else computed (once) and written there."""
        path = self._vector_cache
        if path is not None and path.is_file():
            try:
                vectors = np.load(path, allow_pickle=False)
                if _unit_rows(vectors, len(self.skills)):
                    return np.asarray(vectors, dtype=np.float32)
                log.warning("embedding cache %s is damaged; recomputing it", path)
            except (OSError, ValueError, EOFError) as e:
                log.info("embedding cache %s unusable: %s", path, e)
        vectors = embedder.embed([embedding_text(s) for s in self.skills])
        if path is not None:
            buf = io.BytesIO()
            np.save(buf, vectors)
            try:
                atomic_write_bytes(path, buf.getvalue())
            except OSError as e:
                log.warning("cannot write embedding cache %s: %s", path, e)
        return vectors

    def _code_handlers(self) -> dict[int, Handler]:
        if self._handlers is None:
            source = self._handlers_source
            by_name = source() if callable(source) else (source or {})
            rows = {s.name: i for i, s in enumerate(self.skills)}
            self._handlers = {rows[n]: h for n, h in by_name.items() if n in rows}
        return self._handlers


def rank_for_disclosure(matcher: SkillMatcher, task: str, *, k: int | None = None) -> list[str]:
    """Skill names most-relevant-first for ``render_available_skills(ranked=...)``.

    Only skills with a positive score are listed; the renderer keeps these in full
    and shortens the rest when the catalog does not fit its budget.
    """
    limit = len(matcher.skills) if k is None else k
    return [m.name for m in matcher.rank(task, k=limit)] if task.strip() else []


# ---- helpers -----------------------------------------------------------------------


def _unit_rows(vectors: F32, rows: int) -> bool:
    """Whether a cached embedding matrix has one finite, unit-length (or zero) row per
    skill: anything else is a damaged file, recomputed rather than trusted."""
    if vectors.ndim != 2 or len(vectors) != rows or not np.isfinite(vectors).all():
        return False
    norms = np.linalg.norm(vectors, axis=1)
    return bool(np.all((norms < 1e-6) | (np.abs(norms - 1.0) < 1e-3)))


def _safe_call(handler: Handler, query: str, name: str) -> float:
    """A code skill's can_handle; its failure must never break ranking."""
    try:
        value = float(handler(query))
    except Exception as e:  # third-party code: any failure means "no opinion"
        log.warning("can_handle() of skill %r failed: %s", name, e)
        return 0.0
    return min(max(value, 0.0), 1.0) if value == value else 0.0


def _code_skill_handlers(skills: Sequence[Skill], settings: Settings) -> dict[str, Handler]:
    """``can_handle`` of every code skill that loads under the trust settings."""
    code = [s for s in skills if s.kind is SkillKind.CODE]
    if not code:
        return {}
    # code skills bring pydantic settings, anyio and the sandbox (~250 ms of imports):
    # paid only when the catalog holds a code skill
    from skilldeck.skills.code import load_code_skill  # lazy: ~250 ms, code skills only

    handlers: dict[str, Handler] = {}
    for skill in code:
        try:
            handlers[skill.name] = load_code_skill(skill, settings=settings).can_handle
        except SkilldeckError as e:  # untrusted, disabled or broken: BM25F alone ranks it
            log.info("not using can_handle of %r: %s", skill.name, e)
    return handlers
