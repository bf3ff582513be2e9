"""Optional semantic ranking: static word embeddings fused with BM25F.

The core never imports the model. With the ``[embeddings]`` extra installed
(``wordllama``: a 16 MB table of static token embeddings distilled from LLaMA-2's,
inside a 19 MB wheel; numpy, ``tokenizers`` and ``safetensors``, no torch, CPU
only), :func:`load_embedder` returns a :class:`WordLlamaEmbedder`; without it, it
raises ImportError with the install hint. The weights and the tokenizer are read
from the installed package: the library's own ``WordLlama.load()`` looks for the
tokenizer under a folder name the wheel does not use and then downloads it from a
model hub, so it is never called (a test runs with the network closed).

A query embeds in well under a millisecond and the 3,200-skill corpus in seconds
(an average of token vectors), cached next to the index like the old model's.
Reciprocal rank fusion (Cormack et al., 2009) adds ``1 / (k + rank)`` over the
rankings: it needs no score calibration between BM25F and cosine similarity, which
live on unrelated scales.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from skilldeck.skills.routing._bm25f import F32

INSTALL_HINT = (
    "Semantic skill routing needs the embeddings extra: install skilldeck[embeddings] "
    "(pip install 'skilldeck[embeddings]')."
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


class WordLlamaEmbedder:
    """wordllama's static embeddings, loaded from the installed package, offline."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def embed(self, texts: Sequence[str]) -> F32:
        vectors = self._model.embed(list(texts), norm=True, batch_size=256)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)


def load_embedder() -> Embedder:
    """The packaged wordllama embedder, or ImportError naming the extra to install."""
    try:
        # lazy: optional SDK of the [embeddings] extra, imported only when asked for
        import wordllama  # type: ignore[import-not-found, import-untyped, unused-ignore]
        from safetensors import safe_open  # type: ignore[import-not-found, import-untyped, unused-ignore]
        from wordllama.inference import (  # type: ignore[import-not-found, import-untyped, unused-ignore]
            WordLlamaInference,
        )
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e
    root = Path(wordllama.__file__).resolve().parent
    tokenizer = wordllama.WordLlama.load_tokenizer(root / TOKENIZER, hf_model_id=None)
    with safe_open(str(root / WEIGHTS), framework="np", device="cpu") as weights:
        table = weights.get_tensor("embedding.weight")
    return WordLlamaEmbedder(WordLlamaInference(table, tokenizer, binary=False))


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
