"""Filesystem escapes through every file tool: `..`, absolute paths, symlinks and hard
links pointing outside the workspace must be refused and never leak or modify data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skilldeck.config import Settings
from skilldeck.tools.base import ToolContext
from skilldeck.tools.fs import GlobTool, GrepTool
from skilldeck.tools.fs.files import READ_STATE, EditTool, MultiEditTool, ReadTool, WriteTool

pytestmark = pytest.mark.anyio
SECRET = "TOP-SECRET-VALUE"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[ToolContext, Path]:
    ws = (tmp_path / "ws").resolve()
    out = (tmp_path / "outside").resolve()
    ws.mkdir()
    out.mkdir()
    (out / "secret.txt").write_text(f"{SECRET}\n", encoding="utf-8")
    (ws / "ok.txt").write_text("fine\n", encoding="utf-8")
    (ws / "link.txt").symlink_to(out / "secret.txt")
    (ws / "linkdir").symlink_to(out)
    os.link(out / "secret.txt", ws / "hard.txt")
    ctx = ToolContext(session_id="t", workspace=ws, settings=Settings(workspace=ws))
    return ctx, out


ESCAPES = ["../outside/secret.txt", "ABS", "link.txt", "linkdir/secret.txt", "hard.txt"]


def _path(spec: str, out: Path) -> str:
    return str(out / "secret.txt") if spec == "ABS" else spec


def _untouched(out: Path) -> None:
    assert (out / "secret.txt").read_text(encoding="utf-8") == f"{SECRET}\n"
    assert sorted(p.name for p in out.iterdir()) == ["secret.txt"]


@pytest.mark.parametrize("spec", ESCAPES)
async def test_read_refuses(setup: tuple[ToolContext, Path], spec: str) -> None:
    ctx, out = setup
    result = await ReadTool().call({"file_path": _path(spec, out)}, ctx)
    assert result.is_error
    assert SECRET not in result.content


@pytest.mark.parametrize("spec", [*ESCAPES, "linkdir/new.txt", "../outside/new.txt"])
async def test_write_refuses(setup: tuple[ToolContext, Path], spec: str) -> None:
    ctx, out = setup
    # pretend every path was read, so only confinement can stop the write
    ctx.state[READ_STATE] = {
        str(p): os.stat(p).st_mtime_ns for p in [out / "secret.txt", ctx.workspace / "hard.txt"]
    }
    result = await WriteTool().call({"file_path": _path(spec, out), "content": "pwned"}, ctx)
    assert result.is_error, result.content
    _untouched(out)


@pytest.mark.parametrize("spec", ESCAPES)
async def test_edit_and_multiedit_refuse(setup: tuple[ToolContext, Path], spec: str) -> None:
    ctx, out = setup
    ctx.state[READ_STATE] = {str(out / "secret.txt"): os.stat(out / "secret.txt").st_mtime_ns}
    ctx.state[READ_STATE][str(ctx.workspace / "hard.txt")] = ctx.state[READ_STATE][
        str(out / "secret.txt")
    ]
    edit = {"old_string": SECRET, "new_string": "pwned"}
    result = await EditTool().call({"file_path": _path(spec, out), **edit}, ctx)
    assert result.is_error
    result = await MultiEditTool().call({"file_path": _path(spec, out), "edits": [edit]}, ctx)
    assert result.is_error
    assert SECRET not in result.content
    _untouched(out)


async def test_glob_does_not_list_outside(setup: tuple[ToolContext, Path]) -> None:
    ctx, out = setup
    result = await GlobTool().call({"pattern": "**/*"}, ctx)
    listed = result.content.splitlines()
    assert str(ctx.workspace / "ok.txt") in listed
    assert not any("secret" in line for line in listed)
    assert str(ctx.workspace / "link.txt") not in listed
    for args in (
        {"pattern": "*", "path": "../outside"},
        {"pattern": "*", "path": str(out)},
        {"pattern": str(out) + "/*"},
        {"pattern": "*", "path": "linkdir"},
    ):
        refused = await GlobTool().call(args, ctx)
        assert refused.is_error, args
        assert "secret.txt" not in refused.content


async def test_grep_does_not_read_outside(setup: tuple[ToolContext, Path]) -> None:
    ctx, out = setup
    for mode in ("content", "files_with_matches", "count"):
        result = await GrepTool().call({"pattern": "SECRET", "output_mode": mode}, ctx)
        assert SECRET not in result.content
        assert "secret.txt" not in result.content
        assert str(ctx.workspace / "hard.txt") not in result.content.splitlines()
    for path in ("../outside", str(out), "link.txt", "linkdir", "hard.txt"):
        refused = await GrepTool().call(
            {"pattern": "SECRET", "path": path, "output_mode": "content"}, ctx
        )
        assert refused.is_error, path
        assert SECRET not in refused.content
