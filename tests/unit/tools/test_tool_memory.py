from __future__ import annotations

import os
from pathlib import Path

import pytest

from skilldeck.config import load_settings
from skilldeck.tools.base import ToolContext
from skilldeck.tools.memory import MemoryTool, memory_dir

pytestmark = pytest.mark.anyio


@pytest.fixture
def ctx(tmp_path: Path, skilldeck_home: Path) -> ToolContext:
    settings = load_settings(workspace=tmp_path, home=skilldeck_home)
    return ToolContext(session_id="s1", workspace=tmp_path, settings=settings, agent_name="helper")


async def test_write_read_list_delete(ctx: ToolContext) -> None:
    tool = MemoryTool()
    assert (await tool.call({"action": "list"}, ctx)).content == "No notes yet."
    saved = await tool.call({"action": "write", "key": "conventions", "content": "# Use ruff"}, ctx)
    assert not saved.is_error
    assert (memory_dir(ctx) / "conventions.md").read_text(encoding="utf-8") == "# Use ruff"
    assert (
        await tool.call({"action": "read", "key": "conventions.md"}, ctx)
    ).content == "# Use ruff"
    assert (await tool.call({"action": "list"}, ctx)).content == "conventions"
    assert not (await tool.call({"action": "delete", "key": "conventions"}, ctx)).is_error
    missing = await tool.call({"action": "read", "key": "conventions"}, ctx)
    assert missing.is_error and "list" in missing.content


@pytest.mark.parametrize("key", ["../x", "a/b", "/etc/passwd", "..", ".hidden", "a" * 200, ""])
async def test_keys_cannot_escape(ctx: ToolContext, key: str) -> None:
    result = await MemoryTool().call({"action": "write", "key": key, "content": "x"}, ctx)
    assert result.is_error
    assert not (ctx.settings.home / "x.md").exists()
    assert not memory_dir(ctx).exists() or list(memory_dir(ctx).iterdir()) == []


async def test_symlinked_note_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret", encoding="utf-8")
    folder = memory_dir(ctx)
    folder.mkdir(parents=True)
    os.symlink(outside, folder / "leak.md")
    read = await MemoryTool().call({"action": "read", "key": "leak"}, ctx)
    assert read.is_error
    write = await MemoryTool().call({"action": "write", "key": "leak", "content": "pwn"}, ctx)
    assert write.is_error
    assert outside.read_text(encoding="utf-8") == "secret"


async def test_write_needs_content(ctx: ToolContext) -> None:
    result = await MemoryTool().call({"action": "write", "key": "k"}, ctx)
    assert result.is_error and "content" in result.content
