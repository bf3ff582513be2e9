"""Glob: pattern semantics, newest-first ordering, the cap, noise directories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skilldeck.config import Settings
from skilldeck.tools.base import ToolContext
from skilldeck.tools.fs._walk import compile_glob, literal_prefix
from skilldeck.tools.fs.search import GLOB_LIMIT, GlobTool

pytestmark = pytest.mark.anyio


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ToolContext(session_id="t", workspace=ws.resolve(), settings=Settings(workspace=ws))


def touch(path: Path, mtime: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x\n", encoding="utf-8")
    os.utime(path, (mtime, mtime))
    return path


async def glob(ctx: ToolContext, pattern: str, path: str | None = None) -> list[str]:
    args = {"pattern": pattern} if path is None else {"pattern": pattern, "path": path}
    result = await GlobTool().call(args, ctx)
    assert not result.is_error, result.content
    return result.content.splitlines()


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/a.py", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "src/deep/a.py", True),
        ("src/**/*.ts", "src/a.ts", True),
        ("src/**/*.ts", "lib/a.ts", False),
        ("*.{ts,tsx}", "a.tsx", True),
        ("*.{ts,tsx}", "a.js", False),
        ("file?.txt", "file1.txt", True),
        ("file?.txt", "file10.txt", False),
        ("[ab].md", "b.md", True),
        ("[!ab].md", "b.md", False),
        ("**", "x/y/z", True),
        ("a+b(c).txt", "a+b(c).txt", True),
    ],
)
def test_compile_glob(pattern: str, path: str, expected: bool) -> None:
    assert bool(compile_glob(pattern).match(path)) is expected


def test_literal_prefix() -> None:
    assert literal_prefix("src/app/**/*.ts") == ("src/app", "**/*.ts")
    assert literal_prefix("**/*.py") == ("", "**/*.py")
    assert literal_prefix("docs/readme.md") == ("docs", "readme.md")


async def test_sorted_newest_first(ctx: ToolContext) -> None:
    ws = ctx.workspace
    touch(ws / "old.py", 1_000_000)
    touch(ws / "src" / "new.py", 3_000_000)
    touch(ws / "mid.py", 2_000_000)
    touch(ws / "notes.txt", 4_000_000)
    assert await glob(ctx, "**/*.py") == [
        str(ws / "src" / "new.py"),
        str(ws / "mid.py"),
        str(ws / "old.py"),
    ]


async def test_capped_with_total_note(ctx: ToolContext) -> None:
    for i in range(GLOB_LIMIT + 20):
        touch(ctx.workspace / f"f{i:03}.txt", 1_000_000 + i)
    lines = await glob(ctx, "*.txt")
    assert len(lines) == GLOB_LIMIT + 1
    assert lines[0] == str(ctx.workspace / f"f{GLOB_LIMIT + 19:03}.txt")
    assert "truncated" in lines[-1] and f"of {GLOB_LIMIT + 20} files" in lines[-1]


async def test_path_argument_and_prefix(ctx: ToolContext) -> None:
    ws = ctx.workspace
    touch(ws / "pkg" / "a.py", 1)
    touch(ws / "other" / "b.py", 2)
    assert await glob(ctx, "*.py", path="pkg") == [str(ws / "pkg" / "a.py")]
    assert await glob(ctx, "pkg/*.py") == [str(ws / "pkg" / "a.py")]
    assert await glob(ctx, f"{ws}/other/*.py") == [str(ws / "other" / "b.py")]


async def test_no_match_and_bad_path(ctx: ToolContext) -> None:
    result = await GlobTool().call({"pattern": "*.rs"}, ctx)
    assert result.content == "No files found"
    missing = await GlobTool().call({"pattern": "*", "path": "nowhere"}, ctx)
    assert missing.is_error and "does not exist" in missing.content
    touch(ctx.workspace / "f.txt", 1)
    not_dir = await GlobTool().call({"pattern": "*", "path": "f.txt"}, ctx)
    assert not_dir.is_error and "not a directory" in not_dir.content


async def test_skips_git_and_node_modules_unless_named(ctx: ToolContext) -> None:
    ws = ctx.workspace
    touch(ws / ".git" / "config.js", 1)
    touch(ws / "node_modules" / "lib" / "index.js", 1)
    touch(ws / "app.js", 1)
    assert await glob(ctx, "**/*.js") == [str(ws / "app.js")]
    assert await glob(ctx, "node_modules/**/*.js") == [str(ws / "node_modules/lib/index.js")]


async def test_symlinked_dirs_are_not_descended(ctx: ToolContext) -> None:
    ws = ctx.workspace
    touch(ws / "real" / "a.md", 1)
    (ws / "loop").symlink_to(ws)  # a loop must not hang the walk
    assert await glob(ctx, "**/*.md") == [str(ws / "real" / "a.md")]
