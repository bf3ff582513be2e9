"""A skill author's files that used to crash or hang the skills layer (issue 15,
class 9): a folder hundreds of levels deep anywhere under a root or inside a skill
(also delivered by a two-file ``.skill`` package), and FIFOs, sockets or devices
inside a skill folder during ``pack``, ``install FOLDER`` and ``verify``.

Deep trees are made with relative paths from inside the tree (``os.chdir``), so no
single path handed to the kernel is longer than PATH_MAX allows."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest

from skilldeck._safefs import walk
from skilldeck.config import Settings, load_settings
from skilldeck.errors import PackageError
from skilldeck.skills.discovery import TOO_DEEP, walk_tree
from skilldeck.skills.format import validate_path
from skilldeck.skills.packaging import install, pack
from skilldeck.skills.packaging.lockfile import MAX_DEPTH, collect_files, verify
from skilldeck.skills.registry import SkillRegistry

DEPTH = 600


@pytest.fixture(autouse=True)
def _remove_deep_trees(tmp_path: Path) -> object:
    """pytest deletes old temp folders with a recursive rmtree, which dies (RecursionError
    at the exit of a later session) on the trees these tests build: remove each test's
    folder with ``rm``, which does not recurse on the stack."""
    yield
    subprocess.run(["rm", "-rf", str(tmp_path)], check=False)


def deep_tree(top: Path, depth: int = DEPTH, *, leaf: str | None = None) -> None:
    """``top/d/d/…/d`` ``depth`` levels deep, with ``leaf`` as SKILL.md at the bottom."""
    top.mkdir(parents=True, exist_ok=True)
    here = os.getcwd()
    try:
        os.chdir(top)
        for _ in range(depth):
            os.mkdir("d")
            os.chdir("d")
        if leaf is not None:
            Path("SKILL.md").write_text(leaf, encoding="utf-8")
    finally:
        os.chdir(here)


def skill_md(name: str) -> str:
    return f"---\nname: {name}\ndescription: {name} for tests\n---\nBody.\n"


@pytest.fixture
def settings(tmp_path: Path, skilldeck_home: Path) -> Settings:
    work = tmp_path / "work"
    work.mkdir()
    return load_settings(workspace=work, home=skilldeck_home)


# ---- deep trees ----------------------------------------------------------------------


def test_a_600_level_tree_under_a_root_is_cut_and_reported(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    root = tmp_path / "skills"
    (root / "good").mkdir(parents=True)
    (root / "good" / "SKILL.md").write_text(skill_md("good"), encoding="utf-8")
    deep_tree(root / "deep", leaf=skill_md("bottom"))
    tree = walk_tree(root)
    assert tree.skill_mds == ["good/SKILL.md"]
    too_deep = [d for d in tree.diagnostics if d.code == TOO_DEEP[0]]
    assert len(too_deep) == 1 and not too_deep[0].is_error
    settings = load_settings(workspace=tmp_path, home=skilldeck_home)
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True, use_cache=False)
    assert registry.names() == ["good"]
    assert any(d.code == TOO_DEEP[0] for d in registry.diagnostics)
    reports = validate_path(root)
    assert [r.name for r in reports] == ["good", None]  # the cut folder is reported
    assert reports[1].valid and reports[1].warnings[0].code == TOO_DEEP[0]


def test_a_600_level_tree_inside_a_skill_is_refused_by_pack_install_and_verify(
    tmp_path: Path, settings: Settings
) -> None:
    folder = tmp_path / "src" / "deep-skill"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md("deep-skill"), encoding="utf-8")
    deep_tree(folder / "assets")
    with pytest.raises(PackageError, match="nested more than"):
        collect_files(folder)
    with pytest.raises(PackageError, match="nested more than"):
        pack(folder, output=tmp_path / "deep.skill")
    with pytest.raises(PackageError, match="nested more than"):
        install(folder, settings=settings)
    # an installed skill that grows a deep tree afterwards: verify reports, never crashes
    shallow = tmp_path / "src" / "shallow"
    shallow.mkdir()
    (shallow / "SKILL.md").write_text(skill_md("shallow"), encoding="utf-8")
    done = install(shallow, settings=settings)
    deep_tree(done.path / "assets")
    problems = verify(settings, scope="workspace")
    assert [p.kind for p in problems] == ["unsafe"]
    assert "nested more than" in problems[0].message


def test_a_two_file_package_with_a_deep_entry_is_refused(
    tmp_path: Path, settings: Settings
) -> None:
    archive = tmp_path / "deep.skill"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("deep/SKILL.md", skill_md("deep"))
        zf.writestr("deep/" + "d/" * DEPTH + "x.txt", "x")
    with pytest.raises(PackageError, match="folders deep"):
        install(archive, settings=settings)
    root = settings.workspace / ".skilldeck" / "skills"
    assert not (root / "deep").exists()
    # just under the limit still installs
    ok = tmp_path / "ok.skill"
    with zipfile.ZipFile(ok, "w") as zf:
        zf.writestr("ok/SKILL.md", skill_md("ok"))
        zf.writestr("ok/" + "d/" * MAX_DEPTH + "x.txt", "x")
    assert install(ok, settings=settings).files == 2


# ---- FIFOs, sockets and devices -------------------------------------------------------


def special_skill(tmp_path: Path) -> Path:
    folder = tmp_path / "src" / "piped"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md("piped"), encoding="utf-8")
    (folder / "scripts" / "run.py").write_text("print('{}')\n", encoding="utf-8")
    os.mkfifo(folder / "scripts" / "pipe")
    os.mkfifo(folder / "SKILL.fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "scripts" / "sock"))
    sock.close()
    # a character device (like /dev/zero: reading it never ends); unprivileged runs
    # cannot make one, and the FIFOs and the socket still attack
    with contextlib.suppress(PermissionError):
        os.mknod(folder / "zero", stat.S_IFCHR | 0o600, os.makedev(1, 5))
    return folder


def test_pack_skips_fifos_and_sockets_and_names_them(tmp_path: Path) -> None:
    folder = special_skill(tmp_path)
    warnings: list[str] = []
    out = pack(folder, output=tmp_path / "piped.skill", warnings=warnings)
    with zipfile.ZipFile(out) as zf:
        names = sorted(zf.namelist())
    assert names == ["piped/.skill-manifest.json", "piped/SKILL.md", "piped/scripts/run.py"]
    device = (folder / "zero").is_char_device()
    assert len(warnings) == 3 + device
    assert not device or any("zero" in w and "device" in w for w in warnings)
    assert any("SKILL.fifo" in w and "FIFO" in w for w in warnings)
    assert any("sock" in w and "socket" in w for w in warnings)


def test_install_folder_skips_fifos_and_verify_reports_a_planted_one(
    tmp_path: Path, settings: Settings
) -> None:
    folder = special_skill(tmp_path)
    done = install(folder, settings=settings)
    assert sorted(p.name for p in done.path.rglob("*")) == ["SKILL.md", "run.py", "scripts"]
    specials = 3 + (folder / "zero").is_char_device()
    assert sum("not a regular file" in w for w in done.warnings) == specials
    assert verify(settings, scope="workspace") == []
    os.mkfifo(done.path / "planted")
    problems = verify(settings, scope="workspace")
    assert [(p.kind, "planted" in p.message) for p in problems] == [("unsafe", True)]


def test_a_symlink_to_a_fifo_or_a_device_is_refused_not_opened(
    tmp_path: Path, settings: Settings
) -> None:
    folder = tmp_path / "src" / "linked"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(skill_md("linked"), encoding="utf-8")
    os.mkfifo(folder / "fifo")
    (folder / "data").symlink_to("fifo")
    with pytest.raises(PackageError, match="not a regular file"):
        pack(folder, output=tmp_path / "l.skill")
    (folder / "data").unlink()
    os.unlink(folder / "fifo")
    (folder / "null").symlink_to("/dev/null")
    with pytest.raises(PackageError, match="pointing outside"):
        install(folder, settings=settings)


def test_a_skill_md_named_folder_of_fifos_does_not_hang_discovery(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    root = tmp_path / "skills"
    (root / "fifo-skill").mkdir(parents=True)
    os.mkfifo(root / "fifo-skill" / "SKILL.md")
    (root / "ok").mkdir()
    (root / "ok" / "SKILL.md").write_text(skill_md("ok"), encoding="utf-8")
    settings = load_settings(workspace=tmp_path, home=skilldeck_home)
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True, use_cache=False)
    assert registry.names() == ["ok"]


def test_the_shared_walk_survives_a_tree_deeper_than_the_recursion_limit(
    tmp_path: Path,
) -> None:
    """``skilldeck._safefs.walk`` is the drop-in for ``os.walk`` (which recurses once
    per level on Python 3.11): 1,100 levels are listed, and ``max_depth`` cuts them."""
    deep_tree(tmp_path / "t", 1100)
    assert sum(1 for _ in walk(tmp_path / "t")) == 1101
    assert sum(1 for _ in walk(tmp_path / "t", max_depth=10)) == 11


def test_listing_the_resources_of_a_very_deep_skill_does_not_recurse(tmp_path: Path) -> None:
    """Level-3 listing walks iteratively: a 1,100-level ``assets/`` tree (Python 3.11's
    ``os.walk`` recurses once per level) lists its file instead of raising RecursionError."""
    from skilldeck.skills.format import load_skill

    skill_dir = tmp_path / "deep"
    skill_dir.mkdir()
    (skill_dir / "SKILL.md").write_text("---\nname: deep\ndescription: d\n---\nbody\n")
    here = os.open(skill_dir, os.O_RDONLY)
    try:
        os.mkdir("assets", dir_fd=here)
        for _ in range(1100):
            below = os.open("assets" if _ == 0 else "d", os.O_RDONLY, dir_fd=here)
            os.close(here)
            here = below
            os.mkdir("d", dir_fd=here)
        fd = os.open("f.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=here)
        os.write(fd, b"x")
        os.close(fd)
    finally:
        os.close(here)
    try:
        loaded = load_skill(skill_dir)
        skill = loaded[0] if isinstance(loaded, tuple) else loaded
        assert len(skill.list_resources()) == 1
    finally:
        # pytest later deletes old temp folders with a recursive rmtree, which dies on a
        # tree this deep: remove it here with rm, which does not recurse on the stack
        subprocess.run(["rm", "-rf", str(skill_dir)], check=False)
