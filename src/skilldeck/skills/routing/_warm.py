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
import importlib.util
import json
import logging
import math
import mmap
import operator
import os
import re
import sqlite3
import struct
import sys
import zipfile
from array import array
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from functools import partial
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
from skilldeck.skills.routing.multilingual import dictionary_for, looks_foreign, tokenize_query
from skilldeck.skills.routing.tokenize import fold

if TYPE_CHECKING:
    from skilldeck.config import Settings

__all__ = [
    "FUSION_WEIGHT",
    "TokenCache",
    "WarmIndex",
    "WarmRegistry",
    "embeddings_on",
    "load_tokenizer",
    "tensor_layout",
    "token_cache_path",
    "warm_rank",
    "warm_rank_embedded",
    "wordllama_folder",
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
#: the wordllama wheel's files (the 256-dimension model of ``l2_supercat``)
WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_VECTORS_HEADER = re.compile(rb"'descr': '<f4', 'fortran_order': False, 'shape': \((\d+), (\d+)\)")


def warm_rank_embedded(registry: WarmRegistry, query: str, *, k: int) -> list[Match] | None:
    """:func:`warm_rank` with embeddings on, still without numpy (importing it costs
    more than the rest of a warm ``skills match``: ``python -m bench startup``): the
    lexical scores from the cached index, the skills' vectors from their cache file,
    the request's vector from the memory-mapped table, fused as
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
    lexical = index.positive_scores(tokenize_query(query, dictionary_for(path.parent)))
    if looks_foreign(fold(query).lower()):
        return [Match(skills[i].name, lexical[i], skills[i]) for i in _top(lexical, k)]
    vectors = _read_vectors(path.with_name(path.stem + ".vectors.npy"), len(skills))
    wanted = _query_vector(query, path.parent) if vectors is not None else None
    if vectors is None or wanted is None:
        return None
    width = len(wanted)
    mixed: dict[int, float] = {}
    for row in range(len(skills)):
        cosine = sum(map(operator.mul, vectors[row * width : (row + 1) * width], wanted))
        if not -1.001 <= cosine <= 1.001:  # NaN or not unit rows: a damaged cache file
            return None  # the matcher checks the file and recomputes it
        cosine = min(max(cosine, 0.0), 1.0)
        score = (1 - FUSION_WEIGHT) * lexical.get(row, 0.0) + FUSION_WEIGHT * cosine
        if score > 0:
            mixed[row] = score
    return [Match(skills[i].name, mixed[i], skills[i]) for i in _top(mixed, k)]


def _read_vectors(path: Path, rows: int) -> memoryview[Any] | None:
    """The skills' vectors (an ``.npy`` of float32 rows, as the matcher saves them)."""
    try:
        blob = path.read_bytes()
        header_end = 10 + int.from_bytes(blob[8:10], "little")
        found = _VECTORS_HEADER.search(blob[:header_end])
    except (OSError, ValueError):
        return None
    if found is None or int(found.group(1)) != rows or sys.byteorder != "little":
        return None
    data = memoryview(blob)[header_end:].cast("f")
    return data if len(data) == rows * int(found.group(2)) else None


def _query_vector(query: str, routing_dir: Path) -> list[float] | None:
    """The request's normalised vector: the mean of its tokens' rows of the table."""
    root = wordllama_folder()
    if root is None:
        return None
    try:
        dtype, (count, width), offset = tensor_layout(root / WEIGHTS, "embedding.weight")
        words = query.split()
        cache = TokenCache(token_cache_path(routing_dir, root))
        ids = cache.ids(set(words), partial(load_tokenizer, root))
        with (
            (root / WEIGHTS).open("rb") as file,
            mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as table,
        ):
            code = {"F16": "e", "F32": "f"}[dtype]
            row_bytes = width * struct.calcsize(code)
            tokens = [min(max(t, 0), count - 1) for w in words for t in ids[w]]
            sums = [0.0] * width
            for token in tokens:
                row = struct.unpack_from(f"<{width}{code}", table, offset + token * row_bytes)
                sums = list(map(operator.add, sums, row))
    except (OSError, ValueError, KeyError, ImportError) as e:
        log.info("embeddings unavailable for a warm match: %s", e)
        return None
    norm = math.sqrt(sum(x * x for x in sums))
    return [x / norm for x in sums] if norm > 0 else sums


def wordllama_folder() -> Path | None:
    """Where the ``wordllama`` wheel put its files, found without importing it."""
    spec = importlib.util.find_spec("wordllama")
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else None


def tensor_layout(path: Path, name: str) -> tuple[str, tuple[int, ...], int]:
    """(dtype, shape, byte offset) of one tensor of a ``.safetensors`` file: an 8-byte
    little-endian header size, a JSON header giving each tensor's dtype, shape and
    byte range, then the data."""
    with path.open("rb") as file:
        size = int.from_bytes(file.read(8), "little")
        info = json.loads(file.read(size))[name]
    start, _end = info["data_offsets"]
    return str(info["dtype"]), tuple(int(n) for n in info["shape"]), 8 + size + int(start)


def token_cache_path(routing_dir: Path, root: Path) -> Path:
    """The token cache of this tokenizer file (a new wordllama release starts a new one)."""
    stat = (root / TOKENIZER).stat()
    return routing_dir / f"tokens-wordllama-{stat.st_size}-{stat.st_mtime_ns}.sqlite"


def load_tokenizer(root: Path) -> Any:
    """wordllama's tokenizer (LLaMA-2's), ~110 ms to load: only for unseen words."""
    # lazy: the Rust tokenizer library, needed only for words not in the token cache
    from tokenizers import Tokenizer  # type: ignore[import-not-found, import-untyped, unused-ignore]

    loaded = Tokenizer.from_file(str(root / TOKENIZER))
    loaded.no_truncation()
    loaded.no_padding()
    return loaded


class TokenCache:
    """Word → token ids, in SQLite under the routing cache (or in memory only).

    The words seen are also kept in memory, but the embedder holding the cache lives as
    long as the process (``skilldeck web``): past :attr:`MEMORY_WORDS` words, the
    memory starts again from empty (SQLite still has them)."""

    MEMORY_WORDS = 50_000

    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._memory: dict[str, tuple[int, ...]] = {}

    def _remember(self, entries: dict[str, tuple[int, ...]]) -> None:
        if len(self._memory) + len(entries) > self.MEMORY_WORDS:
            self._memory.clear()
        self._memory.update(entries)

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
        self._remember(found)
        return found

    def ids(self, words: set[str], tokenizer: Callable[[], Any]) -> dict[str, tuple[int, ...]]:
        """The token ids of every word: cached ones from here, the rest from the
        tokenizer (loaded only then), remembered for next time."""
        found = self.get(words)
        missing = sorted(words - found.keys())
        if missing:
            encoded = tokenizer().encode_batch(missing, add_special_tokens=False)
            new = {w: tuple(e.ids) for w, e in zip(missing, encoded, strict=True)}
            self.put(new)
            found.update(new)
        return found

    def put(self, entries: dict[str, tuple[int, ...]]) -> None:
        self._remember(entries)
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
