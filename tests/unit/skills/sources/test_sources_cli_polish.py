"""What a QA pass on the install/check/update/pin wording found: descriptions cut at
a word with "…", a pinned skill that says so, a deleted skill that check reports and
``update --force`` restores."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.config import Settings
from skilldeck.errors import SkillChoiceError
from skilldeck.skills.sources import install_from
from skilldeck.skills.sources.installer import brief
from source_fixtures import GitRepo, write_skill

LONG = (
    "Writes reports for the customer. Use when the user asks for a weekly status "
    "report or a summary of data."
)


def test_brief_cuts_at_a_word_with_an_ellipsis() -> None:
    cut = brief(LONG)
    assert cut == "Writes reports for the customer. Use when the user asks for…"
    assert len(cut) <= 60
    assert brief("Short enough.") == "Short enough."
    assert brief("word " * 11 + "tail", limit=60) == "word " * 11 + "tail"
    assert brief("x" * 100) == "x" * 59 + "…"  # one long word: cut where it must be
    assert brief("two\n  lines") == "two lines"


def test_a_source_listing_never_cuts_a_word(tmp_path: Path, settings: Settings) -> None:
    repo = GitRepo(tmp_path / "kit")
    for name in ("report-writer", "data-cleaner"):
        folder = write_skill(repo.path / name, name)
        text = (folder / "SKILL.md").read_text(encoding="utf-8")
        start = text.index("description: ") + len("description: ")
        end = text.index("\n", start)
        (folder / "SKILL.md").write_text(text[:start] + LONG + text[end:], encoding="utf-8")
    repo.commit("two skills")
    with pytest.raises(SkillChoiceError) as info:
        install_from(repo.url, settings=settings)
    listed = [line for line in str(info.value).splitlines() if " — " in line]
    assert len(listed) == 2
    for line in listed:
        assert line.endswith("asks for…"), line
