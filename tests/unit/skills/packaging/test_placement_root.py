"""Making the skills root for an install: a dangling ``.skilldeck`` symlink or a file
in the way is an error naming the path and the fix (not a bare "File exists"), and a
refused install removes only the folders *it* created, only while no other install is
staging a skill into them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skilldeck.config import Settings, load_settings
from skilldeck.errors import PackageError
from skilldeck.skills.packaging import install
from skilldeck.skills.packaging.lockfile import skills_root
from skilldeck.skills.packaging.placement import prepared_root

SKILL_MD = "---\nname: good\ndescription: A good skill for placement tests.\n---\nBody.\n"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    ws = tmp_path / "ws"
    ws.mkdir()
    return load_settings(workspace=ws, home=tmp_path / "home")


@pytest.fixture
def good(tmp_path: Path) -> Path:
    folder = tmp_path / "src" / "good"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    return folder


class Refused(Exception):
    """What a refused install raises inside the root (any error will do)."""


def test_a_dangling_skilldeck_symlink_is_named_with_the_fix(
    settings: Settings, good: Path, tmp_path: Path
) -> None:
    link = settings.workspace / ".skilldeck"
    link.symlink_to(tmp_path / "gone")
    with pytest.raises(PackageError) as caught:
        install(good, settings=settings)
    message = str(caught.value)
    assert message.startswith(f"{link} is a symlink to {tmp_path / 'gone'}, which does not exist")
    assert f"`rm {link}`" in message and "File exists" not in message
    assert link.is_symlink() and not (tmp_path / "gone").exists()  # left as it was


def test_a_file_in_the_way_is_named(settings: Settings, good: Path) -> None:
    (settings.workspace / ".skilldeck").write_text("x", encoding="utf-8")
    with pytest.raises(PackageError, match=r"\.skilldeck exists and is not a folder; move it"):
        install(good, settings=settings)


def test_a_symlink_to_a_real_folder_still_works(
    settings: Settings, good: Path, tmp_path: Path
) -> None:
    (tmp_path / "elsewhere").mkdir()
    (settings.workspace / ".skilldeck").symlink_to(tmp_path / "elsewhere")
    done = install(good, settings=settings)
    assert (tmp_path / "elsewhere" / "skills" / "good" / "SKILL.md").is_file()
    assert done.path == skills_root(settings, "workspace") / "good"


def test_a_refusal_keeps_the_root_another_install_is_staging_into(settings: Settings) -> None:
    root = skills_root(settings, "workspace")
    with pytest.raises(Refused), prepared_root(settings, "workspace"):
        assert root.is_dir()
        (root.parent / ".install-other").mkdir()  # a concurrent install, mid-way
        raise Refused
    assert root.is_dir()


def test_a_refusal_keeps_a_root_another_install_created_first(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both installs saw no root; the other's ``mkdir`` won the race."""
    root = skills_root(settings, "workspace")
    real_mkdir = Path.mkdir

    def racing_mkdir(
        self: Path, mode: int = 0o777, parents: bool = False, exist_ok: bool = False
    ) -> None:
        if self == root and not root.exists():
            real_mkdir(self)  # the other install, a moment earlier
        real_mkdir(self, mode, parents, exist_ok)

    monkeypatch.setattr(Path, "mkdir", racing_mkdir)
    with pytest.raises(Refused), prepared_root(settings, "workspace"):
        raise Refused
    monkeypatch.undo()
    assert root.is_dir()  # the other install's: not this one's to remove


def test_a_refusal_still_removes_what_it_created(settings: Settings) -> None:
    with pytest.raises(Refused), prepared_root(settings, "user"):
        raise Refused
    assert not settings.home.exists()
    assert os.listdir(settings.workspace) == []
