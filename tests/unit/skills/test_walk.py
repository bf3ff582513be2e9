"""The walk: nested skills, roots that are skills, hidden folders, symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skill_fixtures import write_skill_md as write_skill
from skilldeck.skills.discover import Root as DiscoveryRoot
from skilldeck.skills.discover import scan_root
from skilldeck.skills.skill import SkillSource
from skilldeck.skills.walk import walk_tree


def test_nested_skills_and_root_that_is_a_skill(tmp_path: Path) -> None:
    root = tmp_path / "outer"
    write_skill(root)  # the root itself is a skill
    write_skill(root / "inner")
    write_skill(root / "inner" / "scripts" / "deeper")
    write_skill(root / "group" / "leaf")
    tree = walk_tree(root)
    assert tree.skill_mds == [
        "SKILL.md",
        "group/leaf/SKILL.md",
        "inner/SKILL.md",
        "inner/scripts/deeper/SKILL.md",
    ]
    scan = scan_root(DiscoveryRoot(root, SkillSource.ROOT), cache_dir=None)
    assert [s.name for s in scan.skills] == ["outer", "leaf", "inner", "deeper"]
    assert all(s.root == root and s.source is SkillSource.ROOT for s in scan.skills)


def test_lowercase_skill_md_is_accepted_and_uppercase_preferred(tmp_path: Path) -> None:
    (tmp_path / "low").mkdir()
    (tmp_path / "low" / "skill.md").write_text(
        "---\nname: low\ndescription: d\n---\n", encoding="utf-8"
    )
    tree = walk_tree(tmp_path)
    assert tree.skill_mds == ["low/skill.md"]
    (tmp_path / "low" / "SKILL.md").write_text(
        "---\nname: low\ndescription: upper\n---\n", encoding="utf-8"
    )
    if (tmp_path / "low" / "SKILL.md").read_text(encoding="utf-8") != (
        tmp_path / "low" / "skill.md"
    ).read_text(encoding="utf-8"):  # case-sensitive filesystem
        assert walk_tree(tmp_path).skill_mds == ["low/SKILL.md"]


def test_hidden_collections_scanned_tool_folders_skipped(tmp_path: Path) -> None:
    write_skill(tmp_path / ".curated" / "a")
    write_skill(tmp_path / "repo" / ".claude" / "skills" / "b")
    for junk in (".git", "node_modules", "__pycache__", ".venv"):
        write_skill(tmp_path / junk / "hidden-skill")
    assert walk_tree(tmp_path).skill_mds == [
        ".curated/a/SKILL.md",
        "repo/.claude/skills/b/SKILL.md",
    ]


def test_symlink_loop_is_reported_not_followed(tmp_path: Path) -> None:
    write_skill(tmp_path / "a" / "one")
    os.symlink(tmp_path / "a", tmp_path / "a" / "one" / "back")  # points at an ancestor
    os.symlink(tmp_path / "loop2", tmp_path / "loop1")  # a link chain that never ends
    os.symlink(tmp_path / "loop1", tmp_path / "loop2")
    tree = walk_tree(tmp_path)
    assert tree.skill_mds == ["a/one/SKILL.md"]
    codes = sorted((d.code, d.path.name if d.path else "") for d in tree.diagnostics)
    assert ("SD201", "back") in codes
    assert ("SD202", "loop1") in codes and ("SD202", "loop2") in codes
    loop = next(d for d in tree.diagnostics if d.code == "SD201")
    assert loop.rule == "symlink-loop" and not loop.is_error


def test_dangling_symlink_is_reported(tmp_path: Path) -> None:
    write_skill(tmp_path / "ok")
    os.symlink(tmp_path / "nowhere", tmp_path / "gone")
    scan = scan_root(DiscoveryRoot(tmp_path, SkillSource.ROOT), cache_dir=None)
    assert [s.name for s in scan.skills] == ["ok"]
    [diag] = scan.diagnostics
    assert (diag.code, diag.rule) == ("SD202", "dangling-symlink")
    assert diag.path == tmp_path / "gone"
    assert "nowhere" in diag.message


def test_symlinked_skill_folder_is_followed_once(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_skill(outside / "linked")
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(outside / "linked", root / "linked")
    os.symlink(outside / "linked", root / "zz-alias")  # same folder again
    tree = walk_tree(root)
    assert tree.skill_mds == ["linked/SKILL.md"]
    assert tree.links == {"linked": "d", "zz-alias": "d"}


def test_symlinked_skill_md_file(tmp_path: Path) -> None:
    real = write_skill(tmp_path / "src" / "thing")
    (tmp_path / "root" / "thing").mkdir(parents=True)
    os.symlink(real, tmp_path / "root" / "thing" / "SKILL.md")
    assert walk_tree(tmp_path / "root").skill_mds == ["thing/SKILL.md"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any folder")
def test_unreadable_folder_is_reported(tmp_path: Path) -> None:
    write_skill(tmp_path / "ok")
    locked = tmp_path / "locked"
    write_skill(locked / "inside")
    locked.chmod(0)
    try:
        tree = walk_tree(tmp_path)
    finally:
        locked.chmod(0o755)
    assert tree.skill_mds == ["ok/SKILL.md"]
    assert [d.code for d in tree.diagnostics] == ["SD203"]
