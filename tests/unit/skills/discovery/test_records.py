"""A snapshot record comes back as one of discovery's two shapes: a ``Skill`` for a
SKILL.md that loaded, an ``InvalidSkill`` (with its diagnostics) for one that did
not, and None for a record that cannot be used (the file is then parsed again)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from skill_fixtures import write_skill_md
from skilldeck.skills.discovery import InvalidSkill, Root, RootScan, cache, scan_root
from skilldeck.skills.discovery.records import skill_from_record
from skilldeck.skills.model.skill import Skill, SkillKind, SkillSource


def _aged_tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    write_skill_md(root / "good", None, "Does things.", body="Body")
    broken = root / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: [oops\n---\n", encoding="utf-8")
    past = time.time() - 3600
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames + dirnames:
            os.utime(os.path.join(dirpath, name), (past, past))
    os.utime(root, (past, past))
    return root


def _scan(root: Path, cache_dir: Path) -> RootScan:
    return scan_root(Root(root, SkillSource.ROOT), cache_dir=cache_dir)


def test_stored_records_come_back_as_a_skill_or_an_invalid_skill(tmp_path: Path) -> None:
    root, cache_dir = _aged_tree(tmp_path), tmp_path / "cache"
    cold = _scan(root, cache_dir)
    snapshot = cache.load_snapshot(cache_dir, root, strict=False)
    assert snapshot is not None
    records = snapshot.records
    prefix = str(root) + os.sep

    good = skill_from_record(
        records["good/SKILL.md"],
        prefix + "good/SKILL.md",
        source=SkillSource.ROOT,
        root=root,
        has_code=False,
    )
    assert isinstance(good, Skill)
    assert (good.name, good.kind) == ("good", SkillKind.PROMPT)

    broken = skill_from_record(
        records["broken/SKILL.md"],
        prefix + "broken/SKILL.md",
        source=SkillSource.ROOT,
        root=root,
        has_code=False,
    )
    assert isinstance(broken, InvalidSkill)
    assert broken == cold.invalid[0]
    assert broken.diagnostics and broken.skill_md == root / "broken" / "SKILL.md"


def test_an_unusable_record_is_none(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for rec in ([1, 2, None, 0, None, [], "x"], [1, 2, {}, "zero", "prompt", None, "x"], []):
        assert (
            skill_from_record(rec, "x/SKILL.md", source=SkillSource.ROOT, root=root, has_code=False)
            is None
        )


def test_a_scan_adds_each_outcome_where_it_belongs(tmp_path: Path) -> None:
    scan = RootScan(Root(tmp_path, SkillSource.ROOT))
    md = str(tmp_path / "bad" / "SKILL.md")
    bad = InvalidSkill("bad", Path(md).parent, Path(md), SkillSource.ROOT, tmp_path, [])
    scan.add(bad)
    assert scan.invalid == [bad] and scan.skills == []
