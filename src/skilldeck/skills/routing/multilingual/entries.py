"""Reading one dictionary entry into routing tokens: a FreeDict ``.dict.dz`` text read
by dictzip chunk (only the pages of the entries looked up), its senses cleaned of
pronunciation, grammar notes and examples, and a CC-CEDICT line's senses; each
reduced to at most :data:`.sources.MAX_TOKENS` English tokens, first sense first."""

from __future__ import annotations

import re
from functools import cache, lru_cache
from pathlib import Path

from skilldeck.skills.routing.multilingual.sources import MAX_MERGED, MAX_SENSES, MAX_TOKENS
from skilldeck.skills.routing.tokenize import tokenize

__all__ = ["DictText", "cedict_tokens", "english_tokens", "freedict_tokens", "interleave"]

_B64 = {char: i for i, char in enumerate(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}  # fmt: skip
#: compiled on first use (English requests on the one-shot path never need them)
PATTERNS = {
    "noise": r"/[^/\n]*/|<[^>\n]*>|\[[^\]\n]*\]|\{[^}\n]*\}|\([^)\n]*\)",
    "sense_number": r"^\s*\d+\.\s*",
}
SKIP_LINE = ("Note:", "Synonym", "see:", "Syn:", "Ant:")
_SKIP_SENSE = ("CL:", "see ", "variant of", "surname")


@cache
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(PATTERNS[name])


class DictText:
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


def freedict_tokens(text: DictText, row: str) -> tuple[str, ...]:
    """English tokens of one entry, first sense first (headword line dropped)."""
    start, length = (sum(_B64[c] << 6 * i for i, c in enumerate(n[::-1])) for n in row.split())
    senses: list[str] = []
    for line in text.entry(start, length).split("\n")[1:]:
        stripped = line.strip()
        if not stripped or stripped.startswith(SKIP_LINE) or stripped[0] in '("':
            continue  # empty, cross-references, grammar notes, "usage examples"
        stripped = _pattern("noise").sub(" ", _pattern("sense_number").sub("", stripped))
        senses.extend(s.strip() for s in re.split(r"[;,]", stripped) if s.strip())
    return english_tokens(senses)


def cedict_tokens(rest: str) -> tuple[str, ...]:
    """English tokens of a CC-CEDICT line after its headwords (``[pinyin] /a/b/``)."""
    senses = [s for s in rest.partition("] /")[2].split("/") if s.strip()]
    noise = _pattern("noise")
    return english_tokens([noise.sub(" ", s) for s in senses if not s.startswith(_SKIP_SENSE)])


def english_tokens(senses: list[str]) -> tuple[str, ...]:
    """Routing tokens of the first :data:`MAX_SENSES` senses, at most :data:`MAX_TOKENS`."""
    tokens = (t for sense in senses[:MAX_SENSES] for t in _sense_tokens(sense))
    return tuple(dict.fromkeys(tokens))[:MAX_TOKENS]


@lru_cache(maxsize=1 << 17)  # the same few thousand translations recur everywhere
def _sense_tokens(sense: str) -> tuple[str, ...]:
    return tuple(t for t in tokenize(sense) if len(t) > 1)


def interleave(entries: list[tuple[str, ...]]) -> tuple[str, ...]:
    """A headword's entries (``Wetter``: mine air; weather) merged first sense first."""
    if len(entries) < 2:
        return entries[0] if entries else ()
    out: dict[str, None] = {}
    for rank in range(MAX_TOKENS):
        out.update((tokens[rank], None) for tokens in entries if rank < len(tokens))
    return tuple(out)[:MAX_MERGED]
