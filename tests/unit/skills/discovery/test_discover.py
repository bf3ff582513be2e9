"""Discovery: roots and precedence, recursive scan, symlinks, hidden folders."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from skill_fixtures import write_skill_md as write_skill
from skilldeck.config import load_settings
from skilldeck.skills.discovery import Root as DiscoveryRoot
from skilldeck.skills.discovery import bundled_root, resolve_roots, scan_root
from skilldeck.skills.discovery.discover import discover
from skilldeck.skills.format import Discovered, validate
from skilldeck.skills.model.skill import SkillSource


def age(tree: Path) -> None:
    """Move every mtime an hour back, so the cache trusts them (see cache.RACY_NS)."""
    past = time.time() - 3600
    for dirpath, dirnames, filenames in os.walk(tree, topdown=False):
        for name in filenames + dirnames:
            os.utime(os.path.join(dirpath, name), (past, past), follow_symlinks=False)
    os.utime(tree, (past, past))


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.chdir(ws)
    return ws


def test_roots_in_precedence_order(workspace: Path, skilldeck_home: Path, tmp_path: Path) -> None:
    extra1, extra2 = tmp_path / "extra1", tmp_path / "extra2"
    settings = load_settings(skills={"dirs": [str(extra1), str(extra2)]})
    explicit = [tmp_path / "r1", tmp_path / "r2"]
    roots = resolve_roots(settings, roots=explicit)
    home = Path.home()
    assert [(r.path, r.source) for r in roots] == [
        (explicit[0], SkillSource.ROOT),
        (explicit[1], SkillSource.ROOT),
        (workspace / ".skilldeck/skills", SkillSource.WORKSPACE),
        (workspace / ".agents/skills", SkillSource.WORKSPACE),
        (workspace / ".claude/skills", SkillSource.WORKSPACE),
        (skilldeck_home / "skills", SkillSource.USER),
        (home / ".agents" / "skills", SkillSource.USER),
        (home / ".claude" / "skills", SkillSource.USER),
        (extra1, SkillSource.EXTRA),
        (extra2, SkillSource.EXTRA),
        (bundled_root(), SkillSource.BUNDLED),
    ]


def test_no_defaults_scans_only_given_roots(workspace: Path, tmp_path: Path) -> None:
    settings = load_settings()
    roots = resolve_roots(settings, roots=[tmp_path / "a"], no_defaults=True)
    assert [r.path for r in roots] == [tmp_path / "a"]


def test_same_folder_twice_is_one_root(workspace: Path) -> None:
    settings = load_settings()
    roots = resolve_roots(settings, roots=[workspace / ".claude/skills"])
    sources = [r.source for r in roots if r.path == workspace / ".claude/skills"]
    assert sources == [SkillSource.ROOT]


def test_relative_extra_dirs_are_relative_to_the_workspace(workspace: Path) -> None:
    settings = load_settings(skills={"dirs": ["team/skills"]})
    extra = [r.path for r in resolve_roots(settings) if r.source is SkillSource.EXTRA]
    assert extra == [workspace / "team/skills"]


def test_skilldeck_home_moves_the_user_root(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    write_skill(elsewhere / "skills" / "mine")
    monkeypatch.setenv("SKILLDECK_HOME", str(elsewhere))
    result = discover(load_settings(), use_cache=False)
    mine = [s for s in result.skills if s.name == "mine"]
    assert len(mine) == 1
    assert mine[0].source is SkillSource.USER
    assert mine[0].folder == elsewhere / "skills" / "mine"


def test_every_default_root_is_scanned(workspace: Path, skilldeck_home: Path) -> None:
    home = Path.home()
    write_skill(workspace / ".skilldeck/skills/a")
    write_skill(workspace / ".agents/skills/b")
    write_skill(workspace / ".claude/skills/c")
    write_skill(skilldeck_home / "skills/d")
    write_skill(home / ".agents/skills/e")
    write_skill(home / ".claude/skills/f")
    result = discover(load_settings(), use_cache=False)
    found = {s.name: s.source for s in result.skills if s.source is not SkillSource.BUNDLED}
    assert found == {
        "a": SkillSource.WORKSPACE,
        "b": SkillSource.WORKSPACE,
        "c": SkillSource.WORKSPACE,
        "d": SkillSource.USER,
        "e": SkillSource.USER,
        "f": SkillSource.USER,
    }


def test_broken_skill_is_reported_and_others_load(tmp_path: Path) -> None:
    write_skill(tmp_path / "good")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: bad\ndescription: [unclosed\n---\n", encoding="utf-8")
    nofm = tmp_path / "nofm"
    nofm.mkdir()
    (nofm / "SKILL.md").write_text("# just markdown\n", encoding="utf-8")
    scan = scan_root(DiscoveryRoot(tmp_path, SkillSource.ROOT), cache_dir=None)
    assert [s.name for s in scan.skills] == ["good"]
    invalid = {i.name: i for i in scan.invalid}
    assert sorted(invalid) == ["bad", "nofm"]
    assert invalid["bad"].diagnostics[0].code == "SD003"
    assert invalid["bad"].diagnostics[0].line in (3, 4)  # where libyaml notices
    assert invalid["nofm"].diagnostics[0].code == "SD001"
    assert invalid["bad"].skill_md == bad / "SKILL.md"


def test_missing_explicit_root_is_a_diagnostic(tmp_path: Path) -> None:
    scan = scan_root(
        DiscoveryRoot(tmp_path / "nope", SkillSource.ROOT, explicit=True), cache_dir=None
    )
    assert [(d.code, d.is_error) for d in scan.diagnostics] == [("SD204", True)]
    quiet = scan_root(DiscoveryRoot(tmp_path / "nope", SkillSource.USER), cache_dir=None)
    assert quiet.diagnostics == []


def test_nested_roots_count_a_skill_once(workspace: Path, tmp_path: Path) -> None:
    write_skill(workspace / ".claude" / "skills" / "shared")
    settings = load_settings()
    result = discover(settings, roots=[workspace], use_cache=False)
    shared = [s for s in result.skills if s.name == "shared"]
    assert len(shared) == 1
    assert shared[0].source is SkillSource.ROOT


def test_bodies_are_not_read_during_discovery(tmp_path: Path) -> None:
    md = write_skill(tmp_path / "lazy")
    scan = scan_root(DiscoveryRoot(tmp_path, SkillSource.ROOT), cache_dir=None)
    [skill] = scan.skills
    assert skill._body is None
    md.write_text(md.read_text(encoding="utf-8").replace("# Body", "# Changed"), encoding="utf-8")
    assert skill.body == "# Changed"


def test_bundled_root_is_inside_the_package() -> None:
    assert bundled_root().parts[-3:] == ("skilldeck", "bundled", "skills")


def test_collector_state_is_restored(tmp_path: Path) -> None:
    import gc

    write_skill(tmp_path / "x")
    settings = load_settings()
    assert gc.isenabled()
    discover(settings, roots=[tmp_path], no_defaults=True, use_cache=False)
    assert gc.isenabled()
    gc.disable()
    try:
        discover(settings, roots=[tmp_path], no_defaults=True, use_cache=False)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_parse_for_discovery_is_one_named_shape(tmp_path: Path) -> None:
    """``Discovered`` is what discovery gets for a SKILL.md, loaded or not: named
    fields, still unpacking as the four-tuple the snapshot code reads."""
    good = tmp_path / "good"
    good.mkdir()
    (good / "SKILL.md").write_text("---\nname: good\ndescription: Fine.\n---\nBody\n", "utf-8")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: [oops\n---\n", "utf-8")
    options = {"strict": False, "source": SkillSource.ROOT, "root": tmp_path, "has_code": False}
    loaded = validate.load_for_discovery(str(good / "SKILL.md"), **options)
    broken = validate.load_for_discovery(str(bad / "SKILL.md"), **options)
    assert isinstance(loaded, Discovered) and isinstance(broken, Discovered)
    assert loaded.skill is not None and loaded.skill.name == "good"
    assert loaded.declared == "prompt" and loaded.read_at is not None
    skill, rows, declared, read_at = broken
    assert skill is None and declared is None and read_at is None
    assert rows and rows[0][3] == "error"
