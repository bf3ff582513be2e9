"""The lock file's remote fields (backward compatible) and the install flow's plug-in
points (openers, checks on a staged skill) in skills/packaging/hooks.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skilldeck.config import Settings, load_settings
from skilldeck.errors import PackageError
from skilldeck.skills.packaging import hooks, install, pack
from skilldeck.skills.packaging.hooks import InstallOptions, StagedSkill
from skilldeck.skills.packaging.lockfile import LockFile, Origin, lock_path, skills_root

OLD_LOCK = {
    "format": 1,
    "skills": {
        "demo": {
            "digest": "ab" * 32,
            "files": {"SKILL.md": "cd" * 32},
            "installed_at": "2025-01-01T00:00:00Z",
            "signed_by": None,
            "source": "/somewhere/demo.skill",
            "version": "1.0",
        }
    },
}
SKILL_MD = "---\nname: {name}\ndescription: A test skill. Use when testing hooks.\n---\n\nBody.\n"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    ws = tmp_path / "ws"
    ws.mkdir()
    return load_settings(workspace=ws, home=tmp_path / "home")


def make_skill(folder: Path, name: str = "hooked") -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD.format(name=name), encoding="utf-8")
    return folder


def test_an_old_lock_reads_and_writes_back_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "skills.lock"
    text = json.dumps(OLD_LOCK, indent=2, sort_keys=True) + "\n"
    path.write_text(text, encoding="utf-8")
    lock = LockFile.read(path)
    entry = lock.skills["demo"]
    assert entry.kind == "local" and entry.ref is None and entry.commit is None
    assert not entry.pinned
    lock.write()
    assert path.read_text(encoding="utf-8") == text


def test_remote_fields_round_trip_and_unknown_fields_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "skills.lock"
    doc = json.loads(json.dumps(OLD_LOCK))
    doc["skills"]["demo"].update(
        kind="git", source="https://h/r.git", ref="v1", commit="e" * 40, subpath="s/demo",
        pinned=True, from_the_future={"x": 1},
    )  # fmt: skip
    path.write_text(json.dumps(doc), encoding="utf-8")
    entry = LockFile.read(path).skills["demo"]
    assert entry.origin() == Origin("git", "https://h/r.git", "v1", "e" * 40, "s/demo", True)
    LockFile(path, {"demo": entry}).write()
    stored = json.loads(path.read_text(encoding="utf-8"))["skills"]["demo"]
    assert stored["commit"] == "e" * 40 and stored["pinned"] is True
    assert "from_the_future" not in stored


def test_a_local_install_writes_the_same_fields_as_before(
    tmp_path: Path, settings: Settings
) -> None:
    install(make_skill(tmp_path / "src" / "hooked"), settings=settings)
    stored = json.loads(lock_path(settings, "workspace").read_text(encoding="utf-8"))
    assert set(stored["skills"]["hooked"]) == set(OLD_LOCK["skills"]["demo"])  # type: ignore[index]


def test_a_staged_check_sees_the_skill_and_can_refuse(tmp_path: Path, settings: Settings) -> None:
    seen: list[tuple[str, bool]] = []

    def refuse(staged: StagedSkill, options: InstallOptions) -> None:
        seen.append((staged.skill.name, options.allow_risk))
        assert (staged.folder / "SKILL.md").is_file()
        raise PackageError("refused by the test check")

    source = make_skill(tmp_path / "src" / "hooked")
    with pytest.raises(PackageError, match="refused by the test check"):
        install(source, settings=settings, checks=[refuse], allow_risk=True)
    assert seen == [("hooked", True)]
    assert not (skills_root(settings, "workspace") / "hooked").exists()
    assert not lock_path(settings, "workspace").exists()
    assert not skills_root(settings, "workspace").parent.exists()  # nothing left behind


def test_default_checks_run_and_may_warn(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    def warn(staged: StagedSkill, options: InstallOptions) -> None:
        staged.warnings.append(f"looked at {len(staged.files)} file(s)")

    monkeypatch.setattr(hooks, "STAGED_CHECKS", (warn,))
    result = install(make_skill(tmp_path / "src" / "hooked"), settings=settings)
    assert "looked at 1 file(s)" in result.warnings


def test_an_opener_turns_a_file_kind_into_a_plain_package(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    packed = pack(make_skill(tmp_path / "src" / "hooked"), output=tmp_path / "hooked.skill")
    wrapped = tmp_path / "hooked.fake"
    wrapped.write_bytes(packed.read_bytes()[::-1])  # "encrypted"

    def unwrap(path: Path, options: InstallOptions, workdir: Path) -> Path:
        assert options.identity == tmp_path / "id.txt"
        out = workdir / "plain.skill"
        out.write_bytes(path.read_bytes()[::-1])
        return out

    monkeypatch.setattr(hooks, "OPENERS", {".fake": unwrap})
    result = install(wrapped, settings=settings, identity=tmp_path / "id.txt")
    assert result.name == "hooked"
    shutil.rmtree(skills_root(settings, "workspace") / "hooked")
