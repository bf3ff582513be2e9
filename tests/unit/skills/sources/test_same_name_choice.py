"""Two chosen skills of one name (``--all``, or ``--skill`` by their folders) would
install into one folder: the batch is refused before either is installed, naming
their folders — for an archive, a git repository and a local folder alike."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from skilldeck.config import Settings
from skilldeck.errors import SkillChoiceError
from skilldeck.skills.packaging.lockfile import skills_root
from skilldeck.skills.sources import install_from
from source_fixtures import git_repo, skill_md, write_skill


def multi_zip(out: Path, members: dict[str, str], note: str = "v1") -> Path:
    """A zip with one skill per ``folder → name``."""
    with zipfile.ZipFile(out, "w") as zf:
        for folder, name in members.items():
            zf.writestr(f"{folder}/SKILL.md", skill_md(name, note))
            zf.writestr(f"{folder}/references/notes.md", f"notes {folder} {note}\n")
    return out


def same_name_zip(path: Path) -> Path:
    return multi_zip(path, {"one": "twin", "two": "twin", "solo": "solo"})


@pytest.mark.parametrize("force", [False, True])
def test_all_refuses_two_skills_of_one_name_before_installing_any(
    tmp_path: Path, settings: Settings, force: bool
) -> None:
    archive = same_name_zip(tmp_path / "samename.zip")
    with pytest.raises(SkillChoiceError) as caught:
        install_from(archive, settings=settings, all_skills=True, force=force)
    message = str(caught.value)
    assert "2 skills named 'twin'" in message, message
    assert "one, two" in message and "--skill one" in message and "Nothing was installed" in message
    assert caught.value.candidates == ["one", "two"]
    assert not skills_root(settings, "workspace").exists()


def test_two_skills_of_one_name_chosen_by_folder_are_refused(
    tmp_path: Path, settings: Settings
) -> None:
    archive = same_name_zip(tmp_path / "samename.zip")
    with pytest.raises(SkillChoiceError, match="2 skills named 'twin'"):
        install_from(archive, settings=settings, skills=["one", "two"])
    assert not skills_root(settings, "workspace").exists()
    [done] = install_from(archive, settings=settings, skills=["two"])  # one of them is fine
    assert done.name == "twin"


def test_a_git_repository_of_two_skills_of_one_name_is_refused_whole(
    tmp_path: Path, settings: Settings
) -> None:
    repo = git_repo(tmp_path / "r", {"a/twin": "twin", "b/twin": "twin", "c": "other"})
    with pytest.raises(SkillChoiceError, match=r"2 skills named 'twin'.*a/twin, b/twin"):
        install_from(repo.url, settings=settings, all_skills=True)
    assert not skills_root(settings, "workspace").exists()


def test_a_local_folder_of_two_skills_of_one_name_is_refused_whole(
    tmp_path: Path, settings: Settings
) -> None:
    write_skill(tmp_path / "shelf" / "one", "twin")
    write_skill(tmp_path / "shelf" / "two", "twin")
    with pytest.raises(SkillChoiceError, match="2 skills named 'twin'"):
        install_from(tmp_path / "shelf", settings=settings, all_skills=True)
    assert not skills_root(settings, "workspace").exists()
