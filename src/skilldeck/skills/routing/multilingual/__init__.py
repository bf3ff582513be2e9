"""Routing for requests not written in English: a small hand-written lexicon (always
there) and the packaged bilingual dictionaries (FreeDict, CC-CEDICT, simplemma
lemmas) that replace it when installed, so that ``Rechnungen zusammenfassen`` reaches
the skill whose description says "summarize invoices".

Other modules import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing;
the dictionaries themselves are opened only by a non-English request).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.skills.routing.multilingual._lexicon import (
        Translator,
        looks_foreign,
        tokenize_query,
        translate,
    )
    from skilldeck.skills.routing.multilingual.dictionary import (
        BilingualDictionary,
        dictionary_for,
    )
    from skilldeck.skills.routing.multilingual.entries import english_tokens
    from skilldeck.skills.routing.multilingual.sources import DICTD_DIRS, Sources, find_sources

_HOME: dict[str, str] = {
    "BilingualDictionary": "dictionary",
    "dictionary_for": "dictionary",
    "english_tokens": "entries",
    "Translator": "_lexicon",
    "looks_foreign": "_lexicon",
    "tokenize_query": "_lexicon",
    "translate": "_lexicon",
    "DICTD_DIRS": "sources",
    "Sources": "sources",
    "find_sources": "sources",
}

__all__ = [
    "DICTD_DIRS",
    "BilingualDictionary",
    "Sources",
    "Translator",
    "dictionary_for",
    "english_tokens",
    "find_sources",
    "looks_foreign",
    "tokenize_query",
    "translate",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
