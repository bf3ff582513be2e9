"""``install --skill NAME`` on a source holding several skills of that name refuses
as ambiguous (it picked one in silence), and a source's listing prints a missing or
malformed description as text, never a Python repr (``None``, ``['a', 'b']``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.config import Settings
from skilldeck.errors import SkillChoiceError
from skilldeck.skills.sources import install_from, list_source
from skilldeck.skills.sources.installer import choose
from skilldeck.skills.sources.resolve import Candidate


def skill(folder: Path, name: str, description: str) -> None:
    folder.mkdir(parents=True)
    text = f"---\nname: {name}\ndescription:{description}\n---\nBody.\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")


@pytest.fixture
def source(tmp_path: Path) -> Path:
    root = tmp_path / "multi"
    skill(root / "a" / "good", "good", " Good from a. Use when testing.")
    skill(root / "b" / "good", "good", " Good from b. Use when testing.")
    skill(root / "nulldesc", "nulldesc", "")
    skill(root / "listdesc", "listdesc", " [a, b]")
    return root


def test_two_skills_of_one_name_are_ambiguous(source: Path, settings: Settings) -> None:
    with pytest.raises(SkillChoiceError) as caught:
        install_from(source, settings=settings, skills=["good"])
    message = str(caught.value)
    assert "2 skills named 'good'" in message and "a/good, b/good" in message
    assert "--skill a/good" in message
    assert f"skilldeck skills install {source}/a/good" in message
    assert caught.value.candidates == ["a/good", "b/good"]
    assert not (settings.workspace / ".skilldeck").exists()


def test_the_folder_picks_one(source: Path, settings: Settings) -> None:
    [done] = install_from(source, settings=settings, skills=["b/good"])
    assert done.name == "good"
    assert "Good from b" in (done.path / "SKILL.md").read_text(encoding="utf-8")


def test_a_description_that_is_no_text_is_listed_as_none_given(
    source: Path, settings: Settings
) -> None:
    found = {c.subpath: c.description for c in list_source(str(source), settings=settings)}
    assert found["nulldesc"] == "" and found["listdesc"] == ""
    with pytest.raises(SkillChoiceError) as caught:
        install_from(source, settings=settings)
    message = str(caught.value)
    assert "nulldesc — (no description)" in message
    assert "listdesc — (no description)" in message
    assert "None" not in message and "['a', 'b']" not in message
    assert "good (a/good) — Good from a." in message  # a shared name shows its folder


def test_a_remote_source_is_not_told_to_install_a_local_folder() -> None:
    found = [Candidate("x", "", "one/x"), Candidate("x", "", "two/x")]
    with pytest.raises(SkillChoiceError) as caught:
        choose(found, ["x"], all_skills=False, source="acme/kit")
    assert "--skill one/x" in str(caught.value)
    assert "skills install acme/kit/one/x" not in str(caught.value)
