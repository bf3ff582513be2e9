"""A malformed ``skills.lock`` entry does not block ``uninstall``: the skill's folder
and its entry go, every other entry (malformed ones too) stays byte for byte. verify,
check and update still refuse with the error naming the entry — whose reinstall hint
names the git ref and the folder inside the source when the entry has them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skilldeck.config import Settings, load_settings
from skilldeck.errors import PackageError
from skilldeck.skills.packaging import install, uninstall, verify
from skilldeck.skills.packaging.lockfile import LockFile, lock_path, skills_root
from skilldeck.skills.sources import check_updates, update

SKILL_MD = "---\nname: {0}\ndescription: The {0} skill, for lock tests.\n---\nBody.\n"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    ws = tmp_path / "ws"
    ws.mkdir()
    return load_settings(workspace=ws, home=tmp_path / "home")


def installed_pair(settings: Settings, tmp_path: Path) -> Path:
    """``good`` and ``other`` installed in the user scope; the lock's path."""
    for name in ("good", "other"):
        folder = tmp_path / "src" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(SKILL_MD.format(name), encoding="utf-8")
        install(folder, scope="user", settings=settings)
    return lock_path(settings, "user")


def damage(path: Path, name: str, **changes: Any) -> dict[str, Any]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["skills"][name].update(changes)
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return dict(doc)


def test_uninstall_of_a_skill_whose_own_entry_is_malformed(
    settings: Settings, tmp_path: Path
) -> None:
    path = installed_pair(settings, tmp_path)
    damage(path, "good", files=["SKILL.md"], source=None)
    with pytest.raises(PackageError, match="malformed lock file"):
        verify(settings)
    removed = uninstall("good", scope="user", settings=settings)
    assert removed == skills_root(settings, "user") / "good" and not removed.exists()
    assert list(LockFile.read(path).skills) == ["other"]
    assert verify(settings) == []  # the lock is usable again


def test_uninstall_leaves_another_malformed_entry_byte_for_byte(
    settings: Settings, tmp_path: Path
) -> None:
    path = installed_pair(settings, tmp_path)
    doc = damage(path, "other", files=["SKILL.md"], added_by_hand={"kept": True})
    # a hand-edited layout, not what skilldeck writes: only good's entry is cut
    text = json.dumps(doc, indent=4)
    path.write_text(text, encoding="utf-8")
    uninstall("good", scope="user", settings=settings)
    assert not (skills_root(settings, "user") / "good").exists()
    after = path.read_text(encoding="utf-8")
    assert after == text[: text.index('"good": {')] + text[text.index('"other": {') :]
    assert json.loads(after)["skills"] == {"other": doc["skills"]["other"]}
    for call in (
        lambda: verify(settings),
        lambda: check_updates(settings),
        lambda: update(settings, all_skills=True),
    ):
        with pytest.raises(PackageError, match=r"field 'files' is a list"):
            call()


def test_uninstall_of_the_last_entry_leaves_an_empty_table(
    settings: Settings, tmp_path: Path
) -> None:
    path = installed_pair(settings, tmp_path)
    uninstall("other", scope="user", settings=settings)
    damage(path, "good", pinned="yes")
    uninstall("good", scope="user", settings=settings)
    assert json.loads(path.read_text(encoding="utf-8")) == {"format": 1, "skills": {}}


def test_a_lock_that_is_not_a_table_still_stops_uninstall(
    settings: Settings, tmp_path: Path
) -> None:
    path = installed_pair(settings, tmp_path)
    path.write_text('{"format": 1, "skills": []}', encoding="utf-8")
    with pytest.raises(PackageError, match='"skills" is a list'):
        uninstall("good", scope="user", settings=settings)
    assert (skills_root(settings, "user") / "good").is_dir()


def test_uninstall_of_an_unrecorded_name_still_refuses(settings: Settings, tmp_path: Path) -> None:
    path = installed_pair(settings, tmp_path)
    damage(path, "other", files=3)
    before = path.read_bytes()
    with pytest.raises(PackageError, match="not installed in the user scope"):
        uninstall("nothere", scope="user", settings=settings)
    assert path.read_bytes() == before


def test_the_reinstall_hint_names_the_git_ref_and_folder(
    settings: Settings, tmp_path: Path
) -> None:
    path = installed_pair(settings, tmp_path)
    damage(
        path,
        "good",
        kind="git",
        source="https://git.example/team/kit.git",
        ref="v1.2",
        subpath="skills/good",
        files=["SKILL.md"],
    )
    with pytest.raises(PackageError) as caught:
        LockFile.read(path)
    message = str(caught.value)
    assert (
        "`skilldeck skills install https://git.example/team/kit.git@v1.2 "
        "--skill skills/good --force`" in message
    )
    assert "`skilldeck skills uninstall good`" in message
