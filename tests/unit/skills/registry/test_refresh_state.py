"""What a refresh compares: each winner's SKILL.md as the scan recorded it, read
from the string a discovered skill holds (no ``Path`` is built and kept on the
shared skills just to tell whether a file changed)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from skilldeck.config import load_settings
from skilldeck.skills.registry import SkillRegistry


def _skill(folder: Path, description: str = "Does things.") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {folder.name}\ndescription: {description}\n---\n\nBody\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")


def _age(top: Path) -> None:
    past = time.time() - 3600
    for dirpath, dirnames, filenames in os.walk(top, topdown=False):
        for name in filenames + dirnames:
            os.utime(os.path.join(dirpath, name), (past, past))
    os.utime(top, (past, past))


def test_refresh_compares_scanned_paths_without_building_paths(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _skill(root / "one")
    _skill(root / "two")
    _age(root)
    reg = SkillRegistry.discover(load_settings(), roots=[root], no_defaults=True)
    assert not reg.refresh().any
    assert all("_skill_md" not in vars(skill) for skill in reg.list())
    _skill(root / "two", description="Changed, and longer than it was.")
    assert reg.refresh().changed == ["two"]
    assert all("_skill_md" not in vars(skill) for skill in reg.list())
