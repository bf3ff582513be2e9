"""Lazily built skills (cold discovery, snapshot) behave like eagerly loaded ones."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from skilldeck.config import load_settings
from skilldeck.skills.discovery import Root, cache, scan_root
from skilldeck.skills.format import load_skill
from skilldeck.skills.model.skill import Skill, SkillKind, SkillSource
from skilldeck.skills.registry import SkillRegistry

FRONTMATTERS = {
    "plain": "name: plain\ndescription: Plain skill.\n",
    "rich": (
        "name: rich\ndescription: 'Rich: quoted.'\nversion: 1.10\nlicense: MIT\n"
        "allowed-tools: Read, Grep\nmetadata:\n  author: me\n  version: '2'\n"
        "requires:\n  bins: [git]\n  mcp: [x]\ntags: [a, b]\nfoo: bar\n"
    ),
    "script": "name: script\ndescription: Runs.\nentrypoint: scripts/run.py\n",
    "meta-entry": "name: meta-entry\ndescription: Runs.\nmetadata:\n  entrypoint: run.py\n",
    "Mismatch_Name": "name: other\ndescription: d\ncompatibility: Linux only\n",
    "crlf": "name: crlf\r\ndescription: Windows.\r\nuser-invocable: false\r\n",
    "block": "name: block\ndescription: >-\n  Folded\n  text.\ntimeout: 30\nmax-turns: 4\n",
    "code": "name: code\ndescription: Has skill.py.\n",
}


def age(top: Path) -> None:
    past = time.time() - 3600
    for dirpath, dirnames, filenames in os.walk(top, topdown=False):
        for name in filenames + dirnames:
            os.utime(os.path.join(dirpath, name), (past, past), follow_symlinks=False)
    os.utime(top, (past, past))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for folder, text in FRONTMATTERS.items():
        (root / folder).mkdir(parents=True)
        newline = "\r\n" if folder == "crlf" else "\n"
        (root / folder / "SKILL.md").write_bytes(
            f"---{newline}{text}---{newline}{newline}Body of {folder}.{newline}".encode()
        )
    (root / "script" / "scripts").mkdir()
    (root / "script" / "scripts" / "run.py").write_text("print(1)\n", encoding="utf-8")
    (root / "code" / "skill.py").write_text("# code\n", encoding="utf-8")
    age(root)
    return root


def same(a: Skill, b: Skill) -> None:
    """``a`` (lazy) tells what ``b`` (eager) does; gating first, before ``a`` builds
    its metadata model."""
    meta = b.metadata
    gating = a.gating_fields()
    assert (gating.requires_tools, gating.requires_bins, gating.requires_env) == (
        meta.requires_tools,
        meta.requires_bins,
        meta.requires_env,
    )
    assert gating.compatibility == meta.compatibility
    assert a.may_be_gated() == b.may_be_gated()
    assert (a.name, a.description, a.version, a.kind) == (b.name, b.description, b.version, b.kind)
    assert a.diagnostic_rows() == b.diagnostic_rows()
    assert a.metadata == meta
    assert (a.folder, a.skill_md, a.body_offset, a.body) == (
        b.folder,
        b.skill_md,
        b.body_offset,
        b.body,
    )
    assert a.diagnostics == b.diagnostics


def test_lazy_load_matches_eager_load(tree: Path) -> None:
    for folder in FRONTMATTERS:
        eager, eager_diags = load_skill(tree / folder)
        lazy, lazy_diags = load_skill(tree / folder / "SKILL.md", lazy=True)
        assert eager is not None and lazy is not None, folder
        assert lazy_diags == eager_diags
        same(lazy, eager)
    assert load_skill(tree / "code", lazy=True)[0].kind is SkillKind.CODE  # type: ignore[union-attr]
    assert load_skill(tree / "script", lazy=True)[0].kind is SkillKind.SCRIPT  # type: ignore[union-attr]


def test_cold_and_warm_discovery_match_eager_loads(tree: Path, tmp_path: Path) -> None:
    root = Root(tree, SkillSource.ROOT)
    cold = scan_root(root, cache_dir=tmp_path / "cache")
    warm = scan_root(root, cache_dir=tmp_path / "cache")
    assert warm.tree_from_cache and warm.parsed == 0
    assert [s.name for s in cold.skills] == [s.name for s in warm.skills]
    for a, b in zip(cold.skills, warm.skills, strict=True):
        eager, _ = load_skill(a.skill_md, source=SkillSource.ROOT, root=tree)
        assert eager is not None
        same(a, eager)
        same(b, eager)
        assert a.source is b.source is SkillSource.ROOT and a.root == b.root == tree
    assert cold.files == warm.files


def test_snapshot_whose_blob_is_gone_is_rebuilt(tree: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    root = Root(tree, SkillSource.ROOT)
    scan_root(root, cache_dir=cache_dir)
    [blob] = (cache_dir / "discovery").glob("*.blob")
    blob.unlink()
    assert scan_root(root, cache_dir=cache_dir).parsed == len(FRONTMATTERS)
    assert scan_root(root, cache_dir=cache_dir).parsed == 0


def test_damaged_blob_chunks_read_the_file_again(tree: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    root = Root(tree, SkillSource.ROOT)
    scan_root(root, cache_dir=cache_dir)
    [blob] = (cache_dir / "discovery").glob("*.blob")
    blob.write_bytes(b"\xff" * blob.stat().st_size)  # same size, nothing decodes
    eager, _ = load_skill(tree / "rich", source=SkillSource.ROOT, root=tree)
    assert eager is not None
    warm = scan_root(root, cache_dir=cache_dir)
    assert warm.parsed == 0  # the index still says nothing changed
    same(next(s for s in warm.skills if s.name == "rich"), eager)


def test_a_new_snapshot_replaces_the_old_blob(tree: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    root = Root(tree, SkillSource.ROOT)
    scan_root(root, cache_dir=cache_dir)
    [old] = (cache_dir / "discovery").glob("*.blob")
    (tree / "plain" / "SKILL.md").write_text(
        "---\nname: plain\ndescription: Changed.\n---\n", encoding="utf-8"
    )
    age(tree / "plain" / "SKILL.md")
    changed = scan_root(root, cache_dir=cache_dir)
    assert changed.parsed == 1
    blobs = set((cache_dir / "discovery").glob("*.blob"))
    assert old in blobs and len(blobs) == 2  # a recent blob may be another process's
    past = time.time() - cache.STALE_BLOB_SECONDS - 5
    os.utime(old, (past, past))
    (tree / "plain" / "SKILL.md").write_text(
        "---\nname: plain\ndescription: Changed again.\n---\n", encoding="utf-8"
    )
    age(tree / "plain" / "SKILL.md")
    scan_root(root, cache_dir=cache_dir)
    assert old not in set((cache_dir / "discovery").glob("*.blob"))
    again = scan_root(root, cache_dir=cache_dir)
    assert again.parsed == 0
    assert next(s for s in again.skills if s.name == "plain").description == "Changed again."


def test_file_removed_without_touching_its_folder(tree: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    root = Root(tree, SkillSource.ROOT)
    scan_root(root, cache_dir=cache_dir)
    folder = tree / "plain"
    st = folder.stat()
    (folder / "SKILL.md").unlink()
    os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns))  # as if the listing never changed
    warm = scan_root(root, cache_dir=cache_dir)
    assert "plain" not in [s.name for s in warm.skills]
    assert all(not path.endswith("plain/SKILL.md") for path, _, _ in warm.files)


def test_active_rows_are_the_active_entries(tree: Path, tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path / "home", workspace=tmp_path)
    settings.skills.disabled = ["block"]
    other = tmp_path / "other"
    (other / "plain").mkdir(parents=True)
    (other / "plain" / "SKILL.md").write_text(
        "---\nname: plain\ndescription: Shadowed.\n---\n", encoding="utf-8"
    )
    for _ in range(2):  # cold, then warm
        registry = SkillRegistry.discover(settings, roots=[tree, other], no_defaults=True)
        eager, _ = load_skill(tree / "rich")
        assert eager is not None
        registry.register(eager)
        entries = [e.to_dict() for e in registry.entries()]
        assert registry.active_rows() == [e for e in entries if e["status"] == "active"]
        statuses = {(e["name"], e["status"]) for e in entries}
        assert {("block", "disabled"), ("plain", "shadowed"), ("rich", "shadowed")} <= statuses
        assert any(e["warnings"] for e in entries if e["status"] == "active")


def test_fingerprint_same_cold_and_warm_and_follows_edits(tree: Path, tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path / "home", workspace=tmp_path)
    cold = SkillRegistry.discover(settings, roots=[tree], no_defaults=True)
    warm = SkillRegistry.discover(settings, roots=[tree], no_defaults=True)
    assert cold.fingerprint == warm.fingerprint
    (tree / "plain" / "SKILL.md").write_text(
        "---\nname: plain\ndescription: Edited.\n---\n", encoding="utf-8"
    )
    assert SkillRegistry.discover(settings, roots=[tree], no_defaults=True).fingerprint != (
        cold.fingerprint
    )
