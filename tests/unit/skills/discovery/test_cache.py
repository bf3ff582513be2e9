"""The discovery snapshot cache: warm path parses nothing, changes are noticed."""

from __future__ import annotations

import marshal
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skill_fixtures import write_skill_md
from skilldeck.skills.discovery import Root, RootScan, cache, records, scan_root
from skilldeck.skills.discovery._sealed import seal, unseal
from skilldeck.skills.format import validate
from skilldeck.skills.model.skill import SkillKind, SkillSource


def write_skill(folder: Path, name: str | None = None, description: str = "Does things.") -> Path:
    return write_skill_md(folder, name, description, body="Body")


def age(*paths: Path, seconds: float = 3600) -> None:
    """Push mtimes into the past so the cache trusts them (fresh ones are 'racy')."""
    past = time.time() - seconds
    for top in paths:
        for dirpath, dirnames, filenames in os.walk(top, topdown=False):
            for name in filenames + dirnames:
                os.utime(os.path.join(dirpath, name), (past, past), follow_symlinks=False)
        os.utime(top, (past, past))


class Counter:
    def __init__(self) -> None:
        self.paths: list[Path] = []


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Count SKILL.md loads (and YAML parses) on their way through the validator."""
    counter = Counter()
    real = validate.load_for_discovery

    def counting(path: Path, **kwargs: Any) -> Any:
        counter.paths.append(Path(path))
        return real(path, **kwargs)

    monkeypatch.setattr(validate, "load_for_discovery", counting)
    return counter


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    write_skill(root / "alpha")
    write_skill(root / "beta")
    write_skill(root / "beta" / "nested")
    broken = root / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: [oops\n---\n", encoding="utf-8")
    age(root)
    return root


def scan(root: Path, cache_dir: Path, *, strict: bool = False) -> RootScan:
    return scan_root(Root(root, SkillSource.ROOT), cache_dir=cache_dir, strict=strict)


def names(result: RootScan) -> list[str]:
    return [s.name for s in result.skills]


def test_warm_scan_parses_nothing(tree: Path, tmp_path: Path, parses: Counter) -> None:
    cache_dir = tmp_path / "cache"
    cold = scan(tree, cache_dir)
    assert cold.parsed == 4 and len(parses.paths) == 4
    assert not cold.tree_from_cache
    parses.paths.clear()
    warm = scan(tree, cache_dir)
    assert parses.paths == []
    assert warm.parsed == 0 and warm.tree_from_cache
    assert names(warm) == names(cold) == ["alpha", "beta", "nested"]
    assert [i.name for i in warm.invalid] == ["broken"]
    assert warm.invalid[0].diagnostics == cold.invalid[0].diagnostics
    for a, b in zip(cold.skills, warm.skills, strict=True):
        assert a.metadata == b.metadata
        assert (a.folder, a.skill_md, a.body_offset, a.kind) == (
            b.folder,
            b.skill_md,
            b.body_offset,
            b.kind,
        )
        assert a.body == b.body


def test_warm_path_does_not_touch_yaml(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_dir = tmp_path / "cache"
    scan(tree, cache_dir)
    from skilldeck.skills.format import parse

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("YAML parsed on the warm path")

    monkeypatch.setattr(parse, "parse_skill_md", boom)
    monkeypatch.setattr(validate, "parse_skill_md", boom, raising=False)
    assert names(scan(tree, cache_dir)) == ["alpha", "beta", "nested"]


def test_changed_file_is_reread(tree: Path, tmp_path: Path, parses: Counter) -> None:
    cache_dir = tmp_path / "cache"
    scan(tree, cache_dir)
    write_skill(tree / "alpha", description="A new and longer description.")
    parses.paths.clear()
    result = scan(tree, cache_dir)
    assert parses.paths == [tree / "alpha" / "SKILL.md"]
    assert result.skills[0].description == "A new and longer description."


def test_same_size_change_is_noticed_by_mtime(tree: Path, tmp_path: Path, parses: Counter) -> None:
    cache_dir = tmp_path / "cache"
    scan(tree, cache_dir)
    md = tree / "beta" / "SKILL.md"
    md.write_text(md.read_text(encoding="utf-8").replace("Does", "Dies"), encoding="utf-8")
    age(md, seconds=1800)  # still old, but a different mtime than the snapshot's
    parses.paths.clear()
    result = scan(tree, cache_dir)
    assert parses.paths == [md]
    assert result.skills[1].description == "Dies things."


def test_added_and_removed_skills_are_detected(tree: Path, tmp_path: Path, parses: Counter) -> None:
    cache_dir = tmp_path / "cache"
    scan(tree, cache_dir)
    write_skill(tree / "gamma")
    for f in (tree / "alpha").iterdir():
        f.unlink()
    (tree / "alpha").rmdir()
    parses.paths.clear()
    result = scan(tree, cache_dir)
    assert parses.paths == [tree / "gamma" / "SKILL.md"]  # the others come from the cache
    assert names(result) == ["beta", "nested", "gamma"]  # depth-first, sorted


def test_a_folder_becoming_a_skill_hides_its_resource_folders(
    tmp_path: Path, parses: Counter
) -> None:
    """The warm path follows the walk's rule: once ``kit`` holds a SKILL.md, what sits
    in its ``assets/`` is kit's, not a skill; once it no longer does, it is again."""
    root, cache_dir = tmp_path / "root", tmp_path / "cache"
    write_skill(root / "kit" / "assets" / "inside")
    age(root)
    assert names(scan(root, cache_dir)) == ["inside"]
    write_skill(root / "kit")
    age(root, seconds=3000)  # an older snapshot's mtimes must not match by accident
    parses.paths.clear()
    assert names(scan(root, cache_dir)) == ["kit"]
    assert parses.paths == [root / "kit" / "SKILL.md"]
    assert names(scan(root, cache_dir)) == ["kit"]  # and warm from the new snapshot
    (root / "kit" / "SKILL.md").unlink()
    age(root, seconds=2400)
    assert names(scan(root, cache_dir)) == ["inside"]


def test_fresh_timestamps_are_rechecked(tmp_path: Path, parses: Counter) -> None:
    root = tmp_path / "root"
    write_skill(root / "fresh")  # written just now: within the racy window
    cache_dir = tmp_path / "cache"
    scan(root, cache_dir)
    parses.paths.clear()
    again = scan(root, cache_dir)
    assert parses.paths == [root / "fresh" / "SKILL.md"]
    assert not again.tree_from_cache
    age(root)
    scan(root, cache_dir)
    parses.paths.clear()
    assert scan(root, cache_dir).parsed == 0 and parses.paths == []


def test_corrupt_cache_is_ignored_and_rebuilt(tree: Path, tmp_path: Path, parses: Counter) -> None:
    cache_dir = tmp_path / "cache"
    scan(tree, cache_dir)
    path = cache.snapshot_path(cache_dir, tree)
    for garbage in (
        b"{not marshal",
        b"[]",
        marshal.dumps({"v": 1}),
        b"\x00\xff",
        seal(b"[\xff\xff\xff\x7f")[:-2],  # truncated
        seal(marshal.dumps({"v": 1}))[:-1] + b"!",  # one byte changed
    ):
        path.write_bytes(garbage)
        parses.paths.clear()
        result = scan(tree, cache_dir)
        assert len(parses.paths) == 4
        assert names(result) == ["alpha", "beta", "nested"]
    assert marshal.loads(unseal(path.read_bytes()))["v"]  # rebuilt


def test_format_change_invalidates(
    tree: Path, tmp_path: Path, parses: Counter, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_dir = tmp_path / "cache"
    scan(tree, cache_dir)
    monkeypatch.setattr(cache, "FORMAT", cache.FORMAT + 1)
    parses.paths.clear()
    scan(tree, cache_dir)
    assert len(parses.paths) == 4


def test_version_change_invalidates(
    tree: Path, tmp_path: Path, parses: Counter, monkeypatch: pytest.MonkeyPatch
) -> None:
    import skilldeck

    cache_dir = tmp_path / "cache"
    scan(tree, cache_dir)
    monkeypatch.setattr(skilldeck, "__version__", "999.0")
    parses.paths.clear()
    scan(tree, cache_dir)
    assert len(parses.paths) == 4


def test_strict_and_lenient_snapshots_do_not_mix(
    tree: Path, tmp_path: Path, parses: Counter
) -> None:
    cache_dir = tmp_path / "cache"
    scan(tree, cache_dir)
    parses.paths.clear()
    scan(tree, cache_dir, strict=True)
    assert len(parses.paths) == 4


def test_dangling_link_that_starts_resolving_is_noticed(tmp_path: Path, parses: Counter) -> None:
    root = tmp_path / "root"
    write_skill(root / "a")
    target = tmp_path / "later"
    os.symlink(target, root / "link")
    age(root)
    cache_dir = tmp_path / "cache"
    first = scan(root, cache_dir)
    assert [d.code for d in first.diagnostics] == ["SD202"]
    warm = scan(root, cache_dir)
    assert warm.tree_from_cache and [d.code for d in warm.diagnostics] == ["SD202"]
    write_skill(target)
    age(target)
    result = scan(root, cache_dir)
    assert names(result) == ["a", "later"]
    assert result.diagnostics == []


def test_adding_skill_py_changes_the_kind(tree: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    assert scan(tree, cache_dir).skills[0].kind is SkillKind.PROMPT
    (tree / "alpha" / "skill.py").write_text("# code\n", encoding="utf-8")
    age(tree)
    alpha = scan(tree, cache_dir).skills[0]
    assert alpha.name == "alpha" and alpha.kind is SkillKind.CODE


def test_no_cache_dir_writes_nothing(tree: Path, tmp_path: Path) -> None:
    result = scan_root(Root(tree, SkillSource.ROOT), cache_dir=None)
    assert names(result) == ["alpha", "beta", "nested"]
    assert not (tmp_path / "cache").exists()


def test_snapshot_is_per_root(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    write_skill(one / "a")
    write_skill(two / "b")
    cache_dir = tmp_path / "cache"
    scan(one, cache_dir)
    scan(two, cache_dir)
    assert cache.snapshot_path(cache_dir, one) != cache.snapshot_path(cache_dir, two)
    assert len(list((cache_dir / "discovery").glob("*.snapshot"))) == 2


def test_records_that_marshal_cannot_hold_are_parsed_each_time(
    tmp_path: Path, parses: Counter, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    write_skill(root / "a")
    age(root)
    original: Callable[..., Any] = records.record_from_load

    def with_object(*args: Any, **kwargs: Any) -> Any:
        rec = original(*args, **kwargs)
        rec[2] = {**rec[2], "extra": {"odd": object()}}
        return rec

    monkeypatch.setattr(records, "record_from_load", with_object)
    cache_dir = tmp_path / "cache"
    scan(root, cache_dir)
    parses.paths.clear()
    assert names(scan(root, cache_dir)) == ["a"]
    assert len(parses.paths) == 1


def test_undecodable_folder_names_round_trip(tmp_path: Path, parses: Counter) -> None:
    root = tmp_path / "root"
    root.mkdir()
    odd = os.fsencode(root) + b"/caf\xe9-skill"  # Latin-1 bytes: not UTF-8
    try:
        os.mkdir(odd)
    except (OSError, UnicodeError):
        pytest.skip("filesystem refuses undecodable names")
    folder = Path(os.fsdecode(odd))
    write_skill(folder, name="cafe-skill")
    age(root)
    cache_dir = tmp_path / "cache"
    cold = scan(root, cache_dir)
    parses.paths.clear()
    warm = scan(root, cache_dir)
    assert parses.paths == [] and names(warm) == names(cold) == ["cafe-skill"]
    assert warm.skills[0].folder == folder


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d.update(dirs={"a": 1}),
        lambda d: d.update(dir_mtimes=[1]),
        lambda d: d["dir_mtimes"].__setitem__(0, "old"),
        lambda d: d.update(links="x"),
        lambda d: d.update(cols=[5]),
        lambda d: d.update(cols=d["cols"][:3]),
        lambda d: d["cols"][0].__setitem__(0, 5),
        lambda d: d["cols"][1].__setitem__(0, "old"),
        lambda d: d["cols"][3].__setitem__(0, "not metadata"),
        lambda d: d["cols"][6].__setitem__(0, [["SD1"]]),
        lambda d: d["cols"][7].pop(),
        lambda d: d.update(diags=[[1]]),
    ],
)
def test_well_formed_index_with_wrong_shapes_is_rebuilt(
    tree: Path, tmp_path: Path, parses: Counter, damage: Callable[[dict[str, Any]], None]
) -> None:
    cache_dir = tmp_path / "cache"
    scan(tree, cache_dir)
    path = cache.snapshot_path(cache_dir, tree)
    data = marshal.loads(unseal(path.read_bytes()))
    damage(data)
    path.write_bytes(seal(marshal.dumps(data)))
    parses.paths.clear()
    result = scan(tree, cache_dir)
    assert names(result) == ["alpha", "beta", "nested"]
    assert [i.name for i in result.invalid] == ["broken"]


def test_a_damaged_length_never_reaches_marshal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A list header claiming two billion items costs marshal seconds to refuse;
    the checksum refuses it first."""
    sealed = seal(marshal.dumps([1, 2, 3]))
    damaged = sealed[:8] + b"[\xff\xff\xff\x7f" + sealed[13:]
    with pytest.raises(ValueError, match="checksum"):
        unseal(damaged)
    assert marshal.loads(unseal(sealed)) == [1, 2, 3]


def test_a_damaged_blob_makes_skills_read_their_files_again(
    tree: Path, tmp_path: Path, parses: Counter
) -> None:
    cache_dir = tmp_path / "cache"
    scan(tree, cache_dir)
    [blob] = (cache_dir / "discovery").glob("*.blob")
    data = bytearray(blob.read_bytes())
    data[-3] ^= 0xFF  # same size, different bytes: only the checksum can tell
    blob.write_bytes(bytes(data))
    warm = scan(tree, cache_dir)
    assert warm.tree_from_cache  # names come from the index; the broken skill, whose
    assert [i.name for i in warm.invalid] == ["broken"]  # errors are in the blob, is re-read
    descriptions = {s.name: s.description for s in warm.skills}
    assert set(descriptions) == {"alpha", "beta", "nested"}
    assert all(descriptions.values())


def test_a_snapshot_resolves_its_root_once_per_load_and_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The root's real path names the index and is stored in it: one ``realpath``
    (an ``lstat`` per path component) serves both, on every warm discovery."""
    tree = tmp_path / "tree"
    write_skill(tree / "one")
    age(tree)
    cache_dir = tmp_path / "cache"
    scan_root(Root(tree, SkillSource.ROOT), cache_dir=cache_dir)
    resolved: list[str] = []
    real = os.path.realpath

    def counting(path: Any, *args: Any, **kwargs: Any) -> str:
        resolved.append(os.fspath(path))
        found: str = real(path, *args, **kwargs)
        return found

    monkeypatch.setattr(os.path, "realpath", counting)
    snapshot = cache.load_snapshot(cache_dir, tree, strict=False)
    assert snapshot is not None
    assert resolved == [str(tree)]
    resolved.clear()
    records = snapshot.records
    cache.save_snapshot(
        cache_dir, tree, snapshot.full_tree(), records, started=time.time_ns(), strict=False
    )
    assert resolved == [str(tree)]
    monkeypatch.undo()
    assert cache.load_snapshot(cache_dir, tree, strict=False) is not None
