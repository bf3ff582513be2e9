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

import logging
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from skilldeck.skills.routing._bm25f import F32
from skilldeck.skills.routing._warm import FUSION_WEIGHT as FUSION_WEIGHT
from skilldeck.skills.routing._wordllama import (
    TOKENIZER,
    WEIGHTS,
    TokenCache,
    load_tokenizer,
    tensor_layout,
    token_cache_path,
    wordllama_folder,
)

log = logging.getLogger(__name__)

INSTALL_HINT = (
    "Semantic skill routing needs wordllama, a skilldeck dependency that is missing "
    "here: pip install 'wordllama>=0.4,<0.5' (or set skills.match_embeddings = false)."
)
RRF_K = 60


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
        return self._cache.ids(words, self._tokenizer_once)

    def _tokenizer_once(self) -> Any:
        if self._tokenizer is None:
            self._tokenizer = self._load_tokenizer()
        return self._tokenizer


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
    cache = TokenCache(token_cache_path(cache_dir, root) if cache_dir else None)
    return StaticEmbedder(table, partial(load_tokenizer, root), cache)


def mapped_tensor(path: Path, name: str) -> Any:
    """One tensor of a ``.safetensors`` file, memory-mapped rather than read: a query
    touches a dozen of the table's 32,000 rows, and reading all 16 MB costs more than
    the rest of a warm ``skills match`` ranking (``python -m bench startup``)."""
    dtype, shape, offset = tensor_layout(path, name)
    kind = {"F16": np.float16, "F32": np.float32}[dtype]
    return np.memmap(path, dtype=kind, mode="r", offset=offset, shape=shape)


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
    """(score, mean) of every skill from its normalised BM25F score and its clipped
    cosine: the score ``(1 - w) * lexical + w * cosine`` with :data:`FUSION_WEIGHT`
    both ranks and is reported (what hints compare with ``skills.hints.threshold``),
    so a listing's scores always go down; the mean is what reciprocal rank fusion
    reports. :func:`._warm.warm_rank_embedded` computes the same score without
    numpy."""
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
