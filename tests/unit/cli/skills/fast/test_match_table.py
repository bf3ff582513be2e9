"""`skills match`'s table at 80 columns: no line wider than the terminal, no
folder column (it wrapped over five lines); the folder comes back at 120."""

from __future__ import annotations

import pytest

from skilldeck.cli.skills.fast.fast_match import write_matches

ROWS = [
    {"name": "text-to-pdf-automation", "path": "/a/very/long/corpus/path/" * 4, "score": 0.47},
    {"name": "pdf", "path": "/srv/skills/pdf", "score": 0.41},
]
DESCRIPTIONS = ["Automate Text To PDF tasks via Rube MCP (Composio). " * 3, "PDF files."]


@pytest.mark.parametrize("columns", [80, 100])
def test_a_narrow_terminal_gets_no_folder_column(
    columns: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    write_matches(ROWS, DESCRIPTIONS, "pdf", json_=False)
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= columns
    assert "text-to-pdf-automation" in out  # a name is never broken mid-word
    assert "/srv/skills/pdf" not in out and "--json" in out


def test_a_wide_terminal_shows_each_folder(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "140")
    write_matches(ROWS, DESCRIPTIONS, "pdf", json_=False)
    assert "/srv/skills/pdf" in capsys.readouterr().out


def test_a_first_match_over_a_big_catalog_says_it_is_indexing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from skilldeck.cli.skills.fast import fast_match

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    fast_match._say_the_first_run_waits(3209)
    assert "Indexing 3209 skills" in capsys.readouterr().err
    fast_match._say_the_first_run_waits(40)  # small catalogs build in a blink
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    fast_match._say_the_first_run_waits(3209)  # pipes and --json consumers: quiet
    assert capsys.readouterr().err == ""
