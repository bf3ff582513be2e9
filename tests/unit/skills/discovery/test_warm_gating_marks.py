"""Which warm-built skills discovery marks for gating (``may_be_gated``).

A prompt skill whose only gating field is ``dependencies`` (183 corpus skills list
their requirements for the reader) is never gated, so a warm discovery does not
mark it and the registry's gating decodes none of them; a code skill with the same
field, or a skill that sets another gating field, stays marked. Checked on both warm
paths: all rows at once, and row by row (a broken skill in the tree)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from skill_fixtures import age_tree
from skilldeck.skills.discovery import Root, RootScan, scan_root
from skilldeck.skills.model.skill import SkillKind, SkillSource


def _skill(root: Path, name: str, extra: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Skill {name}.\n{extra}---\n\nBody\n", encoding="utf-8"
    )
    return folder


def _scan(root: Path, cache: Path) -> RootScan:
    return scan_root(Root(root, SkillSource.ROOT), cache_dir=cache, strict=False)


def _marks(scan: RootScan) -> dict[str, bool]:
    return {s.name: s.may_be_gated() for s in scan.skills}


@pytest.fixture(params=["bulk", "row-by-row"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    root = tmp_path / "root"
    _skill(root, "a-plain")
    _skill(root, "b-reader", "dependencies:\n  - requests\n")
    _skill(root, "c-coded", "dependencies:\n  - requests\n")
    (root / "c-coded" / "skill.py").write_text("# code\n", encoding="utf-8")
    _skill(root, "d-compat", "compatibility: needs a 64-bit CPU\n")
    _skill(root, "e-both", "dependencies:\n  - requests\nrequires-env:\n  - TOKEN\n")
    if request.param == "row-by-row":
        _skill(root, "f-broken", "name: [oops\n")
    age_tree(root)
    return root


def test_warm_marks_only_skills_gating_can_change(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cold = _scan(root, cache)
    warm = _scan(root, cache)
    assert warm.parsed == 0
    assert [s.name for s in warm.skills] == [s.name for s in cold.skills]
    assert _marks(warm) == {
        "a-plain": False,
        "b-reader": False,  # prompt + dependencies only: never gated, never decoded
        "c-coded": True,  # a code skill's dependencies do gate
        "d-compat": True,
        "e-both": True,
    }
    reader = next(s for s in warm.skills if s.name == "b-reader")
    assert reader.field_values()["dependencies"]  # the field itself is still there


def test_a_skill_py_added_later_marks_the_reader_again(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _scan(root, cache)
    (root / "b-reader" / "skill.py").write_text("# code\n", encoding="utf-8")
    age_tree(root)
    warm = _scan(root, cache)
    reader = next(s for s in warm.skills if s.name == "b-reader")
    assert reader.kind is SkillKind.CODE and reader.may_be_gated()
    again = next(s for s in _scan(root, cache).skills if s.name == "b-reader")
    assert again.kind is SkillKind.CODE and again.may_be_gated()


def test_a_broken_skill_keeps_the_warm_path_whole(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Skills that did not load are rebuilt from their stored diagnostics beside the
    all-rows-at-once path; the row-by-row loop runs only when a file changed."""
    from skilldeck.skills.discovery import warm as warm_path

    cache = tmp_path / "cache"
    cold = _scan(root, cache)

    def row_by_row(*args: object) -> None:
        raise AssertionError("an unchanged tree went row by row")

    monkeypatch.setattr(warm_path, "_build_run", row_by_row)
    warm = _scan(root, cache)
    assert warm.parsed == 0
    assert [s.name for s in warm.skills] == [s.name for s in cold.skills]
    assert warm.invalid == cold.invalid
    assert warm.files == cold.files
    monkeypatch.undo()
    changed_md = root / "a-plain" / "SKILL.md"
    changed_md.write_text("---\nname: a-plain\ndescription: New.\n---\n\nBody\n", encoding="utf-8")
    past = time.time() - 600
    os.utime(changed_md, (past, past))
    changed = _scan(root, cache)
    assert changed.parsed == 1
    assert [s.name for s in changed.skills] == [s.name for s in cold.skills]
    assert changed.invalid == cold.invalid


def test_marks_survive_a_snapshot_written_again_from_stored_records(
    root: Path, tmp_path: Path
) -> None:
    """A changed file makes the warm path write the snapshot again, its unchanged
    rows from their stored (still encoded) records: the reader stays unmarked."""
    cache = tmp_path / "cache"
    _scan(root, cache)
    changed_md = root / "a-plain" / "SKILL.md"
    changed_md.write_text("---\nname: a-plain\ndescription: New.\n---\n\nBody\n", encoding="utf-8")
    past = time.time() - 600
    os.utime(changed_md, (past, past))
    assert _scan(root, cache).parsed == 1
    again = _scan(root, cache)
    assert again.parsed == 0
    assert _marks(again) == {
        "a-plain": False,
        "b-reader": False,
        "c-coded": True,
        "d-compat": True,
        "e-both": True,
    }
