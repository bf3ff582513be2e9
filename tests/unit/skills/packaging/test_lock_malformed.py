"""A hand-edited ``skills.lock`` with fields of the wrong type is one error naming the
lock file, the skill entry and the field, with the fix — never a traceback or
Python's own words ('list' object has no attribute 'keys')."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skilldeck.config import Settings, load_settings
from skilldeck.errors import PackageError
from skilldeck.skills.packaging import installed, verify
from skilldeck.skills.packaging.lockfile import LockFile, lock_path
from skilldeck.skills.sources import check_updates, update

GOOD = {
    "digest": "ab" * 32,
    "files": {"SKILL.md": "cd" * 32},
    "installed_at": "2025-01-01T00:00:00Z",
    "signed_by": None,
    "source": "/somewhere/good",
    "version": None,
}
#: what Python says when the shape is not checked, and must never reach the user
INTERNALS = ("has no attribute", "__init__", "positional argument", "update sequence", "object")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    ws = tmp_path / "ws"
    ws.mkdir()
    return load_settings(workspace=ws, home=tmp_path / "home")


def write_lock(settings: Settings, doc: Any) -> Path:
    path = lock_path(settings, "user")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def with_entry(**changes: Any) -> dict[str, Any]:
    entry = {k: v for k, v in {**GOOD, **changes}.items() if v is not ...}
    return {"format": 1, "skills": {"good": entry}}


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        (with_entry(files=["SKILL.md"]), "'files' is a list"),
        (with_entry(files={"SKILL.md": 1}), "'files' is a table"),
        (with_entry(source=None), "'source' is null"),
        (with_entry(source=""), "'source' is an empty string"),
        (with_entry(digest=...), "no 'digest' field"),
        (with_entry(installed_at=3), "'installed_at' is a number"),
        (with_entry(kind="ftp"), "'kind' is a string"),
        (with_entry(kind="git", ref=["v1"]), "'ref' is a list"),
        (with_entry(pinned="yes"), "'pinned' is a string"),
        (with_entry(version=2), "'version' is a number"),
        ({"format": 1, "skills": {"good": ["x"]}}, "entry for skill 'good' is a list"),
    ],
)
def test_a_malformed_entry_names_the_lock_the_skill_and_the_field(
    settings: Settings, doc: dict[str, Any], field: str
) -> None:
    path = write_lock(settings, doc)
    with pytest.raises(PackageError) as caught:
        LockFile.read(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: malformed lock file")
    assert "'good'" in message and field in message
    assert "--force" in message and "backup" in message
    assert not any(words in message for words in INTERNALS), message


def test_the_reinstall_it_suggests_names_the_entry_source(settings: Settings) -> None:
    path = write_lock(settings, with_entry(files=["SKILL.md"]))
    with pytest.raises(PackageError, match="skills install /somewhere/good --force"):
        LockFile.read(path)


@pytest.mark.parametrize(
    ("doc", "said"),
    [
        ({"format": 1, "skills": []}, '"skills" is a list'),
        ({"format": 1, "skills": None}, '"skills" is null'),
        ([], "it holds a list"),
    ],
)
def test_a_malformed_lock_is_an_error_not_an_empty_one(
    settings: Settings, doc: Any, said: str
) -> None:
    path = write_lock(settings, doc)
    with pytest.raises(PackageError) as caught:
        installed(settings, scope="user")
    message = str(caught.value)
    assert message.startswith(f"{path}: malformed lock file") and said in message
    assert not any(words in message for words in INTERNALS), message


def test_verify_check_and_update_all_refuse_it_cleanly(settings: Settings) -> None:
    """(``uninstall`` does not: see test_uninstall_malformed_lock.py.)"""
    write_lock(settings, with_entry(kind="git", source=None))
    for call in (
        lambda: verify(settings),
        lambda: check_updates(settings),
        lambda: update(settings, all_skills=True),
    ):
        with pytest.raises(PackageError, match="field 'source' is null"):
            call()


def test_a_missing_version_and_unknown_fields_still_read(settings: Settings) -> None:
    path = write_lock(settings, with_entry(version=..., added_by_a_newer_skilldeck=[1]))
    entry = LockFile.read(path).skills["good"]
    assert entry.version is None and entry.files == GOOD["files"] and entry.kind == "local"
