"""What a QA pass on the install/check/update/pin wording found: descriptions cut at
a word with "…", a pinned skill that says so, a deleted skill that check reports and
``update --force`` restores."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skilldeck.config import Settings
from skilldeck.errors import SkillChoiceError
from skilldeck.skills.packaging import verify
from skilldeck.skills.packaging.lockfile import skills_root
from skilldeck.skills.sources import check_updates, install_from, update
from skilldeck.skills.sources.installer import brief
from source_fixtures import GitRepo, git_repo, write_skill

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


def test_a_deleted_skill_is_missing_and_update_force_restores_it(
    tmp_path: Path, settings: Settings
) -> None:
    repo = git_repo(tmp_path / "kit", {"skills/alpha": "alpha", "skills/beta": "beta"})
    install_from(repo.url, settings=settings, all_skills=True)
    folder = skills_root(settings, "workspace") / "alpha"
    shutil.rmtree(folder)

    by_name = {s.name: s for s in check_updates(settings)}
    assert by_name["alpha"].state == "missing" and by_name["beta"].state == "up-to-date"
    assert not by_name["alpha"].modified
    assert str(folder) in by_name["alpha"].message
    assert "`skilldeck skills update --force alpha`" in by_name["alpha"].message

    [refused] = update(settings, names=["alpha"])
    assert refused.outcome == "refused" and "update --force alpha" in refused.message
    assert not folder.exists()

    [restored] = update(settings, names=["alpha"], force=True)
    assert restored.outcome == "updated" and (folder / "SKILL.md").is_file()
    assert verify(settings) == []
    assert [s.state for s in check_updates(settings)] == ["up-to-date", "up-to-date"]


def test_a_deleted_local_skill_says_to_reinstall_it(tmp_path: Path, settings: Settings) -> None:
    source = write_skill(tmp_path / "src" / "solo", "solo")
    install_from(source, settings=settings, scope="user")
    shutil.rmtree(skills_root(settings, "user") / "solo")
    [status] = check_updates(settings)
    assert status.state == "missing"
    assert f"`skilldeck skills install {source} --scope user --force`" in status.message
    assert "`skilldeck skills uninstall solo --scope user`" in status.message
    [refused] = update(settings, names=["solo"], force=True)
    assert refused.outcome == "refused" and "install" in refused.message
