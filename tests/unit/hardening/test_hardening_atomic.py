"""Config and lock files are replaced atomically: a failure at any step of the write
leaves the old file byte for byte, and no temp file behind.

The crash version of this (SIGKILL of a writer process, repeated) is in
``tests/stress/test_stress_crash.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import skilldeck._atomic as atomic
from skilldeck.config import read_toml, update_config_file
from skilldeck.skills.packaging.lockfile import LockEntry, LockFile


class Boom(BaseException):
    """Stands for a crash: not an Exception, so nothing on the way may swallow it."""


def _fail_at(monkeypatch: pytest.MonkeyPatch, step: str) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise Boom(step)

    if step == "write":
        real_fdopen = os.fdopen

        class Exploding:
            def __init__(self, fh: object) -> None:
                self.fh = fh

            def __enter__(self) -> Exploding:
                return self

            def __exit__(self, *exc: object) -> None:
                self.fh.close()  # type: ignore[attr-defined]

            def write(self, data: bytes) -> None:
                self.fh.write(data[: len(data) // 2])  # type: ignore[attr-defined]
                raise Boom("half written")

        monkeypatch.setattr(atomic.os, "fdopen", lambda *a, **k: Exploding(real_fdopen(*a, **k)))
    else:
        monkeypatch.setattr(atomic.os, step, boom)


@pytest.mark.parametrize("step", ["write", "fsync", "replace"])
def test_config_update_is_all_or_nothing(
    step: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config.toml"
    update_config_file(path, {"skills": {"disabled": ["a"]}, "model": "scripted:x.jsonl"})
    before = path.read_bytes()
    _fail_at(monkeypatch, step)
    with pytest.raises(Boom):
        update_config_file(path, {"skills": {"disabled": ["a", "b"] * 5000}})
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert read_toml(path)["skills"]["disabled"] == ["a"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


@pytest.mark.parametrize("step", ["write", "fsync", "replace"])
def test_lock_file_write_is_all_or_nothing(
    step: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "skills.lock"
    lock = LockFile(path)
    lock.skills["a"] = LockEntry("a", "1", "src", "2024-01-01T00:00:00Z", "d", {"SKILL.md": "h"})
    lock.write()
    before = path.read_bytes()
    lock.skills["b"] = LockEntry("b", "2", "src", "2024-01-01T00:00:00Z", "e", {"x": "y" * 10})
    _fail_at(monkeypatch, step)
    with pytest.raises(Boom):
        lock.write()
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(LockFile.read(path).skills) == ["a"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["skills.lock"]
