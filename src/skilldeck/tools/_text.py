"""Small text helpers shared by the built-in tools: caps, line numbering, decoding."""

from __future__ import annotations

#: Default cap on what one tool returns (Claude Code's 30,000 characters).
OUTPUT_CAP = 30_000
#: Bytes sniffed to tell a binary file from text.
SNIFF_BYTES = 8192


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


def number_line(number: int, line: str, *, max_chars: int = 2000) -> str:
    """One ``cat -n`` style line: right-aligned number, a tab, the (capped) text."""
    if len(line) > max_chars:
        line = f"{line[:max_chars]}… [line truncated: {len(line):,} characters]"
    return f"{number:>6}\t{line}"


def strip_eol(line: str) -> str:
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    return line
