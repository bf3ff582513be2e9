"""Semantic ranking: static word embeddings fused with BM25F (on by default).

``wordllama`` (a dependency: a 16 MB table of static token embeddings distilled
from LLaMA-2's, inside a 19 MB wheel; ``tokenizers``; no torch,
CPU only) gives the model; :func:`load_embedder` reads its weights and tokenizer
from the installed package (the library's own ``WordLlama.load()`` looks for the
tokenizer under a folder name the wheel does not use and then downloads it from a
model hub, so it is never called; a test runs with the network closed). Without
the package it raises ImportError with the install hint and ranking stays lexical.
It was made the default because it raised top-1 on both held-out splits
(docs/routing.md); ``skills.match_embeddings = false`` turns it off.

A query embeds in well under a millisecond and the 3,200-skill corpus in seconds
(an average of token vectors), cached next to the index like the old model's.
Reciprocal rank fusion (Cormack et al., 2009) adds ``1 / (k + rank)`` over the
rankings: it needs no score calibration between BM25F and cosine similarity, which
live on unrelated scales.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import sqlite3
from array import array
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from skilldeck.skills.model.skill import SkillKind
from skilldeck.skills.routing._basics import (
    BM25FParams,
    Match,
    cache_key,
    identity,
    index_path,
)
from skilldeck.skills.routing._bm25f import F32
from skilldeck.skills.routing._dictionary import dictionary_for
from skilldeck.skills.routing._lexicon import looks_foreign, tokenize_query
from skilldeck.skills.routing._match_index import vector_path
from skilldeck.skills.routing._warm import WarmIndex, WarmRegistry
from skilldeck.skills.routing.tokenize import fold

log = logging.getLogger(__name__)

INSTALL_HINT = (
    "Semantic skill routing needs wordllama, a skilldeck dependency that is missing "
    "here: pip install 'wordllama>=0.4,<0.5' (or set skills.match_embeddings = false)."
)
RRF_K = 60
#: with a weight, skills are ranked by ``(1 - w) * BM25F + w * cosine`` (normalised
#: scores, both in [0, 1]) instead of reciprocal rank fusion; see docs/routing.md
FUSION_WEIGHT: float | None = 0.4
#: the wheel's files (the 256-dimension model of the ``l2_supercat`` configuration)
WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors (one row per text)."""

    def embed(self, texts: Sequence[str]) -> F32: ...


class StaticEmbedder:
    """Averaged static token embeddings (wordllama's model), L2-normalised.

    The arithmetic of ``wordllama.inference.WordLlamaInference.embed`` (float32 rows
    of the table averaged over a text's tokens, no special tokens, no truncation,
    then normalised; a test compares the two), with two speed-ups a one-shot
    ``skilldeck skills match`` needs (``python -m bench startup``, row
    ``match (warm)``): the ``wordllama`` package is never imported (~0.4 s of
    modules), and the tokenizer (a 1.8 MB JSON, ~110 ms to load) is loaded only for
    words the :class:`TokenCache` has not seen. LLaMA's tokenizer never merges
    across a space, so a text's tokens are its space-separated words' tokens, and
    words can be tokenized (and cached) one by one. Runs of whitespace count as one
    space (wordllama would add a token for each extra space or newline).
    """

    def __init__(self, table: Any, tokenizer: Callable[[], Any], cache: TokenCache) -> None:
        self._table = table  # (vocabulary, dimension) float16
        self._load_tokenizer = tokenizer
        self._tokenizer: Any = None
        self._cache = cache

    def embed(self, texts: Sequence[str]) -> F32:
        words = [text.split() for text in texts]
        ids = self._token_ids({w for ws in words for w in ws})
        out = np.zeros((len(texts), self._table.shape[1]), dtype=np.float32)
        last = self._table.shape[0] - 1
        for row, text_words in enumerate(words):
            tokens = [t for w in text_words for t in ids[w]]
            if tokens:
                rows = self._table[np.clip(np.asarray(tokens, dtype=np.int64), 0, last)]
                out[row] = rows.astype(np.float32).sum(axis=0) / np.float32(len(tokens))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def _token_ids(self, words: set[str]) -> dict[str, tuple[int, ...]]:
        found = self._cache.get(words)
        missing = sorted(words - found.keys())
        if missing:
            if self._tokenizer is None:
                self._tokenizer = self._load_tokenizer()
            encoded = self._tokenizer.encode_batch(missing, add_special_tokens=False)
            new = {w: tuple(e.ids) for w, e in zip(missing, encoded, strict=True)}
            self._cache.put(new)
            found.update(new)
        return found


class TokenCache:
    """Word → token ids, in SQLite under the routing cache (or in memory only)."""

    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._memory: dict[str, tuple[int, ...]] = {}

    def get(self, words: set[str]) -> dict[str, tuple[int, ...]]:
        found = {w: self._memory[w] for w in words if w in self._memory}
        rest = [w for w in words if w not in found]
        if rest and self._path is not None and self._path.is_file():
            try:
                with closing(sqlite3.connect(self._path)) as db:
                    for i in range(0, len(rest), 500):
                        chunk = rest[i : i + 500]
                        marks = ",".join("?" * len(chunk))
                        query = f"SELECT word, ids FROM tokens WHERE word IN ({marks})"
                        for word, blob in db.execute(query, chunk):
                            found[word] = tuple(array("i", blob))
            except sqlite3.Error as e:
                log.info("token cache %s unreadable: %s", self._path, e)
        self._memory.update(found)
        return found

    def put(self, entries: dict[str, tuple[int, ...]]) -> None:
        self._memory.update(entries)
        if self._path is None:
            return
        rows = [(w, array("i", ids).tobytes()) for w, ids in entries.items()]
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            with closing(sqlite3.connect(self._path)) as db, db:
                db.execute("CREATE TABLE IF NOT EXISTS tokens (word TEXT PRIMARY KEY, ids BLOB)")
                db.executemany("INSERT OR REPLACE INTO tokens VALUES (?, ?)", rows)
        except (OSError, sqlite3.Error) as e:
            log.info("cannot write token cache %s: %s", self._path, e)


def wordllama_folder() -> Path | None:
    """Where the ``wordllama`` wheel put its files, found without importing it."""
    spec = importlib.util.find_spec("wordllama")
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else None


def load_embedder(cache_dir: Path | None = None) -> Embedder:
    """The packaged wordllama embedder (its token cache under ``cache_dir``), or
    ImportError naming what to install."""
    root = wordllama_folder()
    if root is None or not (root / WEIGHTS).is_file() or not (root / TOKENIZER).is_file():
        raise ImportError(INSTALL_HINT)
    try:
        table = mapped_tensor(root / WEIGHTS, "embedding.weight")
    except (OSError, ValueError, KeyError) as e:
        raise ImportError(f"{INSTALL_HINT} ({root / WEIGHTS}: {e})") from e
    tokenizer_file = root / TOKENIZER

    def tokenizer() -> Any:
        # lazy: the Rust tokenizer, loaded only for words not in the token cache
        from tokenizers import Tokenizer  # type: ignore[import-not-found, import-untyped, unused-ignore]

        loaded = Tokenizer.from_file(str(tokenizer_file))
        loaded.no_truncation()
        loaded.no_padding()
        return loaded

    stamp = f"{tokenizer_file.stat().st_size}-{tokenizer_file.stat().st_mtime_ns}"
    cache = TokenCache(cache_dir / f"tokens-wordllama-{stamp}.sqlite" if cache_dir else None)
    return StaticEmbedder(table, tokenizer, cache)


def mapped_tensor(path: Path, name: str) -> Any:
    """One tensor of a ``.safetensors`` file, memory-mapped rather than read: a query
    touches a dozen of the table's 32,000 rows, and reading all 16 MB costs more than
    the rest of a warm ``skills match`` ranking (``python -m bench startup``). The
    format: an 8-byte little-endian header size, a JSON header giving each tensor's
    dtype, shape and byte range, then the data."""
    with path.open("rb") as file:
        size = int.from_bytes(file.read(8), "little")
        header = json.loads(file.read(size))
    info = header[name]
    dtype = {"F16": np.float16, "F32": np.float32}[info["dtype"]]
    start, _end = info["data_offsets"]
    shape = tuple(int(n) for n in info["shape"])
    return np.memmap(path, dtype=dtype, mode="r", offset=8 + size + start, shape=shape)


def top_indices(scores: F32, k: int) -> list[int]:
    """Indices of the ``k`` highest positive scores, best first (ties: lower index,
    also at the k-th place: :mod:`._warm` ranks the same way without numpy)."""
    positive = np.flatnonzero(scores > 0)
    if len(positive) > k:  # keep the k best and every score equal to the k-th
        negated = -scores[positive]
        positive = positive[negated <= np.partition(negated, k - 1)[k - 1]]
    order = np.lexsort((positive, -scores[positive]))[:k]
    return [int(i) for i in positive[order]]


def fuse(lexical: F32, cosine: F32) -> tuple[F32, F32]:
    """(ranking key, reported score) of every skill from its normalised BM25F score
    and its clipped cosine: ranked by ``(1 - w) * lexical + w * cosine`` with
    :data:`FUSION_WEIGHT`, reported as their mean (what hints compare with
    ``skills.hints.threshold``). Shared by the matcher and the warm path so both rank
    alike."""
    mean = (lexical + cosine) / np.float32(2)
    weight = np.float32(FUSION_WEIGHT if FUSION_WEIGHT is not None else 0.5)
    mixed = (np.float32(1) - weight) * lexical + weight * cosine
    return mixed, mean


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], *, k: int = RRF_K) -> list[int]:
    """Fuse rankings (lists of ids, best first) by ``sum(1 / (k + rank))``, best first.

    Ties are broken by the order of first appearance, so the first ranking wins them.
    """
    score: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
    order: dict[int, int] = {}
    for i, item in enumerate(x for r in rankings for x in r):
        order.setdefault(item, i)
    return sorted(score, key=lambda item: (-score[item], order[item]))


_EMBEDDERS: dict[Path | None, Embedder | None] = {}


def default_embedder(routing_dir: Path | None) -> Embedder | None:
    """The packaged embedder with its token cache in ``routing_dir``, loaded once per
    process; None (with a warning) when wordllama is not installed."""
    if routing_dir not in _EMBEDDERS:
        try:
            _EMBEDDERS[routing_dir] = load_embedder(routing_dir)
        except ImportError as e:
            log.warning("%s Ranking without embeddings.", e)
            _EMBEDDERS[routing_dir] = None
    return _EMBEDDERS[routing_dir]


def warm_rank_embedded(registry: WarmRegistry, query: str, *, k: int) -> list[Match] | None:
    """:func:`._warm.warm_rank` with embeddings on: the lexical scores from the cached
    index without decoding it, the skills' vectors from their cache file, fused as
    :meth:`.match.SkillMatcher.rank` fuses them (tests compare the two); None when
    only the matcher can answer (no cache yet, a code skill, rank fusion)."""
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
    lexical = np.zeros(len(skills), dtype=np.float32)
    for row, score in index.positive_scores(
        tokenize_query(query, dictionary_for(path.parent))
    ).items():
        lexical[row] = score
    if looks_foreign(fold(query).lower()):
        return [
            Match(skills[i].name, float(lexical[i]), skills[i]) for i in top_indices(lexical, k)
        ]
    vectors = _cached_vectors(vector_path(path), len(skills))
    embedder = default_embedder(path.parent) if vectors is not None else None
    if vectors is None or embedder is None:
        return None
    cosine = np.clip(vectors @ embedder.embed([query])[0], 0.0, 1.0).astype(np.float32)
    mixed, mean = fuse(lexical, cosine)
    return [Match(skills[i].name, float(mean[i]), skills[i]) for i in top_indices(mixed, k)]


def _cached_vectors(path: Path, rows: int) -> F32 | None:
    try:
        vectors = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    ok = vectors.ndim == 2 and len(vectors) == rows and vectors.dtype == np.float32
    return vectors if ok else None
