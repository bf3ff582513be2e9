"""Write, Edit and MultiEdit: read-before-write, match counting, atomic all-or-nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from skilldeck.config import Settings
from skilldeck.tools.base import ToolContext, ToolResult
from skilldeck.tools.fs import EditTool, MultiEditTool, ReadTool, WriteTool

pytestmark = pytest.mark.anyio


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ToolContext(session_id="t", workspace=ws.resolve(), settings=Settings(workspace=ws))


async def call(tool: Any, ctx: ToolContext, **args: Any) -> ToolResult:
    return await tool.call(args, ctx)


async def prepared(ctx: ToolContext, name: str, text: str) -> Path:
    """A file the model has Read (so it may be edited)."""
    path = ctx.workspace / name
    path.write_text(text, encoding="utf-8")
    assert not (await call(ReadTool(), ctx, file_path=name)).is_error
    return path


# ---- Write ----


async def test_write_creates_file_and_parents(ctx: ToolContext) -> None:
    result = await call(WriteTool(), ctx, file_path="deep/er/new.txt", content="hello\n")
    assert not result.is_error, result.content
    assert "created" in result.content
    assert (ctx.workspace / "deep/er/new.txt").read_text(encoding="utf-8") == "hello\n"
    assert result.data["created"] is True


async def test_write_existing_unread_file_is_refused(ctx: ToolContext) -> None:
    (ctx.workspace / "old.txt").write_text("keep\n", encoding="utf-8")
    result = await call(WriteTool(), ctx, file_path="old.txt", content="new\n")
    assert result.is_error
    assert "Read it first" in result.content
    assert (ctx.workspace / "old.txt").read_text(encoding="utf-8") == "keep\n"


async def test_write_after_read_overwrites_and_keeps_mode(ctx: ToolContext) -> None:
    path = await prepared(ctx, "run.sh", "echo 1\n")
    path.chmod(0o755)
    await call(ReadTool(), ctx, file_path="run.sh")  # chmod changes ctime, not mtime
    result = await call(WriteTool(), ctx, file_path="run.sh", content="echo 2\n")
    assert not result.is_error, result.content
    assert "updated" in result.content
    assert path.read_text(encoding="utf-8") == "echo 2\n"
    assert path.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in ctx.workspace.iterdir()] == ["run.sh"]  # no temp files left


async def test_write_refuses_file_changed_since_read(ctx: ToolContext) -> None:
    path = await prepared(ctx, "f.txt", "v1\n")
    path.write_text("v2 by the user\n", encoding="utf-8")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    result = await call(WriteTool(), ctx, file_path="f.txt", content="v3\n")
    assert result.is_error
    assert "modified since it was last read" in result.content


async def test_written_file_can_be_edited_without_reading(ctx: ToolContext) -> None:
    await call(WriteTool(), ctx, file_path="w.txt", content="a b c\n")
    result = await call(EditTool(), ctx, file_path="w.txt", old_string="b", new_string="B")
    assert not result.is_error, result.content
    assert (ctx.workspace / "w.txt").read_text(encoding="utf-8") == "a B c\n"


async def test_write_to_directory_is_an_error(ctx: ToolContext) -> None:
    (ctx.workspace / "d").mkdir()
    result = await call(WriteTool(), ctx, file_path="d", content="x")
    assert result.is_error
    assert "directory" in result.content


# ---- Edit ----


async def test_edit_single_match(ctx: ToolContext) -> None:
    path = await prepared(ctx, "c.py", "def f():\n    return 1\n")
    result = await call(
        EditTool(), ctx, file_path="c.py", old_string="return 1", new_string="return 2"
    )
    assert not result.is_error, result.content
    assert path.read_text(encoding="utf-8") == "def f():\n    return 2\n"
    assert "     2\t    return 2" in result.content  # the snippet is numbered like Read
    assert result.data["replacements"] == 1


async def test_edit_zero_matches_is_its_own_error(ctx: ToolContext) -> None:
    path = await prepared(ctx, "c.txt", "alpha\n")
    result = await call(EditTool(), ctx, file_path="c.txt", old_string="beta", new_string="x")
    assert result.is_error
    assert "not found" in result.content
    assert "Read the file again" in result.content
    assert path.read_text(encoding="utf-8") == "alpha\n"


async def test_edit_several_matches_is_its_own_error(ctx: ToolContext) -> None:
    path = await prepared(ctx, "c.txt", "x = 1\nx = 1\nx = 1\n")
    result = await call(EditTool(), ctx, file_path="c.txt", old_string="x = 1", new_string="y")
    assert result.is_error
    assert "Found 3 occurrences" in result.content
    assert "replace_all" in result.content and "context" in result.content
    assert path.read_text(encoding="utf-8") == "x = 1\nx = 1\nx = 1\n"


async def test_edit_replace_all(ctx: ToolContext) -> None:
    path = await prepared(ctx, "c.txt", "x = 1\nx = 1\nx = 1\n")
    result = await call(
        EditTool(), ctx, file_path="c.txt", old_string="x = 1", new_string="y", replace_all=True
    )
    assert not result.is_error, result.content
    assert path.read_text(encoding="utf-8") == "y\ny\ny\n"
    assert result.data["replacements"] == 3


async def test_edit_identical_strings_is_an_error(ctx: ToolContext) -> None:
    await prepared(ctx, "c.txt", "same\n")
    result = await call(EditTool(), ctx, file_path="c.txt", old_string="same", new_string="same")
    assert result.is_error and "identical" in result.content


async def test_edit_requires_prior_read(ctx: ToolContext) -> None:
    (ctx.workspace / "u.txt").write_text("abc\n", encoding="utf-8")
    result = await call(EditTool(), ctx, file_path="u.txt", old_string="abc", new_string="x")
    assert result.is_error and "Read it first" in result.content


async def test_edit_missing_file(ctx: ToolContext) -> None:
    result = await call(EditTool(), ctx, file_path="nope.txt", old_string="a", new_string="b")
    assert result.is_error and "does not exist" in result.content


async def test_edit_with_empty_old_string_creates_file(ctx: ToolContext) -> None:
    result = await call(EditTool(), ctx, file_path="new.md", old_string="", new_string="# Hi\n")
    assert not result.is_error, result.content
    assert (ctx.workspace / "new.md").read_text(encoding="utf-8") == "# Hi\n"
    again = await call(EditTool(), ctx, file_path="new.md", old_string="", new_string="x")
    assert again.is_error and "already has content" in again.content


async def test_edit_crlf_file_with_lf_old_string(ctx: ToolContext) -> None:
    path = ctx.workspace / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await call(ReadTool(), ctx, file_path="win.txt")
    result = await call(
        EditTool(), ctx, file_path="win.txt", old_string="one\ntwo", new_string="1\n2"
    )
    assert not result.is_error, result.content
    assert path.read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_edit_non_utf8_file_is_refused(ctx: ToolContext) -> None:
    path = ctx.workspace / "latin.txt"
    path.write_bytes("café\n".encode("latin-1"))
    await call(ReadTool(), ctx, file_path="latin.txt")
    result = await call(EditTool(), ctx, file_path="latin.txt", old_string="caf", new_string="x")
    assert result.is_error and "UTF-8" in result.content


# ---- MultiEdit ----


async def test_multiedit_applies_in_sequence(ctx: ToolContext) -> None:
    path = await prepared(ctx, "m.txt", "a\nb\nc\n")
    edits = [
        {"old_string": "a", "new_string": "A"},
        {"old_string": "A\nb", "new_string": "AB"},  # sees the first edit's result
        {"old_string": "c", "new_string": "C", "replace_all": True},
    ]
    result = await call(MultiEditTool(), ctx, file_path="m.txt", edits=edits)
    assert not result.is_error, result.content
    assert path.read_text(encoding="utf-8") == "AB\nC\n"
    assert result.data["replacements"] == 3


async def test_multiedit_rolls_back_when_one_edit_fails(ctx: ToolContext) -> None:
    path = await prepared(ctx, "m.txt", "a\nb\nb\n")
    before = path.stat().st_mtime_ns
    edits = [
        {"old_string": "a", "new_string": "A"},
        {"old_string": "b", "new_string": "B"},  # two matches: fails
    ]
    result = await call(MultiEditTool(), ctx, file_path="m.txt", edits=edits)
    assert result.is_error
    assert "Edit 2 of 2" in result.content and "Found 2 occurrences" in result.content
    assert path.read_text(encoding="utf-8") == "a\nb\nb\n"
    assert path.stat().st_mtime_ns == before


async def test_multiedit_needs_at_least_one_edit(ctx: ToolContext) -> None:
    await prepared(ctx, "m.txt", "a\n")
    result = await call(MultiEditTool(), ctx, file_path="m.txt", edits=[])
    assert result.is_error and "edits" in result.content


async def test_multiedit_can_create_a_file(ctx: ToolContext) -> None:
    edits = [{"old_string": "", "new_string": "x = 1\n"}, {"old_string": "1", "new_string": "2"}]
    result = await call(MultiEditTool(), ctx, file_path="n.py", edits=edits)
    assert not result.is_error, result.content
    assert (ctx.workspace / "n.py").read_text(encoding="utf-8") == "x = 2\n"
