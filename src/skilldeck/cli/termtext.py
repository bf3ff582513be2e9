"""Text from skills, agents and models made safe to print on a terminal.

A SKILL.md is written by whoever published it, and its name, description and body
reach the user's terminal through ``skills list``, ``show``, ``match``, ``validate``
and ``agents``. Printed as they are, an escape sequence in a description recolours
the screen, retitles the window or writes the clipboard (OSC 52), and a
right-to-left override (U+202E) makes ``evil.py`` read as ``yp.live`` — the same
characters the scanner flags in instructions (SC402). So every
such string goes through :func:`printable` on its way out: control characters (C0,
DEL, C1) and the bidirectional controls become visible ``\\x1b`` / ``\\u202e``
escapes. Ordinary Unicode, emoji and their zero-width joiners are kept.
"""

from __future__ import annotations

import re

__all__ = ["printable"]

#: C0 (but tab and newline, decided per call), DEL, C1 and the bidi controls
_UNSAFE = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, lines: bool = False) -> str:
    """``text`` with every character that could drive the terminal escaped; tabs and
    newlines are kept when ``lines`` (a body), else shown as spaces (a table cell,
    one line of a report)."""
    text = text.replace("\r\n", "\n")  # a Windows line end is a line end; a lone CR is not
    if not lines:
        text = text.replace("\t", " ").replace("\n", " ")
    # compiled on first use (re caches it): every CLI start imports this module
    return re.sub(_UNSAFE, _escape, text)
