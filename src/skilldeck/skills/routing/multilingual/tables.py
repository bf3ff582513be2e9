"""Indexing each dictionary source into SQLite, once: a FreeDict language's headword
keys → their index rows and simplemma's forms → the headwords they reach, or
CC-CEDICT's headwords → the rest of their lines. Keys only; no entry is parsed here
(:mod:`.entries` parses one when its word is looked up). Compiled atomically (temp +
rename), in a worker process too."""

from __future__ import annotations

import gc
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.skills.routing.multilingual.sources import Sources
from skilldeck.skills.routing.tokenize import STOPWORDS, fold

if TYPE_CHECKING:
    import sqlite3

__all__ = ["SEPARATOR", "Tables", "compile_source", "key", "store_source"]

SEPARATOR = "\x1f"  # joins a term's rows in the compiled tables
Tables = list[dict[str, list[str]]]


def key(term: str | bytes) -> str:
    """A table key: accent-folded, lower case, stripped."""
    return fold(term.decode() if isinstance(term, bytes) else term).lower().strip()


def _build(sources: Sources, name: str) -> Tables:
    """A language's [headword key → index rows, form key → its lemmas among them], or for
    ``cedict`` [headword key → the rest of its lines]. No entry is parsed."""
    import gzip  # stdlib, lazy: compiling only

    heads: dict[str, list[str]] = {}
    if name == "cedict" and sources.cedict is not None:
        with gzip.open(sources.cedict, "rt", encoding="utf-8") as lines:
            for line in lines:
                head, _, rest = line.partition(" [")
                if len(words := head.split()) == 2 and not line.startswith("#"):
                    for word in dict.fromkeys(words):
                        heads.setdefault(key(word), []).append(rest)
        return [heads]
    for line in sources.freedict[name][0].read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")  # headword, offset, length (base 64, kept as written)
        head = key(parts[0]) if len(parts) > 2 and not parts[0].startswith("00database") else ""
        if head and head not in STOPWORDS:
            heads.setdefault(head, []).append(f"{parts[1]} {parts[2]}")
    table = sources.lemmas(name) if sources.lemmas else None
    raw = getattr(table, "_dict", None)  # simplemma's bytes dict: much faster to iterate
    pairs: Mapping[Any, Any] = raw if isinstance(raw, dict) else table or {}  # bytes or str
    known = {lemma: k for lemma in set(pairs.values()) if (k := key(lemma)) in heads}
    forms: dict[str, dict[str, None]] = {}
    for form, lemma in pairs.items():
        if (target := known.get(lemma)) is not None:
            forms.setdefault(key(form), {})[target] = None
    for target, lemmas in forms.items():
        lemmas.pop(target, None)  # the headword itself is looked up first anyway
    return [heads, {k: list(v) for k, v in forms.items() if v}]


def store_source(sources: Sources, name: str, db: sqlite3.Connection) -> sqlite3.Connection:
    """Index one source into ``db`` (tables t0, t1…), in one transaction."""
    tables = _build(sources, name)
    with db:  # one transaction
        for i, rows in enumerate(tables):
            db.execute(f"CREATE TABLE t{i} (term TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID")
            items = sorted((k, SEPARATOR.join(v)) for k, v in rows.items())
            db.executemany(f"INSERT INTO t{i} VALUES (?, ?)", items)
    return db


def compile_source(sources: Sources, name: str, path: Path) -> None:
    """Compile one source into ``path`` (atomically: temp + rename); in a worker too."""
    import sqlite3  # stdlib, lazy: ~5 ms, only for non-English requests
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    os.close(fd)
    gc.disable()  # acyclic data; a forked worker would walk the parent's whole heap
    try:
        db = sqlite3.connect(tmp)
        db.execute("PRAGMA journal_mode = OFF")
        store_source(sources, name, db).close()
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
        gc.enable()
