"""A BM25F index in numpy: per-field length normalisation, one saturation, eager scores.

Why not plain BM25 over one concatenated text: a skill's body is 20–100× longer than
its description, so in one bag the description's words are drowned and every long
skill is penalised by length normalisation. BM25F (Robertson et al., 2004) normalises
each field by its own average length, weights it, sums the pseudo-frequencies and
only then saturates, so "pdf" in a name counts more than "pdf" in a code sample yet
a body full of relevant words still lifts a skill. (bm25s, which skilldeck also
ships, indexes one bag per document, hence this small module.)

Scores are computed eagerly at build time — one float per (term, document) stored in a
CSC layout — so a query is a handful of vector additions: well under a millisecond
per query word on thousands of skills. The arrays round-trip through one ``.npz`` file.
"""

from __future__ import annotations

import io
import json
import math
from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from skilldeck._atomic import atomic_write_bytes
from skilldeck.skills.routing._basics import FORMAT_VERSION, BM25FParams

__all__ = ["F32", "FIELDS", "FORMAT_VERSION", "BM25FIndex", "BM25FParams"]

FIELDS: tuple[str, ...] = ("name", "description", "when_to_use", "tags", "body")
_MAX_TOKEN_LEN = 48

F32 = npt.NDArray[np.float32]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]


@dataclass
class BM25FIndex:
    """Eager BM25F scores: for term ``t``, ``docs[indptr[t]:indptr[t+1]]`` hold the
    documents containing it and ``weights[...]`` their score contributions."""

    vocab: dict[str, int]
    idf: F32
    indptr: I64
    docs: I32
    weights: F32
    n_docs: int

    # ---- build -------------------------------------------------------------------

    @classmethod
    def build(
        cls, documents: Sequence[Mapping[str, Sequence[str]]], params: BM25FParams
    ) -> BM25FIndex:
        """``documents[i][field]`` = tokens of that field of document ``i``."""
        n_docs = len(documents)
        vocab: dict[str, int] = {}
        terms: list[I32] = []
        doc_ids: list[I32] = []
        contrib: list[F32] = []
        for name in FIELDS:
            weight = float(params.weights.get(name, 0.0))
            if weight <= 0:
                continue
            t, d, c, lengths = _field_postings([doc.get(name, ()) for doc in documents], vocab)
            if not len(t):
                continue
            avg = float(lengths.mean()) or 1.0
            b = float(params.b.get(name, 0.75))
            norm = (weight / (1.0 - b + b * lengths / avg)).astype(np.float32)
            terms.append(t)
            doc_ids.append(d)
            contrib.append(c * norm[d])
        return cls._assemble(vocab, terms, doc_ids, contrib, n_docs, params.k1)

    @classmethod
    def _assemble(
        cls,
        vocab: dict[str, int],
        terms: list[I32],
        doc_ids: list[I32],
        contrib: list[F32],
        n_docs: int,
        k1: float,
    ) -> BM25FIndex:
        n_terms = len(vocab)
        if not terms or n_docs == 0:
            empty_f = np.zeros(0, dtype=np.float32)
            return cls(
                vocab,
                np.zeros(n_terms, np.float32),
                np.zeros(n_terms + 1, np.int64),
                np.zeros(0, np.int32),
                empty_f,
                n_docs,
            )
        keys = np.concatenate(terms).astype(np.int64) * n_docs + np.concatenate(doc_ids)
        uniq, inverse = np.unique(keys, return_inverse=True)
        tf = np.bincount(inverse, weights=np.concatenate(contrib)).astype(np.float32)
        term_of = (uniq // n_docs).astype(np.int64)
        docs = (uniq % n_docs).astype(np.int32)
        df = np.bincount(term_of, minlength=n_terms)
        idf = np.log1p((n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
        weights = (idf[term_of] * tf / (k1 + tf)).astype(np.float32)
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        return cls(vocab, idf, indptr, docs, weights, n_docs)

    # ---- query -------------------------------------------------------------------

    def scores(self, tokens: Sequence[str], *, min_ceiling: float = 0.0) -> tuple[F32, float]:
        """(score of every document, the best score any document could reach).

        The ceiling is the sum of the query words' idf (saturation keeps each word's
        contribution below it), counting a word the index has never seen at the idf of
        a word seen once — a query made of words no skill uses cannot look like a good
        match after normalisation — and never below ``min_ceiling``, so one or two
        common words cannot make a confident match.
        """
        scores = np.zeros(self.n_docs, dtype=np.float32)
        ceiling = 0.0
        unseen_idf = math.log1p((self.n_docs - 0.5) / 1.5) if self.n_docs else 1.0
        for token in dict.fromkeys(tokens):
            tid = self.vocab.get(token)
            if tid is None:
                ceiling += unseen_idf
                continue
            ceiling += float(self.idf[tid])
            start, end = int(self.indptr[tid]), int(self.indptr[tid + 1])
            scores[self.docs[start:end]] += self.weights[start:end]
        return scores, max(ceiling, min_ceiling)

    # ---- persistence -------------------------------------------------------------

    def save(self, path: Path, *, meta: Mapping[str, Any]) -> None:
        """Write the index and ``meta`` (JSON-able) atomically to ``path`` (.npz)."""
        buf = io.BytesIO()
        terms = sorted(self.vocab, key=self.vocab.__getitem__)
        np.savez(
            buf,
            idf=self.idf,
            indptr=self.indptr,
            docs=self.docs,
            weights=self.weights,
            vocab=np.frombuffer("\n".join(terms).encode("utf-8"), dtype=np.uint8),
            meta=np.frombuffer(json.dumps(dict(meta)).encode("utf-8"), dtype=np.uint8),
            n_docs=np.array([self.n_docs], dtype=np.int64),
        )
        atomic_write_bytes(path, buf.getvalue())

    @classmethod
    def load(cls, path: Path) -> tuple[BM25FIndex, dict[str, Any]]:
        """Read an index written by :meth:`save`; raises OSError/ValueError/KeyError
        (or zipfile.BadZipFile, EOFError for a damaged file). The file is opened here,
        not by numpy, so a damaged one is closed whatever numpy raises."""
        with path.open("rb") as file, np.load(file, allow_pickle=False) as data:
            raw_vocab = data["vocab"].tobytes().decode("utf-8")
            terms = raw_vocab.split("\n") if raw_vocab else []
            index = cls(
                vocab={t: i for i, t in enumerate(terms)},
                idf=data["idf"],
                indptr=data["indptr"],
                docs=data["docs"],
                weights=data["weights"],
                n_docs=int(data["n_docs"][0]),
            )
            meta = json.loads(data["meta"].tobytes().decode("utf-8"))
        if len(index.idf) != len(terms) or len(index.indptr) != len(terms) + 1:
            raise ValueError(f"{path}: inconsistent routing index")
        return index, meta


def _field_postings(
    field_tokens: Sequence[Sequence[str]], vocab: dict[str, int]
) -> tuple[I32, I32, F32, F32]:
    """(term ids, doc ids, counts, per-doc lengths) of one field across documents."""
    terms = array("i")
    docs = array("i")
    counts = array("f")
    lengths = np.zeros(len(field_tokens), dtype=np.float32)
    setdefault = vocab.setdefault
    for doc, tokens in enumerate(field_tokens):
        if not tokens:
            continue
        lengths[doc] = len(tokens)
        for token, count in Counter(tokens).items():
            if len(token) > _MAX_TOKEN_LEN:
                continue
            terms.append(setdefault(token, len(vocab)))
            docs.append(doc)
            counts.append(count)
    present = lengths[lengths > 0]
    if len(present):
        lengths[lengths == 0] = float(present.mean())  # absent field: neutral length
    return (
        np.frombuffer(terms, dtype=np.int32).copy(),
        np.frombuffer(docs, dtype=np.int32).copy(),
        np.frombuffer(counts, dtype=np.float32).copy(),
        lengths,
    )
