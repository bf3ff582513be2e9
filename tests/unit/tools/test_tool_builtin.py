"""builtin_tools(): the names, read-only flags and schemas the model sees."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.config import Settings
from skilldeck.tools.base import ToolContext, ToolRegistry
from skilldeck.tools.builtin import BUILTIN_TOOL_NAMES, builtin_tools

READ_ONLY = {"Read", "Glob", "Grep", "WebFetch", "WebSearch", "TodoWrite", "AskUserQuestion"}


def test_names_and_order() -> None:
    assert [t.name for t in builtin_tools()] == list(BUILTIN_TOOL_NAMES)
    assert len(set(BUILTIN_TOOL_NAMES)) == 11


def test_read_only_flags() -> None:
    assert {t.name for t in builtin_tools() if t.read_only} == READ_ONLY


def test_fresh_instances() -> None:
    assert all(a is not b for a, b in zip(builtin_tools(), builtin_tools(), strict=True))


@pytest.mark.parametrize(
    ("name", "required"),
    [
        ("Read", {"file_path"}),
        ("Write", {"file_path", "content"}),
        ("Edit", {"file_path", "old_string", "new_string"}),
        ("MultiEdit", {"file_path", "edits"}),
        ("Glob", {"pattern"}),
        ("Grep", {"pattern"}),
        ("Bash", {"command"}),
        ("WebFetch", {"url", "prompt"}),
        ("WebSearch", {"query"}),
        ("TodoWrite", {"todos"}),
        ("AskUserQuestion", {"questions"}),
    ],
)
def test_schemas(name: str, required: set[str]) -> None:
    registry = ToolRegistry(builtin_tools())
    tool = registry.get(name)
    assert tool is not None
    schema = tool.input_schema()
    assert schema["type"] == "object"
    assert set(schema.get("required", [])) == required
    assert tool.description


def test_export_forms() -> None:
    registry = ToolRegistry(builtin_tools())
    openai = registry.to_openai()
    anthropic = registry.to_anthropic()
    assert {t["function"]["name"] for t in openai} == set(BUILTIN_TOOL_NAMES)
    assert {t["name"] for t in anthropic} == set(BUILTIN_TOOL_NAMES)
    todo = next(t for t in anthropic if t["name"] == "TodoWrite")
    item = todo["input_schema"]["$defs"]["TodoItem"]
    assert set(item["properties"]) == {"content", "status", "activeForm"}
    assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]


@pytest.mark.anyio
async def test_dispatch_through_registry(tmp_path: Path) -> None:
    ctx = ToolContext(session_id="t", workspace=tmp_path, settings=Settings(workspace=tmp_path))
    registry = ToolRegistry(builtin_tools())
    written = await registry.dispatch("Write", {"file_path": "a.txt", "content": "hi\n"}, ctx)
    assert not written.is_error
    read = await registry.dispatch("Read", {"file_path": "a.txt"}, ctx)
    assert read.content == "     1\thi"
