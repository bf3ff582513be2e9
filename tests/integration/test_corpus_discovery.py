"""Discovery over the real corpus (~3,200 public skills): exact counts, no crash,
every failure explained, and the snapshot cache giving the same answer as a cold scan.

The counts are pinned on purpose: a change in the parser, the validator or the walk
that moves them must be looked at, not slip through.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from skilldeck.config import load_settings
from skilldeck.skills.format import validate
from skilldeck.skills.registry import EntryStatus, SkillRegistry

pytestmark = pytest.mark.corpus

SKILL_FILES = 3222  # every SKILL.md / skill.md in the corpus
UNIQUE_NAMES = 2551  # the rest are the same name in several repositories
LENIENT_INVALID = 13  # names with a "/": SD108, a name is never a path
STRICT_VALID = 1525  # valid under the six-field spec rules
STRICT_INVALID = 1697
CORPUS = Path(
    os.environ.get(
        "SKILLDECK_CORPUS", Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
    )
)


def count_skill_files(root: Path) -> int:
    """Independent count: one per folder holding SKILL.md or skill.md."""
    return sum(
        1 for _dirpath, _dirs, files in os.walk(root) if "SKILL.md" in files or "skill.md" in files
    )


@pytest.fixture(scope="module")
def lenient(tmp_path_factory: pytest.TempPathFactory) -> SkillRegistry:
    if not CORPUS.is_dir():
        pytest.skip(f"skill corpus not found at {CORPUS}")
    home = tmp_path_factory.mktemp("corpus-home")
    settings = load_settings(home=home, workspace=home)
    return SkillRegistry.discover(settings, roots=[CORPUS], no_defaults=True, use_cache=False)


def test_walk_finds_every_skill_file(corpus: Path) -> None:
    assert count_skill_files(corpus) == SKILL_FILES


def test_every_skill_loads_leniently(lenient: SkillRegistry, corpus: Path) -> None:
    entries = lenient.entries()
    assert len(entries) == SKILL_FILES
    assert len(lenient.invalid) == LENIENT_INVALID
    assert all(d.code == "SD108" for i in lenient.invalid for d in i.diagnostics if d.is_error)
    assert lenient.diagnostics == []  # no loops, dangling links or unreadable folders
    assert len(lenient.names()) == UNIQUE_NAMES
    statuses = {status: sum(1 for e in entries if e.status is status) for status in EntryStatus}
    assert statuses[EntryStatus.ACTIVE] == UNIQUE_NAMES
    assert statuses[EntryStatus.SHADOWED] == SKILL_FILES - UNIQUE_NAMES - LENIENT_INVALID
    assert len(lenient.shadowing()) == SKILL_FILES - UNIQUE_NAMES - LENIENT_INVALID
    for skill in lenient.list():
        assert skill.name and skill.description.strip()
        assert skill.skill_md.is_file() and skill.root == corpus
    # lenient warnings (unknown fields, name/folder mismatch…) keep the skill and say where
    warned = [d for s in lenient.list() for d in s.diagnostics]
    assert warned and all(not d.is_error and d.code.startswith("SD") for d in warned)


def test_hidden_collections_are_found(lenient: SkillRegistry) -> None:
    paths = {str(e.folder) for e in lenient.entries()}
    assert any("/.curated/" in p for p in paths)
    assert any("/.system/" in p for p in paths)


def test_every_strict_failure_is_explained(corpus: Path, tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path, workspace=tmp_path, skills={"strict": True})
    strict = SkillRegistry.discover(settings, roots=[corpus], no_defaults=True, use_cache=False)
    loaded = sum(1 for e in strict.entries() if e.skill is not None)
    assert loaded == STRICT_VALID
    assert len(strict.invalid) == STRICT_INVALID
    for bad in strict.invalid:
        errors = [d for d in bad.diagnostics if d.is_error]
        assert errors, bad.skill_md
        for d in errors:
            assert d.code.startswith("SD") and d.message and d.path is not None


def test_warm_discovery_matches_cold_and_parses_nothing(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings(home=tmp_path, workspace=tmp_path)
    cold = SkillRegistry.discover(settings, roots=[corpus], no_defaults=True)
    calls: list[Path] = []
    real = validate.load_for_discovery

    def counting(path: Path, **kwargs: Any) -> Any:
        calls.append(path)
        return real(path, **kwargs)

    monkeypatch.setattr(validate, "load_for_discovery", counting)
    warm = SkillRegistry.discover(settings, roots=[corpus], no_defaults=True)
    assert calls == []
    assert warm.fingerprint == cold.fingerprint
    assert [e.to_dict() for e in warm.entries()] == [e.to_dict() for e in cold.entries()]
    for a, b in zip(cold.list(), warm.list(), strict=True):
        assert a.metadata == b.metadata and a.body_offset == b.body_offset


def test_agrees_with_skills_ref_where_it_reads(lenient: SkillRegistry) -> None:
    from skills_ref.parser import read_properties

    compared = 0
    for skill in lenient.list()[::10]:
        try:
            props = read_properties(skill.folder)
        except Exception:  # strictyaml rejects many real skills; not our concern here
            continue
        compared += 1
        assert (props.name, props.description) == (skill.name, skill.description)
    assert compared > 100


@pytest.mark.parametrize("strict", [False, True])
def test_parallel_cold_discovery_equals_one_process(
    corpus: Path, tmp_path: Path, strict: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The corpus parsed on several CPUs and in one process: the same entries,
    metadata, diagnostics and order (see ``skills/_parallel.py``). Forking is forced:
    an idle thread another test left behind would otherwise keep discovery serial."""
    import sys

    from skilldeck.skills.discovery import _forked, _parallel

    if not sys.platform.startswith("linux"):
        pytest.skip("forking workers needs Linux")
    forks: list[int] = []
    real_fork = os.fork

    def counted_fork() -> int:
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(_parallel, "can_fork", lambda: True)
    monkeypatch.setattr(_parallel, "available_cpus", lambda: 2)
    monkeypatch.setattr(_forked.os, "fork", counted_fork)

    def run(workers: int) -> SkillRegistry:
        settings = load_settings(
            home=tmp_path / str(workers),
            workspace=tmp_path,
            skills={"strict": strict, "discovery_workers": workers},
        )
        return SkillRegistry.discover(settings, roots=[corpus], no_defaults=True)

    one, several = run(1), run(2)
    assert len(forks) == 1  # one child parsed half of the corpus
    assert [e.to_dict() for e in several.entries()] == [e.to_dict() for e in one.entries()]
    assert several.fingerprint == one.fingerprint
    for a, b in zip(one.list(), several.list(), strict=True):
        assert a.metadata == b.metadata and a.body_offset == b.body_offset
        assert [d.to_dict() for d in a.diagnostics] == [d.to_dict() for d in b.diagnostics]
    bad = [(str(i.skill_md), [d.to_dict() for d in i.diagnostics]) for i in one.invalid]
    assert [(str(i.skill_md), [d.to_dict() for d in i.diagnostics]) for i in several.invalid] == bad
