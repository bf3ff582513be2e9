"""A bad SKILL.md never stops discovery of the others, and each one is reported.

A tree mixing hostile and good skills is discovered: every good skill loads, every
bad one shows up in ``registry.entries()`` as ``invalid`` with its SKILL.md path and
a diagnostic code. Special files (FIFOs, devices, link loops) must not hang the scan.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hardening_helpers import (
    HOSTILE_FRONTMATTER,
    good_skill,
    run_with_deadline,
    unblock_fifo,
    write_skill,
)

from skilldeck.config import load_settings
from skilldeck.skills.format import load_skill
from skilldeck.skills.registry import EntryStatus, SkillRegistry

GOOD = [f"good-{i}" for i in range(5)]
#: hostile frontmatters that still load in lenient mode (name falls back to the folder,
#: a second `---` starts the body, odd values are warnings), so are not "invalid"
LOADS_LENIENTLY = {"python-tag", "python-name", "huge-int", "unicode-controls", "tab-indent",
                   "multi-doc"}  # fmt: skip
#: hostile files that must each be reported as invalid (name → raw SKILL.md bytes)
BAD_FILES: dict[str, bytes] = {
    "no-frontmatter": b"# Just markdown\n",
    "unclosed": b"---\nname: unclosed\ndescription: never closed\n",
    "empty": b"",
    "binary-junk": bytes(range(256)) * 8,
    "nul-bytes": b"---\nname: nul\x00\ndescription: x\n---\n",
    "latin1": b"---\nname: latin1\ndescription: caf\xe9\n---\n",
    "too-large": b"---\ndescription: " + b"a" * (2 * 1024 * 1024) + b"\n---\n",
    "no-description": b"---\nname: no-description\n---\nbody\n",
    **{
        f"yaml-{name}": f"---\n{text}---\nbody\n".encode()
        for name, text in HOSTILE_FRONTMATTER.items()
        if name not in LOADS_LENIENTLY
    },
}


def _tree(root: Path) -> None:
    for name in GOOD:
        good_skill(root, name)
    for name, raw in BAD_FILES.items():
        write_skill(root / name, raw)


def test_bad_skills_are_reported_and_never_stop_the_good_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "root"
    _tree(root)
    settings = load_settings(workspace=tmp_path, home=tmp_path / "home")
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True, use_cache=False)
    assert sorted(s.name for s in registry.list()) == GOOD
    invalid = {e.folder.name: e for e in registry.entries() if e.status is EntryStatus.INVALID}
    assert sorted(invalid) == sorted(BAD_FILES)
    for name, entry in invalid.items():
        assert entry.skill_md == root / name / "SKILL.md", name
        assert entry.errors, name
        assert all(d.code.startswith("SD") for d in entry.errors), name
    assert not (tmp_path / "PWNED").exists()


def test_discovery_with_the_cache_reports_the_same(tmp_path: Path) -> None:
    """The snapshot cache must remember invalid skills, not silently drop them."""
    root = tmp_path / "root"
    _tree(root)
    settings = load_settings(workspace=tmp_path, home=tmp_path / "home")
    for _ in range(2):  # cold, then from the snapshot
        registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True)
        assert sorted(s.name for s in registry.list()) == GOOD
        invalid = [e for e in registry.entries() if e.status is EntryStatus.INVALID]
        assert len(invalid) == len(BAD_FILES)


def test_special_files_do_not_hang_discovery(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for name in GOOD:
        good_skill(root, name)
    (root / "fifo").mkdir()
    os.mkfifo(root / "fifo" / "SKILL.md")
    (root / "zero").mkdir()
    (root / "zero" / "SKILL.md").symlink_to("/dev/zero")
    (root / "loop").mkdir()
    (root / "loop" / "SKILL.md").symlink_to(root / "loop" / "SKILL.md")
    (root / "dir-named-skill-md" / "SKILL.md").mkdir(parents=True)
    (root / "cycle").mkdir()
    (root / "cycle" / "back").symlink_to(root)
    settings = load_settings(workspace=tmp_path, home=tmp_path / "home")

    def scan() -> list[str]:
        registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True, use_cache=False)
        return sorted(s.name for s in registry.list())

    try:
        finished, names = run_with_deadline(scan, 20)
    finally:
        unblock_fifo(root / "fifo" / "SKILL.md")
    assert finished, "discovery hung on a special file"
    assert names == GOOD


def test_load_skill_on_a_fifo_does_not_hang(tmp_path: Path) -> None:
    folder = tmp_path / "fifo-skill"
    folder.mkdir()
    fifo = folder / "SKILL.md"
    os.mkfifo(fifo)
    try:
        finished, _ = run_with_deadline(lambda: load_skill(fifo), 1.5)
    finally:
        unblock_fifo(fifo)
    assert finished, "load_skill blocked on a FIFO"


def test_discovery_survives_a_long_entrypoint(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for name in GOOD:
        good_skill(root, name)
    front = "name: long-ep\ndescription: d\nentrypoint: " + "x" * 300
    write_skill(root / "long-ep", f"---\n{front}\n---\n")
    settings = load_settings(workspace=tmp_path, home=tmp_path / "home")
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True, use_cache=False)
    assert sorted(s.name for s in registry.list())[: len(GOOD)] == GOOD
