"""check / update / pin against local git repositories and a local index server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skilldeck.config import Settings
from skilldeck.errors import LocallyModifiedError, PackageError, SourceError
from skilldeck.skills.packaging import keygen, lockfile, pack
from skilldeck.skills.packaging.lockfile import SCOPES, lock_path, skills_root
from skilldeck.skills.sources import (
    FetchOptions,
    SourceSpec,
    check_updates,
    install_from,
    pin,
    update,
    updatecheck,
    updates,
)
from source_fixtures import GitRepo, git_repo, serve, write_index, write_skill

INDEX = "/.well-known/agent-skills/index.json"


def body(settings: Settings, name: str) -> str:
    return (skills_root(settings, "workspace") / name / "SKILL.md").read_text(encoding="utf-8")


def lock(settings: Settings, name: str) -> dict[str, object]:
    raw = json.loads(lock_path(settings, "workspace").read_text(encoding="utf-8"))
    return dict(raw["skills"][name])


def states(settings: Settings) -> dict[str, str]:
    return {s.name: s.state for s in check_updates(settings)}


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    made = git_repo(tmp_path / "repo", {"skills/alpha": "alpha", "skills/beta": "beta"})
    made.tag("v1")
    return made


def new_revision(repo: GitRepo, note: str) -> str:
    write_skill(repo.path / "skills" / "alpha", "alpha", note)
    return repo.commit(note)


def test_check_reports_and_update_applies_a_new_commit(repo: GitRepo, settings: Settings) -> None:
    install_from(repo.url, settings=settings, all_skills=True)
    assert states(settings) == {"alpha": "up-to-date", "beta": "up-to-date"}
    head = new_revision(repo, "v2")
    before = lock_path(settings, "workspace").read_bytes()
    status = {s.name: s for s in check_updates(settings)}
    assert status["alpha"].state == "outdated" and status["alpha"].available == head
    assert lock_path(settings, "workspace").read_bytes() == before  # check changes nothing
    assert "Revision v1." in body(settings, "alpha")

    results = {r.name: r for r in update(settings, all_skills=True)}
    assert results["alpha"].outcome == "updated"
    assert "Revision v2." in body(settings, "alpha")
    assert lock(settings, "alpha")["commit"] == head
    backup = results["alpha"].installed.backup  # type: ignore[union-attr]
    assert backup is not None and "Revision v1." in (backup / "SKILL.md").read_text()
    assert states(settings) == {"alpha": "up-to-date", "beta": "up-to-date"}


def test_update_never_overwrites_local_edits_without_force(
    repo: GitRepo, settings: Settings
) -> None:
    install_from(repo.url, settings=settings, skills=["alpha"])
    edited = skills_root(settings, "workspace") / "alpha" / "SKILL.md"
    edited.write_text(edited.read_text() + "\nMy own note.\n", encoding="utf-8")
    new_revision(repo, "v2")
    [status] = check_updates(settings)
    assert status.modified and status.state == "outdated"

    [refused] = update(settings, names=["alpha"])
    assert refused.outcome == "refused" and "edited after install" in refused.message
    assert "My own note." in edited.read_text()

    [forced] = update(settings, names=["alpha"], force=True)
    assert forced.outcome == "updated"
    assert "Revision v2." in edited.read_text()
    backup = forced.installed.backup  # type: ignore[union-attr]
    assert backup is not None and "My own note." in (backup / "SKILL.md").read_text()


def test_pin_installs_a_ref_and_update_keeps_it(repo: GitRepo, settings: Settings) -> None:
    first = repo.git("rev-parse", "HEAD")
    install_from(repo.url, settings=settings, skills=["alpha"])
    new_revision(repo, "v2")
    update(settings, names=["alpha"])
    assert "Revision v2." in body(settings, "alpha")

    pin(settings, "alpha", "v1")
    assert "Revision v1." in body(settings, "alpha")
    assert lock(settings, "alpha")["ref"] == "v1" and lock(settings, "alpha")["pinned"] is True
    assert lock(settings, "alpha")["commit"] == first
    new_revision(repo, "v3")  # main moves on; the pin does not follow
    assert states(settings) == {"alpha": "up-to-date"}
    [kept] = update(settings, names=["alpha"])
    assert kept.outcome == "pinned" and kept.message.startswith("pinned to v1;")
    assert "skills pin alpha REF" in kept.message

    pin(settings, "alpha", first)  # a sha pins too
    assert lock(settings, "alpha")["ref"] == first


def test_a_moved_pinned_tag_is_flagged_and_not_taken_silently(
    repo: GitRepo, settings: Settings
) -> None:
    install_from(repo.url, settings=settings, skills=["alpha"])
    pin(settings, "alpha", "v1")
    new_revision(repo, "retagged")
    repo.tag("v1", move=True)
    [status] = check_updates(settings)
    assert status.state == "moved"
    [refused] = update(settings, names=["alpha"])
    assert refused.outcome == "refused" and "moved tag" in refused.message
    assert "Revision v1." in body(settings, "alpha")
    assert update(settings, names=["alpha"], force=True)[0].outcome == "updated"
    assert "Revision retagged." in body(settings, "alpha")


def test_an_unpinned_tag_follows_when_it_moves(repo: GitRepo, settings: Settings) -> None:
    install_from(f"{repo.url}@v1", settings=settings, skills=["alpha"])
    new_revision(repo, "retagged")
    repo.tag("v1", move=True)
    assert states(settings) == {"alpha": "outdated"}
    assert update(settings, all_skills=True)[0].outcome == "updated"
    assert "Revision retagged." in body(settings, "alpha")


def test_pin_refuses_local_edits_and_non_git_sources(
    repo: GitRepo, settings: Settings, tmp_path: Path
) -> None:
    install_from(repo.url, settings=settings, skills=["alpha"])
    (skills_root(settings, "workspace") / "alpha" / "extra.md").write_text("mine\n")
    with pytest.raises(LocallyModifiedError):
        pin(settings, "alpha", "v1")
    local = write_skill(tmp_path / "local" / "homemade", "homemade")
    install_from(local, settings=settings)
    with pytest.raises(PackageError, match="local path, which has nothing to pin"):
        pin(settings, "homemade", "v1")
    with pytest.raises(PackageError, match="No installed skill named 'ghost'"):
        pin(settings, "ghost", "v1")
    with pytest.raises(SourceError, match="not a tag, branch or commit"):
        pin(settings, "alpha", "--upload-pack=touch /tmp/x", force=True)


def test_local_installs_are_not_checked_and_update_needs_a_choice(
    settings: Settings, tmp_path: Path
) -> None:
    install_from(write_skill(tmp_path / "local" / "homemade", "homemade"), settings=settings)
    assert states(settings) == {"homemade": "local"}
    assert update(settings, all_skills=True)[0].outcome == "refused"
    with pytest.raises(PackageError, match="--all"):
        update(settings)


def test_unreachable_source_is_an_error_state(repo: GitRepo, settings: Settings) -> None:
    install_from(repo.url, settings=settings, skills=["alpha"])
    repo.path.rename(repo.path.with_name("gone"))
    [status] = check_updates(settings)
    assert status.state == "error" and "Cannot reach" in status.message


def test_index_skills_update_on_a_new_digest(tmp_path: Path, settings: Settings) -> None:
    site = tmp_path / "site"
    folder = write_skill(tmp_path / "src" / "indexed", "indexed")
    write_index(site, [folder])
    with serve(site) as base:
        install_from(base + INDEX, settings=settings)
        assert states(settings) == {"indexed": "up-to-date"}
        write_skill(folder, "indexed", "v2")
        write_index(site, [folder])
        assert states(settings) == {"indexed": "outdated"}
        assert update(settings, names=["indexed"])[0].outcome == "updated"
        assert "Revision v2." in body(settings, "indexed")
        assert states(settings) == {"indexed": "up-to-date"}
        write_skill(folder, "indexed", "v3")
        write_index(site, [folder], corrupt="indexed/SKILL.md")
        [refused] = update(settings, names=["indexed"])
    assert refused.outcome == "refused" and "does not match" in refused.message
    assert "Revision v2." in body(settings, "indexed")


def test_pinning_an_index_skill_holds_its_installed_content(
    tmp_path: Path, settings: Settings
) -> None:
    """An index or URL skill has no refs: `pin NAME installed` (or a digest prefix)
    holds it, so check reports it pinned without asking the source and update skips it."""
    site = tmp_path / "site"
    folder = write_skill(tmp_path / "src" / "indexed", "indexed")
    write_index(site, [folder])
    with serve(site) as base:
        install_from(base + INDEX, settings=settings)
        digest = str(lock(settings, "indexed")["digest"])
        with pytest.raises(PackageError, match="skills pin indexed installed"):
            pin(settings, "indexed", "v1")
        held = pin(settings, "indexed", digest[:12])
        assert held.digest == digest and lock(settings, "indexed")["pinned"] is True
        write_skill(folder, "indexed", "v2")
        write_index(site, [folder])
        assert states(settings) == {"indexed": "pinned"}
        [kept] = update(settings, names=["indexed"])
    assert kept.outcome == "pinned" and "held" in kept.message and "--force" in kept.message
    assert "Revision v2." not in body(settings, "indexed")
    assert lock(settings, "indexed")["digest"] == digest


def test_url_skills_update_on_new_content(tmp_path: Path, settings: Settings) -> None:
    site = tmp_path / "site"
    (site / "raw").mkdir(parents=True)
    folder = write_skill(tmp_path / "src" / "fromurl", "fromurl")
    (site / "raw" / "SKILL.md").write_bytes((folder / "SKILL.md").read_bytes())
    with serve(site) as base:
        install_from(f"{base}/raw/SKILL.md", settings=settings)
        assert states(settings) == {"fromurl": "up-to-date"}
        write_skill(folder, "fromurl", "v2")
        (site / "raw" / "SKILL.md").write_bytes((folder / "SKILL.md").read_bytes())
        assert states(settings) == {"fromurl": "outdated"}
        assert update(settings, names=["fromurl"])[0].outcome == "updated"
    assert "Revision v2." in body(settings, "fromurl")


def test_a_verified_skill_updates_only_to_the_same_signer(
    tmp_path: Path, settings: Settings
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    folder = write_skill(tmp_path / "src" / "signed", "signed")
    private, public = keygen(tmp_path / "keys" / "author")
    other, _ = keygen(tmp_path / "keys" / "intruder")
    pack(folder, output=site / "signed.skill", sign_key=private)
    with serve(site) as base:
        [first] = install_from(f"{base}/signed.skill", settings=settings, verify_key=public)
        assert first.signed_by is not None
        write_skill(folder, "signed", "v2")
        pack(folder, output=site / "signed.skill", sign_key=private)
        assert update(settings, names=["signed"])[0].outcome == "updated"
        assert lock(settings, "signed")["signed_by"] == first.signed_by

        write_skill(folder, "signed", "v3")
        pack(folder, output=site / "signed.skill", sign_key=other)
        [by_other] = update(settings, names=["signed"])
        assert by_other.outcome == "refused" and "signed by key" in by_other.message
        pack(folder, output=site / "signed.skill")
        [unsigned] = update(settings, names=["signed"])
        assert unsigned.outcome == "refused" and "not signed" in unsigned.message
    assert "Revision v2." in body(settings, "signed")


def test_check_asks_each_source_once(
    repo: GitRepo, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_from(repo.url, settings=settings, all_skills=True)
    asked: list[tuple[str, str | None]] = []
    real = updatecheck.remote_commit

    def counting(url: str, ref: str | None, options: FetchOptions) -> str:
        asked.append((url, ref))
        return real(url, ref, options)

    monkeypatch.setattr(updatecheck, "remote_commit", counting)
    assert states(settings) == {"alpha": "up-to-date", "beta": "up-to-date"}
    assert asked == [(repo.url, None)]


def test_update_fetches_each_source_once(
    repo: GitRepo, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_from(repo.url, settings=settings, all_skills=True)
    write_skill(repo.path / "skills" / "alpha", "alpha", "v2")
    write_skill(repo.path / "skills" / "beta", "beta", "v2")
    repo.commit("both change")
    opened: list[str] = []
    real = updates.open_source

    def counting(spec: SourceSpec, *args: Any) -> Any:
        opened.append(spec.location)
        return real(spec, *args)

    monkeypatch.setattr(updates, "open_source", counting)
    outcomes = {r.name: r.outcome for r in update(settings, all_skills=True)}
    assert outcomes == {"alpha": "updated", "beta": "updated"}
    assert opened == [repo.url]
    assert "Revision v2." in body(settings, "alpha") and "Revision v2." in body(settings, "beta")


def test_check_update_and_pin_hash_only_the_skills_they_name(
    repo: GitRepo, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a skill was edited is asked of that skill alone: checking, updating
    or pinning one skill does not re-hash every installed one."""
    install_from(repo.url, settings=settings, all_skills=True)
    hashed: list[str] = []
    real = lockfile.hash_tree

    def counting(folder: Path, *args: Any) -> Any:
        hashed.append(folder.name)
        return real(folder, *args)

    monkeypatch.setattr(lockfile, "hash_tree", counting)
    assert [s.state for s in check_updates(settings, names=["alpha"])] == ["up-to-date"]
    assert hashed == ["alpha"]
    hashed.clear()
    assert update(settings, names=["beta"])[0].outcome == "up-to-date"
    assert hashed == ["beta"]
    hashed.clear()
    pin(settings, "alpha", "v1")
    assert hashed[:1] == ["alpha"] and "beta" not in hashed  # then the install's own


def test_update_reads_the_lock_once_before_installing(
    repo: GitRepo, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_from(repo.url, settings=settings, all_skills=True)
    new_revision(repo, "v2")
    reads: list[Path] = []
    real_read = lockfile.LockFile.read.__func__  # type: ignore[attr-defined]

    def counting_read(cls: type[lockfile.LockFile], path: Path) -> lockfile.LockFile:
        reads.append(path)
        return real_read(cls, path)  # type: ignore[no-any-return]

    before_install: list[int] = []
    real_install = updates.install

    def install(*args: Any, **kwargs: Any) -> Any:
        before_install.append(len(reads))
        return real_install(*args, **kwargs)

    monkeypatch.setattr(lockfile.LockFile, "read", classmethod(counting_read))
    monkeypatch.setattr(updates, "install", install)
    [result] = update(settings, names=["alpha"])
    assert result.outcome == "updated"
    assert before_install == [len(SCOPES)]  # skills.lock of each scope, once
