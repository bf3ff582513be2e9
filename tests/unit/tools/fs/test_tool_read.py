"""Read: line numbering, offset/limit, truncation, binary/dir/missing errors, read state."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.config import Settings
from skilldeck.tools.base import ToolContext
from skilldeck.tools.fs.files import READ_STATE, ReadTool

pytestmark = pytest.mark.anyio


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ToolContext(session_id="t", workspace=ws.resolve(), settings=Settings(workspace=ws))


async def read(ctx: ToolContext, **args: object):  # type: ignore[no-untyped-def]
    return await ReadTool().call(dict(args), ctx)


async def test_numbers_lines_like_cat_n(ctx: ToolContext) -> None:
    (ctx.workspace / "a.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    result = await read(ctx, file_path="a.txt")
    assert not result.is_error
    assert result.content == "     1\talpha\n     2\tbeta"
    assert result.data["total_lines"] == 2


async def test_absolute_path_and_crlf_stripped(ctx: ToolContext) -> None:
    path = ctx.workspace / "w.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    result = await read(ctx, file_path=str(path))
    assert result.content == "     1\tone\n     2\ttwo"


async def test_offset_and_limit_with_continuation_note(ctx: ToolContext) -> None:
    (ctx.workspace / "n.txt").write_text(
        "".join(f"line {i}\n" for i in range(1, 11)), encoding="utf-8"
    )
    result = await read(ctx, file_path="n.txt", offset=3, limit=2)
    lines = result.content.splitlines()
    assert lines[0] == "     3\tline 3"
    assert lines[1] == "     4\tline 4"
    assert "Showing lines 3-4 of 10" in result.content
    assert "offset=5" in result.content


async def test_default_limit_is_2000_lines(ctx: ToolContext) -> None:
    (ctx.workspace / "big.txt").write_text("x\n" * 2500, encoding="utf-8")
    result = await read(ctx, file_path="big.txt")
    assert "  2000\tx" in result.content
    assert "  2001\t" not in result.content
    assert "Showing lines 1-2000 of 2500" in result.content


async def test_long_lines_are_truncated(ctx: ToolContext) -> None:
    (ctx.workspace / "long.txt").write_text("y" * 5000 + "\nshort\n", encoding="utf-8")
    result = await read(ctx, file_path="long.txt")
    first = result.content.splitlines()[0]
    assert first.startswith("     1\t" + "y" * 2000)
    assert "y" * 2001 not in first
    assert "line truncated" in first
    assert "     2\tshort" in result.content


async def test_output_budget_stops_early_with_offset_hint(ctx: ToolContext) -> None:
    ctx.settings.agent.tool_output_limit = 1000
    (ctx.workspace / "wide.txt").write_text(("z" * 90 + "\n") * 100, encoding="utf-8")
    result = await read(ctx, file_path="wide.txt")
    assert len(result.content) < 1300
    assert "Use offset=" in result.content


async def test_empty_file_note(ctx: ToolContext) -> None:
    (ctx.workspace / "e.txt").write_text("", encoding="utf-8")
    result = await read(ctx, file_path="e.txt")
    assert not result.is_error
    assert "exists but is empty" in result.content


async def test_offset_past_end(ctx: ToolContext) -> None:
    (ctx.workspace / "s.txt").write_text("a\nb\n", encoding="utf-8")
    result = await read(ctx, file_path="s.txt", offset=10)
    assert "only 2 lines" in result.content


async def test_binary_file_is_a_clear_error(ctx: ToolContext) -> None:
    (ctx.workspace / "b.dat").write_bytes(b"\x00\x01\x02abc")
    result = await read(ctx, file_path="b.dat")
    assert result.is_error
    assert "binary file" in result.content


async def test_image_is_a_binary_error(ctx: ToolContext) -> None:
    (ctx.workspace / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    result = await read(ctx, file_path="pic.png")
    assert result.is_error and "binary" in result.content


async def test_directory_is_an_error(ctx: ToolContext) -> None:
    (ctx.workspace / "d").mkdir()
    result = await read(ctx, file_path="d")
    assert result.is_error
    assert "is a directory" in result.content


async def test_missing_file_suggests_close_names(ctx: ToolContext) -> None:
    (ctx.workspace / "config.yaml").write_text("k: v\n", encoding="utf-8")
    result = await read(ctx, file_path="config.yml")
    assert result.is_error
    assert "does not exist" in result.content
    assert "config.yaml" in result.content


async def test_fifo_is_refused_without_hanging(ctx: ToolContext) -> None:
    import os

    os.mkfifo(ctx.workspace / "pipe")
    result = await read(ctx, file_path="pipe")
    assert result.is_error
    assert "not a regular file" in result.content


async def test_read_is_recorded_in_state(ctx: ToolContext) -> None:
    path = ctx.workspace / "r.txt"
    path.write_text("x\n", encoding="utf-8")
    await read(ctx, file_path="r.txt")
    assert ctx.state[READ_STATE][str(path)] == path.stat().st_mtime_ns


async def test_bad_arguments_are_error_results(ctx: ToolContext) -> None:
    result = await ReadTool().call({"file_path": "a", "limit": 0}, ctx)
    assert result.is_error and "limit" in result.content
    result = await ReadTool().call({}, ctx)
    assert result.is_error and "file_path" in result.content


async def test_skill_read_roots_are_readable(ctx: ToolContext, tmp_path: Path) -> None:
    skill_dir = tmp_path / "skills" / "demo"
    skill_dir.mkdir(parents=True)
    (skill_dir / "ref.md").write_text("reference\n", encoding="utf-8")
    refused = await read(ctx, file_path=str(skill_dir / "ref.md"))
    assert refused.is_error and "outside the allowed directories" in refused.content
    ctx.read_roots.append(skill_dir)
    allowed = await read(ctx, file_path=str(skill_dir / "ref.md"))
    assert allowed.content == "     1\treference"
