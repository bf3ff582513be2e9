"""Bilingual dictionaries from installed packages, for non-English requests: a foreign
word or CJK run → English routing tokens. **FreeDict**, **CC-CEDICT** and **simplemma**'s
lemmas (``Rechnungen`` → ``Rechnung`` → bill, invoice), found by :mod:`.sources`. Each is
optional (with none, :mod:`._lexicon`'s table stands in). At the first non-English
request each source is indexed once (:mod:`.tables`: keys only, one SQLite file each
under the routing cache, on every core); an entry is parsed (:mod:`.entries`) when its
word is looked up."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from contextlib import suppress
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from skilldeck.skills.routing.multilingual.entries import (
    DictText,
    cedict_tokens,
    freedict_tokens,
    interleave,
)
from skilldeck.skills.routing.multilingual.sources import Sources, find_sources
from skilldeck.skills.routing.multilingual.tables import SEPARATOR, compile_source, store_source
from skilldeck.skills.routing.tokenize import CJK_RANGES, HIRAGANA_RANGES, STOPWORDS

if TYPE_CHECKING:
    import sqlite3

__all__ = ["MIN_PART", "BilingualDictionary", "dictionary_for"]

log = logging.getLogger(__name__)

MIN_PART = 4  # compounds: shortest part tried
#: compiled on first use (English requests on the one-shot path never need them)
_PATTERNS = {
    "word": r"[^\W\d_]+",
    "cjk": f"[{CJK_RANGES}]+",  # not CJK_COMPATIBILITY_RANGE: see there
    "kana": f"[{HIRAGANA_RANGES}]+",
}


@cache
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(_PATTERNS[name])


class BilingualDictionary:
    """Looks up foreign words and CJK runs; compiles the sources on first need."""

    def __init__(self, folder: Path | None, sources: Sources | None = None) -> None:
        self._folder, self._sources, self._prefix = folder, sources, ""
        self._dbs: dict[str, sqlite3.Connection] = {}
        self._texts: dict[str, DictText] = {}
        self._memo: dict[str, tuple[str, ...]] = {}

    def _open(self) -> bool:
        if self._sources is None:  # found once (nothing read yet)
            self._sources = find_sources()
        if self._sources and self._folder is not None and not self._prefix:
            self._prefix = f"dictionary-{self._sources.fingerprint()}-"
        return bool(self._sources)

    def _source(self, name: str) -> sqlite3.Connection:
        """A source's tables (t0 headwords, t1 forms), all compiled at the first need."""
        import sqlite3  # stdlib, lazy: ~5 ms, only for non-English requests

        sources = self._sources or Sources({}, None, None)
        if name not in self._dbs:
            path = self._folder / f"{self._prefix}{name}.sqlite" if self._folder else None
            try:
                if path is None:
                    raise OSError("no cache folder")
                if not path.is_file():
                    self._compile_missing(sources, path.parent)
                db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            except (OSError, sqlite3.Error) as e:  # read-only cache: keep it in memory
                if path is not None:
                    log.warning("cannot write dictionary cache %s: %s", path, e)
                self._folder = None  # (the other sources too)
                db = sqlite3.connect(":memory:", check_same_thread=False)
                store_source(sources, name, db)
            self._dbs[name] = db
        return self._dbs[name]

    def _compile_missing(self, sources: Sources, folder: Path) -> None:
        """Every source not compiled yet, largest first, on every core when they are big."""
        size = {name: path.stat().st_size for name, path in sources.files().items()}
        paths = {name: folder / f"{self._prefix}{name}.sqlite" for name in size}
        todo = sorted((n for n in size if not paths[n].is_file()), key=lambda n: -size[n])
        log.warning("indexing the bilingual dictionaries into %s (once, seconds)", folder)
        folder.mkdir(parents=True, exist_ok=True)
        if sum(size.values()) > 1 << 23 and (cores := min(os.cpu_count() or 1, len(todo))) > 1:
            from concurrent.futures import ProcessPoolExecutor

            with suppress(Exception), ProcessPoolExecutor(cores) as pool:  # else: just below
                list(pool.map(compile_source, [sources] * len(todo), todo, map(paths.get, todo)))
        for name in todo:
            if not paths[name].is_file():
                compile_source(sources, name, paths[name])
        for stale in folder.glob("dictionary-*.sqlite"):
            if not stale.name.startswith(self._prefix):
                stale.unlink(missing_ok=True)

    def _rows(self, name: str, table: int, term: str) -> list[str]:
        rows = self._source(name).execute(f"SELECT v FROM t{table} WHERE term = ?", (term,))
        return [value for (found,) in rows for value in found.split(SEPARATOR)]

    def get(self, term: str) -> tuple[str, ...]:
        """The English tokens of one accent-folded, lower-case term (``()`` if unknown): a
        language's headword, else its forms' lemmas (languages in code order); CC-CEDICT last."""
        if term in self._memo or not self._open() or self._sources is None:
            return self._memo.get(term, ())
        self._memo = {} if len(self._memo) > 1 << 16 else self._memo  # a long-lived process
        found = self._memo[term] = next(filter(None, self._answers(term)), ())
        return found

    def _answers(self, term: str) -> Iterator[tuple[str, ...]]:
        sources = self._sources or Sources({}, None, None)
        for lang in sorted(sources.freedict):
            for key in [term, *self._rows(lang, 1, term)]:
                if (text := self._texts.get(lang)) is None:
                    text = self._texts[lang] = DictText(sources.freedict[lang][1])
                found = (freedict_tokens(text, row) for row in self._rows(lang, 0, key))
                yield interleave(list(filter(None, found)))
        for rest in self._rows("cedict", 0, term) if sources.cedict else []:  # [pinyin] /a/b/
            yield cedict_tokens(rest)

    def translate(self, folded_lower: str) -> list[str] | None:
        """English tokens of the words and CJK runs of a folded, lower-case non-English
        request; None when no dictionary is installed (the caller falls back)."""
        if not self._open():
            return None
        out: list[str] = []
        for word in _pattern("word").findall(folded_lower):
            if word not in STOPWORDS and not _pattern("cjk").match(word):
                out.extend(self._word(word))
        for run in _pattern("cjk").findall(folded_lower):
            out.extend(self._cjk(run))
        return list(dict.fromkeys(out))

    def _word(self, word: str) -> tuple[str, ...]:
        """The word; else, for a long compound, its longest known head and tail."""
        found = self.get(word)
        if found or len(word) < 2 * MIN_PART:
            return found
        heads = (self.get(word[:end]) for end in range(len(word) - MIN_PART, MIN_PART - 1, -1))
        tails = (self.get(word[start:]) for start in range(1, len(word) - MIN_PART + 1))
        head, tail = next(filter(None, heads), ()), next(filter(None, tails), ())
        return tuple(dict.fromkeys(head + tail))

    def _cjk(self, run: str) -> list[str]:
        """Greedy longest match (2–6 characters); hiragana-only pieces are grammar."""
        out: list[str] = []
        at = 0
        while at < len(run) - 1:
            pieces = (run[at : at + n] for n in range(min(6, len(run) - at), 1, -1))
            known = (
                (p, f) for p in pieces if not _pattern("kana").fullmatch(p) and (f := self.get(p))
            )
            piece, found = next(known, ("-", ()))
            out.extend(found)
            at += len(piece)
        return out


@lru_cache(maxsize=8)
def dictionary_for(folder: Path | None) -> BilingualDictionary:
    """One dictionary per cache folder and process (it holds no request state)."""
    return BilingualDictionary(folder)
