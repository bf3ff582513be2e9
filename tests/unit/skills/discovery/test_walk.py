"""The walk: nested skills, roots that are skills, hidden folders, symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skill_fixtures import write_skill_md as write_skill
from skilldeck.skills.discovery import Root as DiscoveryRoot
from skilldeck.skills.discovery import scan_root, walk_tree
from skilldeck.skills.model.skill import SkillSource


def test_nested_skills_and_root_that_is_a_skill(tmp_path: Path) -> None:
    root = tmp_path / "outer"
    write_skill(root)  # the root itself is a skill
    write_skill(root / "inner")
    write_skill(root / "inner" / "platforms" / "deeper")
    write_skill(root / "group" / "leaf")
    tree = walk_tree(root)
    assert tree.skill_mds == [
        "SKILL.md",
        "group/leaf/SKILL.md",
        "inner/SKILL.md",
        "inner/platforms/deeper/SKILL.md",
    ]
    scan = scan_root(DiscoveryRoot(root, SkillSource.ROOT), cache_dir=None)
    assert [s.name for s in scan.skills] == ["outer", "leaf", "inner", "deeper"]
    assert all(s.root == root and s.source is SkillSource.ROOT for s in scan.skills)


def test_resource_folders_of_a_skill_are_not_searched(tmp_path: Path) -> None:
    """scripts/, references/ and assets/ belong to their skill: a SKILL.md there is a
    template or an example. Elsewhere, folders with those names are walked as usual."""
    author = tmp_path / "skill-author"
    write_skill(author)
    write_skill(author / "assets" / "templates", name="{{name}}")  # a scaffold
    write_skill(author / "references" / "example")
    write_skill(author / "scripts" / "fixture")
    write_skill(author / "variants" / "nested")  # not a resource folder: a nested skill
    lower = tmp_path / "lower"
    lower.mkdir()
    (lower / "skill.md").write_text("---\nname: lower\ndescription: d\n---\n", encoding="utf-8")
    write_skill(lower / "assets" / "t")  # `assets` sorts before `skill.md`: still skipped
    write_skill(tmp_path / "assets" / "real")  # not inside a skill: a real skill
    write_skill(tmp_path / "notaskill" / "scripts" / "real2")
    (tmp_path / "linked").mkdir()
    write_skill(tmp_path / "linked")
    (tmp_path / "linked" / "assets").symlink_to(author / "variants", target_is_directory=True)
    tree = walk_tree(tmp_path)
    assert tree.skill_mds == [
        "assets/real/SKILL.md",
        "linked/SKILL.md",
        "lower/skill.md",
        "notaskill/scripts/real2/SKILL.md",
        "skill-author/SKILL.md",
        "skill-author/variants/nested/SKILL.md",
    ]
    assert "skill-author/assets" not in tree.dirs and "lower/assets" not in tree.dirs
    assert tree.links == {"linked/assets": "d"}  # seen, not followed


def test_a_folder_that_stops_being_a_skill_gets_its_resource_folders_searched(
    tmp_path: Path,
) -> None:
    write_skill(tmp_path / "kit")
    write_skill(tmp_path / "kit" / "assets" / "inside")
    assert walk_tree(tmp_path).skill_mds == ["kit/SKILL.md"]
    (tmp_path / "kit" / "SKILL.md").unlink()
    assert walk_tree(tmp_path).skill_mds == ["kit/assets/inside/SKILL.md"]
    (tmp_path / "kit" / "SKILL.md").mkdir()  # a folder named SKILL.md makes no skill
    assert walk_tree(tmp_path).skill_mds == ["kit/assets/inside/SKILL.md"]


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


def test_found_hears_every_skill_file_in_tree_order(tmp_path: Path) -> None:
    write_skill(tmp_path / "b")
    write_skill(tmp_path / "a" / "nested")
    write_skill(tmp_path / "a")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "SKILL.md").symlink_to(tmp_path / "a" / "SKILL.md")  # a linked file
    (tmp_path / "d").symlink_to(tmp_path / "b")  # a second alias: walked once
    heard: list[str] = []
    tree = walk_tree(tmp_path, found=heard.append)
    assert heard == tree.skill_mds
    assert sorted(heard) == ["a/SKILL.md", "a/nested/SKILL.md", "b/SKILL.md", "c/SKILL.md"]
