"""The CJK ranges: one definition in :mod:`skilldeck.skills.routing.tokenize`, derived
by the multilingual checks — and the one deliberate difference between them, the
CJK Compatibility Ideographs that accent folding (NFKD) leaves as they are."""

from __future__ import annotations

import re
import unicodedata

from skilldeck.skills.routing.multilingual import BilingualDictionary, looks_foreign
from skilldeck.skills.routing.multilingual import _lexicon as lexicon_module
from skilldeck.skills.routing.multilingual import dictionary as dictionary_module
from skilldeck.skills.routing.tokenize import (
    CJK_COMPATIBILITY_RANGE,
    CJK_RANGES,
    HIRAGANA_RANGES,
    fold,
    tokenize,
)

#: the compatibility ideographs that :func:`fold` keeps (unified ideographs themselves)
SURVIVORS = "".join(
    chr(c)
    for c in range(0xF900, 0xFB00)
    if unicodedata.normalize("NFKD", chr(c)) == chr(c) and unicodedata.category(chr(c)) == "Lo"
)
#: the literal classes each module wrote before the ranges had one home
OLD_TOKENIZER = "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
OLD_MULTILINGUAL = "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]"
OLD_KANA = "[\u3040-\u309f\u30fc]"


def members(pattern: str) -> set[int]:
    compiled = re.compile(pattern)
    return {c for c in range(0x3000, 0x10000) if compiled.fullmatch(chr(c))}


def test_each_module_derives_the_ranges_it_wrote_before() -> None:
    assert members(f"[{CJK_RANGES}{CJK_COMPATIBILITY_RANGE}]") == members(OLD_TOKENIZER)
    assert members(lexicon_module._CJK_PATTERN) == members(OLD_MULTILINGUAL)
    assert members(dictionary_module._PATTERNS["cjk"][:-1]) == members(OLD_MULTILINGUAL)
    assert members(dictionary_module._PATTERNS["kana"][:-1]) == members(OLD_KANA)
    assert members(f"[{HIRAGANA_RANGES}]") == members(OLD_KANA)


def test_folding_leaves_twelve_compatibility_ideographs() -> None:
    assert [f"{ord(c):X}" for c in SURVIVORS] == [
        "FA0E", "FA0F", "FA11", "FA13", "FA14", "FA1F",
        "FA21", "FA23", "FA24", "FA27", "FA28", "FA29",
    ]  # fmt: skip
    assert fold("\uf900\uf901") == "\u8c48\u66f4"  # the others become unified ideographs


class Recording(BilingualDictionary):
    """A dictionary with data that knows no word, recording what it was asked."""

    def __init__(self) -> None:
        super().__init__(None)
        self.asked: list[str] = []

    def _open(self) -> bool:
        return True

    def get(self, term: str) -> tuple[str, ...]:
        self.asked.append(term)
        return ()


def test_tokeniser_bigrams_surviving_compatibility_ideographs_as_cjk() -> None:
    text = "\ufa0e\ufa0f\ufa11"
    assert tokenize(text) == ["\ufa0e\ufa0f", "\ufa0f\ufa11"]
    assert tokenize(text + "pdf") == ["\ufa0e\ufa0f", "\ufa0f\ufa11", "pdf"]


def test_multilingual_checks_read_them_as_a_word_not_as_cjk() -> None:
    text = "\ufa0e\ufa0f\ufa11"
    assert looks_foreign(text)  # not as CJK: as letters of a script other than Latin
    assert looks_foreign("\u8c48\u66f4")  # what folding makes of U+F900 U+F901
    words = Recording()
    assert words.translate(text) == []
    assert words.asked == [text]  # one word lookup; a CJK run would try its pieces
    cjk = Recording()
    cjk.translate("\u5929\u6c14\u4e0d")
    assert cjk.asked == ["\u5929\u6c14\u4e0d", "\u5929\u6c14", "\u6c14\u4e0d"]


def test_hiragana_only_pieces_are_not_looked_up() -> None:
    words = Recording()
    words.translate("\u3053\u308c\u306f")  # これは: particles only
    assert words.asked == []
