"""paths.confine and the race-safe open/write helpers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skilldeck.config import Settings
from skilldeck.errors import ToolError
from skilldeck.tools.base import ToolContext
from skilldeck.tools.fs import confine, open_regular, read_bytes, write_atomic


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ToolContext(session_id="t", workspace=ws.resolve(), settings=Settings(workspace=ws))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text("TOP SECRET\n", encoding="utf-8")
    return out.resolve()


def test_relative_paths_resolve_against_workspace(ctx: ToolContext) -> None:
    assert confine("a/b.txt", ctx) == ctx.workspace / "a" / "b.txt"
    assert confine(str(ctx.workspace / "x"), ctx) == ctx.workspace / "x"
    assert confine(".", ctx) == ctx.workspace


def test_dotdot_is_refused_with_the_allowed_roots(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as info:
        confine("../outside/secret.txt", ctx)
    assert "outside the allowed directories" in str(info.value)
    assert str(ctx.workspace) in str(info.value)


def test_absolute_path_outside_is_refused(ctx: ToolContext, outside: Path) -> None:
    with pytest.raises(ToolError):
        confine(str(outside / "secret.txt"), ctx)
    with pytest.raises(ToolError):
        confine("/etc/passwd", ctx)


def test_prefix_sibling_is_not_inside(ctx: ToolContext) -> None:
    sibling = ctx.workspace.parent / (ctx.workspace.name + "-evil")
    sibling.mkdir()
    with pytest.raises(ToolError):
        confine(str(sibling / "f"), ctx)


def test_symlink_pointing_outside_is_refused(ctx: ToolContext, outside: Path) -> None:
    (ctx.workspace / "link").symlink_to(outside / "secret.txt")
    (ctx.workspace / "dirlink").symlink_to(outside)
    with pytest.raises(ToolError) as info:
        confine("link", ctx)
    assert "resolves to" in str(info.value)
    with pytest.raises(ToolError):
        confine("dirlink/secret.txt", ctx)
    with pytest.raises(ToolError):
        confine("dirlink/new.txt", ctx, write=True)


def test_symlink_inside_is_allowed(ctx: ToolContext) -> None:
    (ctx.workspace / "real.txt").write_text("x", encoding="utf-8")
    (ctx.workspace / "alias.txt").symlink_to(ctx.workspace / "real.txt")
    assert confine("alias.txt", ctx) == ctx.workspace / "real.txt"


def test_empty_and_nul_paths(ctx: ToolContext) -> None:
    with pytest.raises(ToolError):
        confine("", ctx)
    with pytest.raises(ToolError):
        confine("a\x00b", ctx)


def test_must_exist(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        confine("missing.txt", ctx, must_exist=True)


def test_extra_roots(ctx: ToolContext, outside: Path) -> None:
    ctx.roots.append(outside)
    assert confine(str(outside / "secret.txt"), ctx, write=True) == outside / "secret.txt"


def test_read_roots_are_not_writable(ctx: ToolContext, outside: Path) -> None:
    ctx.read_roots.append(outside)
    assert confine(str(outside / "secret.txt"), ctx) == outside / "secret.txt"
    with pytest.raises(ToolError, match="write to"):
        confine(str(outside / "secret.txt"), ctx, write=True)


def test_hard_link_is_refused_for_read_and_write(ctx: ToolContext, outside: Path) -> None:
    link = ctx.workspace / "hard.txt"
    os.link(outside / "secret.txt", link)
    with pytest.raises(ToolError, match="hard links"):
        open_regular(confine("hard.txt", ctx), ctx)
    with pytest.raises(ToolError, match="hard links"):
        write_atomic(confine("hard.txt", ctx, write=True), ctx, b"pwned")
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "TOP SECRET\n"


def test_race_directory_swapped_for_symlink_after_check(ctx: ToolContext, outside: Path) -> None:
    """confine() sees a real directory; before the open it becomes a link outside."""
    sub = ctx.workspace / "sub"
    sub.mkdir()
    (sub / "secret.txt").write_text("inside\n", encoding="utf-8")
    checked = confine("sub/secret.txt", ctx, must_exist=True)
    (sub / "secret.txt").unlink()
    sub.rmdir()
    sub.symlink_to(outside)  # the swap
    with pytest.raises(ToolError, match="symbolic link"):
        read_bytes(checked, ctx)
    with pytest.raises(ToolError, match="symbolic link"):
        write_atomic(checked, ctx, b"pwned")
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "TOP SECRET\n"


def test_race_final_component_swapped_for_symlink(ctx: ToolContext, outside: Path) -> None:
    target = ctx.workspace / "f.txt"
    target.write_text("inside\n", encoding="utf-8")
    checked = confine("f.txt", ctx, must_exist=True)
    target.unlink()
    target.symlink_to(outside / "secret.txt")
    with pytest.raises(ToolError, match="symbolic link"):
        read_bytes(checked, ctx)
    with pytest.raises(ToolError, match="symbolic link"):
        write_atomic(checked, ctx, b"pwned")
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "TOP SECRET\n"


def test_write_atomic_creates_parents_and_reports_created(ctx: ToolContext) -> None:
    path = confine("a/b/c.txt", ctx, write=True)
    _, created = write_atomic(path, ctx, b"one")
    assert created and path.read_bytes() == b"one"
    _, created = write_atomic(path, ctx, b"two")
    assert not created and path.read_bytes() == b"two"
    assert sorted(p.name for p in path.parent.iterdir()) == ["c.txt"]


def test_missing_root_is_a_tool_error(tmp_path: Path) -> None:
    ws = tmp_path / "gone"
    ctx = ToolContext(session_id="t", workspace=ws, settings=Settings(workspace=tmp_path))
    with pytest.raises(ToolError):
        read_bytes(confine("x.txt", ctx), ctx)
