"""Ranking from the cached index without numpy, for one-shot processes.

``skilldeck skills match`` on a warm cache ranks once and exits; importing numpy
(~100 ms of CPU) and decoding the whole index into arrays and a vocabulary dict
cost more than the rest of the command (``python -m bench startup``, row
``match (warm)``: goal at most twice ``agentskills validate``). So
:func:`warm_rank` reads the ``.npz`` written by :meth:`._bm25f.BM25FIndex.save`
with ``zipfile`` and ``memoryview``, looks the query's words up in the vocabulary
blob without building a dict, and adds the postings in float32 exactly as numpy
does (each sum and the final division rounded to float32 through ``array("f")``),
so the ranking and the printed scores are those of :class:`.match.SkillMatcher`;
tests compare the two.

It declines (returns None, and the caller uses the matcher) whenever the matcher
would do more than BM25F: embeddings on, a code skill's ``can_handle`` in the
catalog, no usable cache file yet.
"""

from __future__ import annotations

import heapq
import json
import logging
import math
import operator
import os
import re
import sys
import zipfile
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from skilldeck.skills.model.skill import Skill, SkillKind
from skilldeck.skills.routing._basics import (
    MIN_CEILING,
    BM25FParams,
    Match,
    cache_key,
    identity,
    index_path,
)
from skilldeck.skills.routing._name_words import brand_index, name_evidence, name_tokens
from skilldeck.skills.routing._wordllama import query_vector, read_vectors, wordllama_folder
from skilldeck.skills.routing.multilingual import dictionary_for, looks_foreign, tokenize_query
from skilldeck.skills.routing.tokenize import fold

if TYPE_CHECKING:
    from skilldeck.config import Settings

__all__ = [
    "FUSION_WEIGHT",
    "WarmIndex",
    "WarmRegistry",
    "embeddings_on",
    "warm_rank",
    "warm_rank_embedded",
]

log = logging.getLogger(__name__)

#: numpy dtype (little-endian) → memoryview format of the integer arrays
_INT_FORMATS: dict[str, Literal["i", "q", "B"]] = {"<i4": "i", "<i8": "q", "|u1": "B"}
_HEADER = re.compile(rb"'descr': '([<|][a-z]\d)', 'fortran_order': False, 'shape': \((\d+),\)")


class WarmRegistry(Protocol):
    settings: Settings

    @property
    def fingerprint(self) -> str: ...

    def list(self, *, include_disabled: bool = False) -> list[Skill]: ...


def warm_rank(registry: WarmRegistry, query: str, *, k: int) -> list[Match] | None:
    """The ``k`` best enabled skills for ``query`` from the cached index, as
    :meth:`.match.SkillMatcher.rank` ranks them; None when only the matcher can."""
    settings = registry.settings
    if embeddings_on(settings):
        return None
    skills = registry.list()
    if k <= 0 or not skills:
        return []
    if any(s.kind is SkillKind.CODE for s in skills):
        return None
    params = BM25FParams()
    rows = identity(skills)
    path = index_path(settings.cache_dir, cache_key(registry.fingerprint, params, rows))
    index = WarmIndex.read(path, rows, params)
    if index is None:
        return None
    scores = index.positive_scores(tokenize_query(query, dictionary_for(path.parent)))
    return [Match(skills[i].name, scores[i], skills[i]) for i in _top(scores, k)]


@dataclass(frozen=True)
class WarmIndex:
    """The arrays of a cached BM25F index as views of the file's bytes."""

    framed_vocab: bytes
    idf: memoryview[Any]
    indptr: memoryview[Any]
    docs: memoryview[Any]
    weights: memoryview[Any]
    n_docs: int

    @classmethod
    def read(cls, path: Path, skill_identity: list[str], params: BM25FParams) -> WarmIndex | None:
        """The index at ``path`` if it indexes exactly the skills of ``skill_identity``
        (:func:`._basics.identity`) with ``params``; None when it is missing or
        unusable (the matcher rebuilds it)."""
        if sys.byteorder != "little":
            return None
        try:
            with zipfile.ZipFile(path) as archive:
                arrays = {n.removesuffix(".npy"): _npy(archive.read(n)) for n in archive.namelist()}
            meta = json.loads(arrays["meta"].tobytes())
            if meta.get("params") != params.key() or meta.get("skills") != skill_identity:
                return None
            index = cls(
                b"\n" + arrays["vocab"].tobytes() + b"\n",
                arrays["idf"],
                arrays["indptr"],
                arrays["docs"],
                arrays["weights"],
                arrays["n_docs"][0],
            )
        except (OSError, ValueError, KeyError, IndexError, zipfile.BadZipFile) as e:
            log.info("routing cache %s not readable here: %s", path, e)
            return None
        return index if index.n_docs == len(skill_identity) else None

    def term_id(self, token: str) -> int | None:
        """The vocabulary row of ``token``: the terms are stored newline-separated in
        row order, so the row is the count of newlines before the match."""
        if not token:
            return None
        at = self.framed_vocab.find(b"\n" + token.encode() + b"\n")
        return None if at < 0 else self.framed_vocab.count(b"\n", 0, at)

    def positive_scores(self, tokens: Sequence[str]) -> dict[int, float]:
        """Row → score of the skills scoring above 0, as :meth:`.match.SkillMatcher.scores`
        computes them without code skills: BM25F divided by the ceiling, each sum and
        the division rounded to float32 as numpy's float32 arrays round them."""
        sums = array("f", bytes(4 * self.n_docs))
        touched: set[int] = set()
        ceiling = 0.0
        unseen_idf = math.log1p((self.n_docs - 0.5) / 1.5) if self.n_docs else 1.0
        for token in dict.fromkeys(tokens):
            tid = self.term_id(token)
            if tid is None:
                ceiling += unseen_idf
                continue
            ceiling += self.idf[tid]
            start, end = self.indptr[tid], self.indptr[tid + 1]
            docs = self.docs[start:end]
            for doc, weight in zip(docs, self.weights[start:end], strict=True):
                sums[doc] += weight
            touched.update(docs)
        divisor = array("f", [max(ceiling, MIN_CEILING)])[0]
        rows = sorted(touched)
        scores = array("f", [min(sums[row] / divisor, 1.0) for row in rows])
        return {row: score for row, score in zip(rows, scores, strict=True) if score > 0}

    def name_evidence(
        self, query: str, tokens: Sequence[str], skills: Sequence[Skill], *, brands: bool
    ) -> dict[int, float]:
        """:meth:`.match.SkillMatcher._name_evidence` from the file's views."""

        def lookup(token: str) -> tuple[float, memoryview[Any]] | None:
            tid = self.term_id(token)
            if tid is None:
                return None
            return self.idf[tid], self.docs[self.indptr[tid] : self.indptr[tid + 1]]

        def words(row: int) -> frozenset[str]:
            return frozenset(name_tokens(skills[row]))

        built: list[dict[str, tuple[int, ...]]] = []

        def by_brand(key: str) -> tuple[int, ...]:
            if not built:  # only when the request spells a name: ~10 ms on 3,200 skills
                built.append(brand_index(skills))
            return built[0].get(key, ())

        return name_evidence(
            query, tokens, self.n_docs, lookup, words, by_brand if brands else None
        )


def embeddings_on(settings: Settings) -> bool:
    """Whether routing fuses embeddings: ``skills.match_embeddings`` (on by default),
    unless ``SKILLDECK_EMBEDDINGS=none`` turns them off for this process (the test
    suite does, as ``SKILLDECK_DICTIONARIES=none`` turns off the dictionaries)."""
    return settings.skills.match_embeddings and os.environ.get("SKILLDECK_EMBEDDINGS") != "none"


def _npy(blob: bytes) -> memoryview[Any]:
    """The data of one ``.npy`` file (a 1-D little-endian array) as a typed view."""
    if blob[:6] != b"\x93NUMPY":
        raise ValueError("not an .npy array")
    size_bytes = 2 if blob[6] == 1 else 4
    start = 8 + size_bytes
    header_len = int.from_bytes(blob[8:start], "little")
    found = _HEADER.search(blob[start : start + header_len])
    if found is None:
        raise ValueError("unexpected .npy header")
    dtype = found.group(1).decode()
    if dtype != "<f4" and dtype not in _INT_FORMATS:
        raise ValueError(f"unexpected dtype {dtype!r}")
    data = memoryview(blob)[start + header_len :]
    view: memoryview[Any] = data.cast("f") if dtype == "<f4" else data.cast(_INT_FORMATS[dtype])
    if len(view) != int(found.group(2)):
        raise ValueError("truncated .npy array")
    return view


def _top(scores: dict[int, float], k: int) -> list[int]:
    """As :func:`.match._top`: the ``k`` highest positive scores, ties by lower index."""
    return [i for _, i in heapq.nsmallest(k, ((-s, i) for i, s in scores.items()))]


# ---- the embeddings half of a warm match, without numpy --------------------------

#: with a weight, skills are ranked by ``(1 - w) * BM25F + w * cosine`` (normalised
#: scores, both in [0, 1]) instead of reciprocal rank fusion; see docs/routing.md
FUSION_WEIGHT: float | None = 0.4


def _fuse(lexical: float, semantic: float) -> float:
    assert FUSION_WEIGHT is not None
    return (1 - FUSION_WEIGHT) * lexical + FUSION_WEIGHT * semantic


def warm_rank_embedded(registry: WarmRegistry, query: str, *, k: int) -> list[Match] | None:
    """:func:`warm_rank` with embeddings on, still without numpy (importing it costs
    more than the rest of a warm ``skills match``: ``python -m bench startup``): the
    lexical scores from the cached index, the skills' vectors from their cache file,
    the request's vector from the memory-mapped table (:mod:`._wordllama`), the
    name evidence (:mod:`._name_words`) as a floor under each cosine, fused as
    :meth:`.match.SkillMatcher.rank` fuses them (in float64 where numpy uses
    float32: the same ranking but for ties within ~1e-6; a test compares them).
    None when only the matcher can answer (no cache yet, a code skill, no model)."""
    skills = registry.list()
    if k <= 0 or not skills:
        return []
    if FUSION_WEIGHT is None or any(s.kind is SkillKind.CODE for s in skills):
        return None
    params = BM25FParams()
    rows = identity(skills)
    path = index_path(registry.settings.cache_dir, cache_key(registry.fingerprint, params, rows))
    index = WarmIndex.read(path, rows, params)
    if index is None:
        return None
    tokens = tokenize_query(query, dictionary_for(path.parent))
    lexical = index.positive_scores(tokens)
    if looks_foreign(fold(query).lower()):
        if wordllama_folder() is None:
            return None  # no model: the matcher ranks it by words alone
        # as the matcher: its rare name words are the semantic half
        floors = index.name_evidence(query, tokens, skills, brands=False)
        named = {
            row: _fuse(lexical.get(row, 0.0), floors.get(row, 0.0)) for row in {*lexical, *floors}
        }
        return [Match(skills[i].name, named[i], skills[i]) for i in _top(named, k)]
    vectors = read_vectors(path.with_name(path.stem + ".vectors.npy"), len(skills))
    wanted = query_vector(query, path.parent) if vectors is not None else None
    if vectors is None or wanted is None:
        return None
    floors = index.name_evidence(query, tokens, skills, brands=True)
    width = len(wanted)
    mixed: dict[int, float] = {}
    for row in range(len(skills)):
        cosine = sum(map(operator.mul, vectors[row * width : (row + 1) * width], wanted))
        if not -1.001 <= cosine <= 1.001:  # NaN or not unit rows: a damaged cache file
            return None  # the matcher checks the file and recomputes it
        cosine = max(min(max(cosine, 0.0), 1.0), floors.get(row, 0.0))
        score = _fuse(lexical.get(row, 0.0), cosine)
        if score > 0:
            mixed[row] = score
    return [Match(skills[i].name, mixed[i], skills[i]) for i in _top(mixed, k)]
