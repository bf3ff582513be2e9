"""Installing from git repositories built in the test (file:// URLs, no network)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skilldeck.config import Settings, load_settings
from skilldeck.errors import (
    NotASkillSourceError,
    PackageError,
    RefNotFoundError,
    SkillChoiceError,
    SourceUnreachableError,
)
from skilldeck.skills.packaging.lockfile import LockFile, lock_path, skills_root
from skilldeck.skills.sources import FetchOptions, install_from
from skilldeck.skills.sources.gitsource import fetch_commit
from source_fixtures import GitRepo, git_repo, write_skill


def lock_entry(settings: Settings, name: str) -> dict[str, object]:
    raw = json.loads(lock_path(settings, "workspace").read_text(encoding="utf-8"))
    return dict(raw["skills"][name])


def revision(settings: Settings, name: str) -> str:
    return (skills_root(settings, "workspace") / name / "SKILL.md").read_text(encoding="utf-8")


def test_single_skill_repository_installs_and_records_its_origin(
    tmp_path: Path, settings: Settings
) -> None:
    repo = git_repo(tmp_path / "solo", {"": "solo"})
    [result] = install_from(repo.url, settings=settings)
    assert result.name == "solo"
    entry = lock_entry(settings, "solo")
    assert entry["kind"] == "git"
    assert entry["source"] == repo.url
    assert entry["commit"] == repo.git("rev-parse", "HEAD")
    assert "ref" not in entry  # the default branch: nothing asked for
    assert entry["digest"] == LockFile.read(lock_path(settings, "workspace")).skills["solo"].digest
    assert entry["installed_at"]


def test_many_skills_are_listed_and_only_the_chosen_installed(
    tmp_path: Path, settings: Settings
) -> None:
    repo = git_repo(
        tmp_path / "many", {"skills/alpha": "alpha", "skills/beta": "beta", "gamma": "gamma"}
    )
    with pytest.raises(SkillChoiceError) as info:
        install_from(repo.url, settings=settings)
    assert info.value.candidates == ["gamma", "alpha", "beta"] or sorted(info.value.candidates) == [
        "alpha",
        "beta",
        "gamma",
    ]
    assert "--skill" in str(info.value) and "--all" in str(info.value)
    assert not skills_root(settings, "workspace").exists() or not any(
        skills_root(settings, "workspace").iterdir()
    )
    [beta] = install_from(repo.url, settings=settings, skills=["beta"])
    assert beta.name == "beta"
    assert lock_entry(settings, "beta")["subpath"] == "skills/beta"
    assert not (skills_root(settings, "workspace") / "alpha").exists()
    with pytest.raises(NotASkillSourceError, match="no skill named 'delta'"):
        install_from(repo.url, settings=settings, skills=["delta"])


def test_all_installs_every_skill(tmp_path: Path, settings: Settings) -> None:
    repo = git_repo(tmp_path / "many", {"a/one": "one", "b/two": "two"})
    names = sorted(r.name for r in install_from(repo.url, settings=settings, all_skills=True))
    assert names == ["one", "two"]


def test_tags_branches_and_shas(tmp_path: Path, settings: Settings) -> None:
    repo = git_repo(tmp_path / "r", {"": "evolving"}, note="v1")
    repo.tag("v1")
    first = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "dev")
    write_skill(repo.path, "evolving", "dev")
    repo.commit("dev work")
    repo.git("checkout", "-q", "main")
    write_skill(repo.path, "evolving", "v2")
    repo.commit("v2")

    install_from(f"{repo.url}@v1", settings=settings)
    assert "Revision v1." in revision(settings, "evolving")
    assert lock_entry(settings, "evolving")["ref"] == "v1"
    assert lock_entry(settings, "evolving")["commit"] == first

    install_from(f"{repo.url}@dev", settings=settings, force=True)
    assert "Revision dev." in revision(settings, "evolving")

    install_from(repo.url, settings=settings, force=True)
    assert "Revision v2." in revision(settings, "evolving")

    install_from(f"{repo.url}@{first}", settings=settings, force=True)
    assert "Revision v1." in revision(settings, "evolving")
    assert lock_entry(settings, "evolving")["commit"] == first


def test_missing_ref_and_unreachable_repository_are_clear(
    tmp_path: Path, settings: Settings
) -> None:
    repo = git_repo(tmp_path / "r", {"": "solo"})
    with pytest.raises(RefNotFoundError, match="no tag or branch named 'v9'"):
        install_from(f"{repo.url}@v9", settings=settings)
    with pytest.raises(RefNotFoundError, match="no commit"):
        install_from(f"{repo.url}@{'0' * 40}", settings=settings)
    with pytest.raises(SourceUnreachableError, match="Cannot reach"):
        install_from((tmp_path / "nowhere").as_uri() + ".git", settings=settings)


def test_repository_without_skills_is_not_a_skill_source(
    tmp_path: Path, settings: Settings
) -> None:
    repo = GitRepo(tmp_path / "plain")
    (repo.path / "README.md").write_text("hi\n", encoding="utf-8")
    repo.commit("readme")
    with pytest.raises(NotASkillSourceError, match=r"holds no SKILL\.md"):
        install_from(repo.url, settings=settings)


def test_github_shorthand_follows_the_setting(tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    repo = git_repo(hub / "acme" / "tools.git", {"skills/alpha": "alpha", "skills/beta": "beta"})
    repo.tag("v1")
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = load_settings(
        workspace=ws, home=tmp_path / "home", skills={"github_url": hub.as_uri()}
    )
    [alpha] = install_from("acme/tools/skills/alpha@v1", settings=settings)
    assert alpha.name == "alpha"
    assert lock_entry(settings, "alpha")["source"] == f"{hub.as_uri()}/acme/tools.git"


def test_sparse_checkout_fetches_only_the_chosen_folder(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "r", {"skills/alpha": "alpha"})
    (repo.path / "big").mkdir()
    (repo.path / "big" / "data.bin").write_bytes(b"x" * 4096)
    repo.commit("big")
    checkout = fetch_commit(repo.url, None, tmp_path / "work", FetchOptions())
    assert checkout.skill_folders(None) == ["skills/alpha"]
    root = checkout.checkout(["skills/alpha"])
    assert (root / "skills" / "alpha" / "SKILL.md").is_file()
    assert not (root / "big").exists()


def test_no_hook_or_template_of_the_user_runs(tmp_path: Path, settings: Settings) -> None:
    marker = tmp_path / "hook-ran"
    template = tmp_path / "template" / "hooks"
    template.mkdir(parents=True)
    hook = template / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    hook.chmod(0o755)
    home = Path(os.environ["HOME"])
    (home / ".gitconfig").write_text(
        f"[init]\n\ttemplateDir = {template.parent}\n", encoding="utf-8"
    )
    repo = git_repo(tmp_path / "r", {"": "solo"})
    install_from(repo.url, settings=settings)
    assert not marker.exists()


def test_symlink_leaving_the_skill_is_refused(tmp_path: Path, settings: Settings) -> None:
    repo = git_repo(tmp_path / "r", {"": "sneaky"})
    (repo.path / "passwd").symlink_to("/etc/passwd")
    repo.commit("link")
    with pytest.raises(PackageError, match="outside the skill folder"):
        install_from(repo.url, settings=settings)
    assert not (skills_root(settings, "workspace") / "sneaky").exists()


def test_a_local_folder_of_many_skills_asks_which(tmp_path: Path, settings: Settings) -> None:
    shelf = tmp_path / "shelf"
    write_skill(shelf / "one", "one")
    write_skill(shelf / "nested" / "two", "two")
    with pytest.raises(SkillChoiceError) as info:
        install_from(shelf, settings=settings)
    assert sorted(info.value.candidates) == ["one", "two"]
    [two] = install_from(shelf, settings=settings, skills=["two"])
    assert two.source == str((shelf / "nested" / "two").resolve())
