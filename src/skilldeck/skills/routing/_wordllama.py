"""The wordllama model read straight from its wheel, without numpy or the library.

A warm ``skilldeck skills match`` with embeddings on must not import numpy or
``wordllama`` (each costs more than the rest of the command: ``python -m bench
startup``, row ``match (warm)``), so this module memory-maps the wheel's table of
token vectors, keeps the tokenizer's answers for words it has seen in a SQLite cache
(the tokenizer loads only for unseen words), and reads the skills' cached vectors as
a ``memoryview``. :class:`._embeddings.StaticEmbedder` (the numpy side) uses the same
table, tokenizer and cache, so both sides embed a request alike.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import mmap
import operator
import re
import sqlite3
import struct
import sys
from array import array
from collections.abc import Callable
from contextlib import closing
from functools import partial
from pathlib import Path
from typing import Any

__all__ = [
    "TOKENIZER",
    "WEIGHTS",
    "TokenCache",
    "load_tokenizer",
    "query_vector",
    "read_vectors",
    "tensor_layout",
    "token_cache_path",
    "wordllama_folder",
]

log = logging.getLogger(__name__)

#: the wordllama wheel's files (the 256-dimension model of ``l2_supercat``)
WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_VECTORS_HEADER = re.compile(rb"'descr': '<f4', 'fortran_order': False, 'shape': \((\d+), (\d+)\)")


def read_vectors(path: Path, rows: int) -> memoryview[Any] | None:
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


def query_vector(query: str, routing_dir: Path) -> list[float] | None:
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
        tokenizer (loaded only then), remembered for next time. A word that is not
        valid Unicode (a lone surrogate: undecodable bytes in a command-line argument)
        has no tokens; SQLite and the tokenizer refuse it."""
        broken = {w for w in words if not _encodable(w)}
        if broken:
            return {**self.ids(words - broken, tokenizer), **dict.fromkeys(broken, ())}
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


def _encodable(word: str) -> bool:
    try:
        word.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
