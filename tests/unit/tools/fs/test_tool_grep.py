"""Grep: output modes, context, flags, filters, head_limit, binary and noise skipping."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from skilldeck.config import Settings
from skilldeck.tools.base import ToolContext, ToolResult
from skilldeck.tools.fs import GrepTool

pytestmark = pytest.mark.anyio


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ToolContext(session_id="t", workspace=ws.resolve(), settings=Settings(workspace=ws))


def put(ctx: ToolContext, rel: str, text: str, mtime: float | None = None) -> Path:
    path = ctx.workspace / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


async def grep(ctx: ToolContext, **args: Any) -> ToolResult:
    result = await GrepTool().call(args, ctx)
    assert not result.is_error, result.content
    return result


async def test_schema_uses_claude_code_names() -> None:
    props = GrepTool().input_schema()["properties"]
    for name in ("-A", "-B", "-C", "-n", "-i", "output_mode", "head_limit", "multiline", "glob"):
        assert name in props
    assert "ignore_case" not in props


async def test_files_with_matches_newest_first(ctx: ToolContext) -> None:
    a = put(ctx, "a.txt", "needle\n", mtime=1_000)
    b = put(ctx, "sub/b.txt", "a needle here\n", mtime=3_000)
    put(ctx, "c.txt", "nothing\n", mtime=2_000)
    result = await grep(ctx, pattern="needle")
    assert result.content.splitlines() == ["Found 2 files", str(b), str(a)]


async def test_content_mode_with_line_numbers(ctx: ToolContext) -> None:
    p = put(ctx, "a.py", "import os\nx = 1\nimport sys\n")
    result = await grep(ctx, pattern=r"^import \w+", output_mode="content")
    assert result.content.splitlines() == [f"{p}:1:import os", f"{p}:3:import sys"]
    plain = await grep(ctx, pattern="import", output_mode="content", **{"-n": False})
    assert plain.content.splitlines() == [f"{p}:import os", f"{p}:import sys"]


async def test_context_lines(ctx: ToolContext) -> None:
    p = put(ctx, "f.txt", "".join(f"l{i}\n" for i in range(1, 11)))
    after = await grep(ctx, pattern="l2$", output_mode="content", **{"-A": 1})
    assert after.content.splitlines() == [f"{p}:2:l2", f"{p}-3-l3"]
    before = await grep(ctx, pattern="l5", output_mode="content", **{"-B": 2})
    assert before.content.splitlines() == [f"{p}-3-l3", f"{p}-4-l4", f"{p}:5:l5"]
    both = await grep(ctx, pattern="l2$|l8", output_mode="content", **{"-C": 1})
    assert both.content.splitlines() == [
        f"{p}-1-l1",
        f"{p}:2:l2",
        f"{p}-3-l3",
        "--",
        f"{p}-7-l7",
        f"{p}:8:l8",
        f"{p}-9-l9",
    ]


async def test_case_insensitive(ctx: ToolContext) -> None:
    put(ctx, "f.txt", "Hello World\n")
    assert (await grep(ctx, pattern="hello")).content == "No files found"
    assert "Found 1 file" in (await grep(ctx, pattern="hello", **{"-i": True})).content


async def test_count_mode(ctx: ToolContext) -> None:
    a = put(ctx, "a.txt", "x\nx\ny\n")
    b = put(ctx, "b.txt", "x\n")
    result = await grep(ctx, pattern="x", output_mode="count")
    lines = result.content.splitlines()
    assert lines[:2] == [f"{a}:2", f"{b}:1"]
    assert "Found 3 matching lines across 2 files" in result.content


async def test_head_limit(ctx: ToolContext) -> None:
    put(ctx, "f.txt", "m\n" * 10)
    result = await grep(ctx, pattern="m", output_mode="content", head_limit=3)
    assert len([line for line in result.content.splitlines() if ":m" in line]) == 3
    assert "first 3 of 10" in result.content
    for i in range(5):
        put(ctx, f"d/{i}.txt", "m\n")
    files = await grep(ctx, pattern="m", head_limit=2)
    assert len(files.content.splitlines()[1:3]) == 2
    assert "first 2 of 6" in files.content


async def test_glob_and_type_filters(ctx: ToolContext) -> None:
    py = put(ctx, "src/app.py", "TODO\n")
    put(ctx, "src/app.js", "TODO\n")
    tsx = put(ctx, "web/c.tsx", "TODO\n")
    by_glob = await grep(ctx, pattern="TODO", glob="*.py")
    assert by_glob.content.splitlines()[1:] == [str(py)]
    braces = await grep(ctx, pattern="TODO", glob="*.{py,tsx}", output_mode="count")
    assert {line.rsplit(":", 1)[0] for line in braces.content.splitlines()[:2]} == {
        str(py),
        str(tsx),
    }
    with_dir = await grep(ctx, pattern="TODO", glob="src/*.js", output_mode="count")
    assert with_dir.content.splitlines()[0].startswith(str(ctx.workspace / "src/app.js"))
    by_type = await grep(ctx, pattern="TODO", type="py")
    assert by_type.content.splitlines()[1:] == [str(py)]
    unknown = await GrepTool().call({"pattern": "x", "type": "klingon"}, ctx)
    assert unknown.is_error and "Known types" in unknown.content


async def test_multiline(ctx: ToolContext) -> None:
    p = put(ctx, "f.py", "def f(\n    a,\n):\n    pass\n")
    assert (await grep(ctx, pattern=r"f\(.*?\):")).content == "No files found"
    result = await grep(ctx, pattern=r"f\(.*?\):", multiline=True, output_mode="content")
    assert result.content.splitlines() == [f"{p}:1:def f(", f"{p}:2:    a,", f"{p}:3:):"]


async def test_single_file_output_has_no_path(ctx: ToolContext) -> None:
    put(ctx, "one.txt", "a\nb\n")
    result = await grep(ctx, pattern="b", path="one.txt", output_mode="content")
    assert result.content == "2:b"


async def test_skips_binary_hidden_git_node_modules(ctx: ToolContext) -> None:
    (ctx.workspace / "bin.dat").write_bytes(b"needle\x00\x01")
    put(ctx, ".git/config", "needle\n")
    put(ctx, "node_modules/x/index.js", "needle\n")
    put(ctx, ".hidden", "needle\n")
    visible = put(ctx, "src/v.txt", "needle\n")
    result = await grep(ctx, pattern="needle")
    assert result.content.splitlines() == ["Found 1 file", str(visible)]
    inside = await grep(ctx, pattern="needle", path="node_modules")
    assert "index.js" in inside.content


async def test_invalid_regex_and_missing_path(ctx: ToolContext) -> None:
    bad = await GrepTool().call({"pattern": "("}, ctx)
    assert bad.is_error and "Invalid regular expression" in bad.content
    missing = await GrepTool().call({"pattern": "x", "path": "nope"}, ctx)
    assert missing.is_error and "does not exist" in missing.content


async def test_lookaround_patterns_still_match_per_line(ctx: ToolContext) -> None:
    p = put(ctx, "f.txt", "foo\nfoobar\n")
    result = await grep(ctx, pattern=r"foo(?!\n)$", output_mode="content")
    assert result.content.splitlines() == [f"{p}:1:foo"]
