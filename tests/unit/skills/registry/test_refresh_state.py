"""What a refresh compares: each winner's SKILL.md as the scan recorded it, read
from the string a discovered skill holds (no ``Path`` is built and kept on the
shared skills just to tell whether a file changed)."""

from __future__ import annotations

from pathlib import Path

from skill_fixtures import age_tree, write_skill_md
from skilldeck.config import load_settings
from skilldeck.skills.registry import SkillRegistry


def test_refresh_compares_scanned_paths_without_building_paths(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write_skill_md(root / "one")
    write_skill_md(root / "two")
    age_tree(root)
    reg = SkillRegistry.discover(load_settings(), roots=[root], no_defaults=True)
    assert not reg.refresh().any
    assert all("_skill_md" not in vars(skill) for skill in reg.list())
    write_skill_md(root / "two", description="Changed, and longer than it was.")
    assert reg.refresh().changed == ["two"]
    assert all("_skill_md" not in vars(skill) for skill in reg.list())
