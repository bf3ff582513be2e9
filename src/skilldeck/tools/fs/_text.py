"""Small text helpers shared by the built-in tools: caps, line numbering, decoding."""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

#: Default cap on what one tool returns (Claude Code's 30,000 characters).
OUTPUT_CAP = 30_000
#: Bytes sniffed to tell a binary file from text.
SNIFF_BYTES = 8192
#: Bytes read at a time by :func:`capped_lines`.
CHUNK_BYTES = 64 * 1024


def cap_text(text: str, limit: int = OUTPUT_CAP, *, what: str = "output") -> str:
    """``text`` cut to ``limit`` characters with a note giving the full length."""
    if len(text) <= limit:
        return text
    return (
        f"{text[:limit]}\n\n[{what} truncated: showing the first {limit:,} of "
        f"{len(text):,} characters]"
    )


def looks_binary(head: bytes) -> bool:
    """A NUL byte in the first block means binary, as git and ripgrep decide."""
    return b"\x00" in head[:SNIFF_BYTES]


def number_line(
    number: int, line: str, *, max_chars: int = 2000, full_bytes: int | None = None
) -> str:
    """One ``cat -n`` style line: right-aligned number, a tab, the (capped) text.

    ``full_bytes`` is the line's real length when ``line`` is only its head (a
    streamed read never holds a whole giant line).
    """
    if full_bytes is not None and len(line) > max_chars:
        line = f"{line[:max_chars]}… [line truncated: {full_bytes:,} bytes]"
    elif len(line) > max_chars:
        line = f"{line[:max_chars]}… [line truncated: {len(line):,} characters]"
    return f"{number:>6}\t{line}"


def capped_lines(fh: BinaryIO, keep: int) -> Iterator[tuple[bytes, int]]:
    """The lines of ``fh`` (without ``\n``), each cut to its first ``keep`` bytes, with
    its full length in bytes.

    Reads :data:`CHUNK_BYTES` at a time, so memory stays O(keep + chunk) however long
    a line is: a 250 MB file with no newline costs 64 KiB, not 250 MB (or three times
    that once decoded).
    """
    kept = bytearray()
    length = 0
    while chunk := fh.read(CHUNK_BYTES):
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            end = len(chunk) if nl < 0 else nl
            if len(kept) < keep:
                kept += chunk[start : min(end, start + keep - len(kept))]
            length += end - start
            if nl < 0:
                break
            yield bytes(kept), length
            kept, length = bytearray(), 0
            start = nl + 1
    if length:
        yield bytes(kept), length


def strip_eol(line: str) -> str:
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    return line
