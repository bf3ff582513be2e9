"""A refused install or a no-op uninstall leaves no ``./.skilldeck`` behind, and an
install's validation errors name the source the user gave — never the temporary
staging folder they were read from (gone by the time the error is shown)."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from skilldeck.config import Settings, load_settings
from skilldeck.errors import PackageError, SkillValidationError
from skilldeck.skills.packaging import install, uninstall
from skilldeck.skills.packaging.lockfile import Origin, lock_path, skills_root
from skilldeck.trust import assess_workspace, trust_folder

GOOD_MD = "---\nname: good\ndescription: A good skill for testing things.\n---\nBody here.\n"
BAD_MD = "---\nname: bad\ndescription:\n---\nb\n"


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.chdir(ws)
    return load_settings(workspace=ws, home=tmp_path / "home")


def folder(path: Path, skill_md: str | None) -> Path:
    path.mkdir(parents=True)
    if skill_md is not None:
        (path / "SKILL.md").write_text(skill_md, encoding="utf-8")
    return path


def test_a_refused_install_leaves_no_workspace_folder(settings: Settings) -> None:
    (settings.workspace / "notzip.skill").write_text("not a zip\n", encoding="utf-8")
    with pytest.raises(PackageError, match="not a readable"):
        install(Path("notzip.skill"), settings=settings)
    assert not (settings.workspace / ".skilldeck").exists()


def test_an_invalid_skill_leaves_no_user_folders_either(settings: Settings) -> None:
    folder(settings.workspace / "bad", BAD_MD)
    with pytest.raises(SkillValidationError):
        install(Path("bad"), scope="user", settings=settings)
    assert not settings.home.exists()


def test_a_refusal_keeps_what_was_there_before(settings: Settings) -> None:
    config = settings.workspace / ".skilldeck" / "config.toml"
    config.parent.mkdir()
    config.write_text("", encoding="utf-8")
    folder(settings.workspace / "bad", BAD_MD)
    with pytest.raises(SkillValidationError):
        install(Path("bad"), settings=settings)
    assert sorted(os.listdir(config.parent)) == ["config.toml"]


def test_a_successful_install_still_creates_the_root(settings: Settings) -> None:
    folder(settings.workspace / "good", GOOD_MD)
    done = install(Path("good"), settings=settings)
    assert done.path == skills_root(settings, "workspace") / "good"
    assert lock_path(settings, "workspace").is_file()


def test_uninstalling_what_is_not_installed_writes_nothing(settings: Settings) -> None:
    with pytest.raises(PackageError, match="not installed in the workspace scope"):
        uninstall("nothere", settings=settings)
    assert not (settings.workspace / ".skilldeck").exists()


def test_an_invalid_folder_is_named_as_given(settings: Settings) -> None:
    folder(settings.workspace / "bad", BAD_MD)
    with pytest.raises(SkillValidationError) as caught:
        install(Path("bad"), scope="user", settings=settings)
    message = str(caught.value)
    assert message.startswith("bad is not a valid skill")
    assert "bad/SKILL.md:3: SD110" in message
    assert ".install-" not in message
    assert [str(d.path) for d in caught.value.diagnostics] == ["bad/SKILL.md"]


def test_an_invalid_package_names_the_archive_member(settings: Settings) -> None:
    archive = settings.workspace / "bad.skill"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("bad/SKILL.md", BAD_MD)
    with pytest.raises(SkillValidationError) as caught:
        install(archive, scope="user", settings=settings)
    message = str(caught.value)
    assert f"{archive}/bad/SKILL.md:3: SD110" in message
    assert ".install-" not in message


def test_a_folder_without_skill_md_says_how_to_make_one(settings: Settings) -> None:
    folder(settings.workspace / "nomd", None)
    (settings.workspace / "nomd" / "README").write_text("x\n", encoding="utf-8")
    with pytest.raises(SkillValidationError) as caught:
        install(Path("nomd"), scope="user", settings=settings)
    message = str(caught.value)
    assert message.startswith("nomd is not a skill: it holds no SKILL.md")
    assert "skilldeck skills new" in message and ".install-" not in message


def test_a_remote_source_is_named_by_its_address(settings: Settings, tmp_path: Path) -> None:
    fetched = folder(tmp_path / "fetch" / "repo", None)
    (fetched / "README").write_text("x\n", encoding="utf-8")
    origin = Origin("git", "https://git.example/team/skills.git", subpath="tools/x")
    with pytest.raises(SkillValidationError) as caught:
        install(fetched, scope="user", settings=settings, origin=origin)
    message = str(caught.value)
    assert message.startswith("https://git.example/team/skills.git/tools/x is not a skill")
    assert "skills new" not in message and str(tmp_path) not in message

    (fetched / "SKILL.md").write_text(BAD_MD, encoding="utf-8")
    url = Origin("url", "https://example.com/pkg/bad/SKILL.md")
    with pytest.raises(SkillValidationError) as caught:
        install(fetched, scope="user", settings=settings, origin=url)
    assert "https://example.com/pkg/bad/SKILL.md:3: SD110" in str(caught.value)
    assert str(tmp_path) not in str(caught.value)


def test_a_refused_install_records_no_root_in_a_trusted_folder(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trust record may only name a skills root skilldeck really created: one
    that a refusal removed again must not be pre-accepted for whoever makes it next."""
    monkeypatch.delenv("SKILLDECK_TRUST_WORKSPACE", raising=False)
    trust_folder(settings.workspace, settings.home)
    folder(settings.workspace / "bad", BAD_MD)
    with pytest.raises(SkillValidationError):
        install(Path("bad"), settings=settings)
    (settings.workspace / ".skilldeck" / "skills").mkdir(parents=True)  # planted later
    assert not assess_workspace(settings.workspace, settings.home).accepts(".skilldeck/skills")
