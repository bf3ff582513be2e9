"""A ``.zip`` / ``.skill`` holding several skills behaves like a git source holding
several: without a choice it lists them (``SkillChoiceError``, the same wording), with
``--skill`` it installs that one, with ``--all`` every one — and the lock records the
skill's folder inside the archive, so check, update and a reinstall find it again."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from skilldeck.config import Settings
from skilldeck.errors import PackageError, SkillChoiceError
from skilldeck.skills.packaging import install, unpack
from skilldeck.skills.packaging.lockfile import LockFile, lock_path, skills_root
from skilldeck.skills.sources import check_updates, install_from, list_source, update
from source_fixtures import serve, skill_md, write_skill


def multi_zip(out: Path, members: dict[str, str], note: str = "v1") -> Path:
    """A zip with one skill per ``folder → name`` (plus a README at the top)."""
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("README.md", "several skills\n")
        for folder, name in members.items():
            zf.writestr(f"{folder}/SKILL.md", skill_md(name, note))
            zf.writestr(f"{folder}/references/notes.md", f"notes {name} {note}\n")
    return out


def recorded(settings: Settings, name: str, scope: str = "workspace") -> dict[str, object]:
    raw = json.loads(lock_path(settings, scope).read_text(encoding="utf-8"))  # type: ignore[arg-type]
    return dict(raw["skills"][name])


def test_without_a_choice_the_archive_lists_its_skills(tmp_path: Path, settings: Settings) -> None:
    archive = multi_zip(tmp_path / "kit.zip", {"alpha": "alpha", "beta": "beta"})
    with pytest.raises(SkillChoiceError) as caught:
        install_from(archive, settings=settings)
    message = str(caught.value)
    assert message.startswith(f"{archive} holds 2 skills:")
    assert "  alpha — " in message and "  beta — " in message
    assert "--skill NAME" in message and "--all" in message
    assert sorted(caught.value.candidates) == ["alpha", "beta"]
    assert not (settings.workspace / ".skilldeck").exists()  # nothing written
    assert [c.subpath for c in list_source(str(archive), settings=settings)] == ["alpha", "beta"]


def test_skill_installs_that_one_and_records_its_folder(tmp_path: Path, settings: Settings) -> None:
    archive = multi_zip(tmp_path / "kit.skill", {"alpha": "alpha", "beta": "beta"})
    [done] = install_from(archive, settings=settings, skills=["beta"])
    root = skills_root(settings, "workspace")
    assert done.name == "beta" and done.files == 2
    assert sorted(p.name for p in root.iterdir()) == ["beta"]
    assert (root / "beta" / "references" / "notes.md").read_text() == "notes beta v1\n"
    entry = recorded(settings, "beta")
    assert entry["source"] == str(archive.resolve()) and entry["subpath"] == "beta"
    assert "kind" not in entry  # a local install, as before
    lock = LockFile.read(lock_path(settings, "workspace"))
    command = lock.skills["beta"].reinstall_command("workspace")
    assert command == f"skilldeck skills install {archive.resolve()} --skill beta --force"


def test_all_installs_every_skill_of_a_nested_archive(tmp_path: Path, settings: Settings) -> None:
    """A repository's zip download: ``kit-main/skills/<name>/SKILL.md``."""
    archive = multi_zip(
        tmp_path / "kit-main.zip",
        {"kit-main/skills/alpha": "alpha", "kit-main/skills/tools/beta": "beta"},
    )
    done = install_from(archive, settings=settings, all_skills=True, scope="user")
    assert [d.name for d in done] == ["alpha", "beta"]
    assert recorded(settings, "beta", "user")["subpath"] == "kit-main/skills/tools/beta"
    # the recorded folder reinstalls the same skill
    [again] = install_from(
        archive, settings=settings, skills=["kit-main/skills/tools/beta"], scope="user", force=True
    )
    assert again.name == "beta" and again.backup is not None


def test_one_nested_skill_needs_no_choice(tmp_path: Path, settings: Settings) -> None:
    archive = multi_zip(tmp_path / "one.zip", {"repo-main/skills/solo": "solo"})
    [done] = install_from(archive, settings=settings)
    assert done.name == "solo"
    assert recorded(settings, "solo")["subpath"] == "repo-main/skills/solo"


def test_a_usual_package_is_recorded_as_before(tmp_path: Path, settings: Settings) -> None:
    archive = multi_zip(tmp_path / "solo.skill", {"solo": "solo"})
    with zipfile.ZipFile(archive) as zf:  # drop the README: <name>/… only
        members = {n: zf.read(n) for n in zf.namelist() if n != "README.md"}
    with zipfile.ZipFile(archive, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    assert unpack.archive_skills(archive) is None
    install_from(archive, settings=settings)
    assert "subpath" not in recorded(settings, "solo")


def test_a_skill_of_a_skill_is_its_resource(tmp_path: Path) -> None:
    archive = multi_zip(tmp_path / "k.zip", {"a": "a", "a/inner": "inner", "b": "b"})
    assert [s.folder for s in unpack.archive_skills(archive) or []] == ["a", "b"]
    staged = unpack.extract_archive(archive, tmp_path / "out", "a")
    assert staged.folder.name == "a" and "inner/SKILL.md" in staged.files
    assert "README.md" not in staged.files


def test_the_library_install_of_a_multi_archive_says_how_to_choose(
    tmp_path: Path, settings: Settings
) -> None:
    archive = multi_zip(tmp_path / "kit.zip", {"alpha": "alpha", "beta": "beta"})
    with pytest.raises(PackageError, match=r"holds 2 skills; .*--skill NAME"):
        install(archive, settings=settings)


def test_a_member_outside_the_archive_is_refused(tmp_path: Path) -> None:
    archive = multi_zip(tmp_path / "kit.zip", {"alpha": "alpha", "beta": "beta"})
    for member in ("../alpha", "gamma", "alpha/references"):
        with pytest.raises(PackageError, match="holds no skill in"):
            unpack.extract_archive(archive, tmp_path / "out", member)


def test_a_symlink_to_a_sibling_skill_is_refused(tmp_path: Path, settings: Settings) -> None:
    archive = multi_zip(tmp_path / "kit.zip", {"alpha": "alpha", "beta": "beta"})
    with zipfile.ZipFile(archive, "a") as zf:
        info = zipfile.ZipInfo("alpha/steal.md")
        info.external_attr = 0o120777 << 16
        zf.writestr(info, "../beta/SKILL.md")
    with pytest.raises(PackageError, match="pointing outside the skill"):
        install_from(archive, settings=settings, skills=["alpha"])


def test_a_downloaded_archive_of_several_checks_and_updates(
    tmp_path: Path, settings: Settings
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    multi_zip(site / "kit.zip", {"alpha": "alpha", "beta": "beta"})
    with serve(site) as base:
        with pytest.raises(SkillChoiceError, match="holds 2 skills"):
            install_from(f"{base}/kit.zip", settings=settings)
        [done] = install_from(f"{base}/kit.zip", settings=settings, skills=["beta"])
        assert done.name == "beta"
        entry = recorded(settings, "beta")
        assert (entry["kind"], entry["subpath"]) == ("url", "beta")
        assert [s.state for s in check_updates(settings)] == ["up-to-date"]

        multi_zip(site / "kit.zip", {"alpha": "alpha", "beta": "beta"}, note="v2")
        assert [s.state for s in check_updates(settings)] == ["outdated"]
        [result] = update(settings, names=["beta"])
        assert result.outcome == "updated", result.message
    notes = skills_root(settings, "workspace") / "beta" / "references" / "notes.md"
    assert notes.read_text() == "notes beta v2\n"


def test_write_skill_fixture_still_installs_from_a_folder(
    tmp_path: Path, settings: Settings
) -> None:
    """Folders holding several skills are unchanged: their folder is not recorded."""
    write_skill(tmp_path / "kit" / "alpha", "alpha")
    write_skill(tmp_path / "kit" / "beta", "beta")
    [done] = install_from(tmp_path / "kit", settings=settings, skills=["alpha"])
    assert recorded(settings, "alpha")["source"] == str((tmp_path / "kit" / "alpha").resolve())
    assert done.name == "alpha"
