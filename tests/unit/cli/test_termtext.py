"""`printable`: skill text printed on a terminal cannot drive it (src/skilldeck/cli/termtext.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skilldeck.cli.termtext import printable


def test_escapes_controls_and_bidi_overrides_visibly() -> None:
    assert printable("a\x1b[31mb") == "a\\x1b[31mb"
    assert printable("evil\u202etxt.py") == "evil\\u202etxt.py"
    assert printable("osc\x1b]52;c;ZQ==\x07") == "osc\\x1b]52;c;ZQ==\\x07"
    assert printable("c1\x9bm") == "c1\\x9bm"


def test_newlines_are_spaces_in_a_cell_and_kept_in_a_body() -> None:
    assert printable("two\nlines\tand tab") == "two lines and tab"
    assert printable("two\r\nlines\r\n", lines=True) == "two\nlines\n"
    assert printable("shown\rhidden", lines=True) == "shown\\x0dhidden"  # CR would overwrite


def test_ordinary_unicode_and_emoji_joiners_are_kept() -> None:
    text = "Café – 日本語 👩\u200d💻 Ünïcode"
    assert printable(text) == text


@given(st.text())
def test_nothing_that_drives_a_terminal_survives(text: str) -> None:
    shown = printable(text, lines=True)
    assert not any(
        (ord(c) < 0x20 and c not in "\n\t")
        or 0x7F <= ord(c) <= 0x9F
        or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
        for c in shown
    )
