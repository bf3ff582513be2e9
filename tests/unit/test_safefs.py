from __future__ import annotations

import os
from pathlib import Path

import pytest

from skilldeck._safefs import read_confined
from skilldeck.errors import ResourceAccessError


@pytest.fixture
def base(tmp_path: Path) -> Path:
    folder = tmp_path / "skill"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "a.md").write_text("inside", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("secret", encoding="utf-8")
    return folder.resolve()


def test_reads_a_regular_file(base: Path) -> None:
    assert read_confined(base, base / "refs" / "a.md") == b"inside"


def test_refuses_hard_links_fifos_and_outside(base: Path, tmp_path: Path) -> None:
    os.link(tmp_path / "secret.txt", base / "linked.txt")
    with pytest.raises(ResourceAccessError, match="hard links"):
        read_confined(base, base / "linked.txt")
    os.mkfifo(base / "pipe")
    with pytest.raises(ResourceAccessError, match="not a regular file"):
        read_confined(base, base / "pipe")
    with pytest.raises(ResourceAccessError, match="not inside"):
        read_confined(base, tmp_path / "secret.txt")


def test_component_swapped_for_a_link_is_refused(base: Path, tmp_path: Path) -> None:
    checked = base / "refs" / "a.md"  # resolved and checked by the caller...
    (base / "refs" / "a.md").unlink()
    (base / "refs").rmdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "a.md").write_text("secret", encoding="utf-8")
    os.symlink(outside, base / "refs")  # ...then swapped before the open
    with pytest.raises(ResourceAccessError, match="replaced by a link"):
        read_confined(base, checked)
    os.unlink(base / "refs")
    os.mkdir(base / "refs")
    os.symlink(tmp_path / "secret.txt", base / "refs" / "a.md")
    with pytest.raises(ResourceAccessError):
        read_confined(base, checked)
