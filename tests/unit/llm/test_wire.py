"""Shared wire helpers: argument parsing convention, fragment assembly, per-loop clients."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from skilldeck.llm.messages import RAW_ARGUMENTS_KEY, ToolCall
from skilldeck.llm.wire import LoopLocal, ToolCallAssembler, parse_tool_arguments


def test_parse_tool_arguments() -> None:
    assert parse_tool_arguments(None) == {}
    assert parse_tool_arguments("  ") == {}
    assert parse_tool_arguments('{"a": [1]}') == {"a": [1]}
    assert parse_tool_arguments('{"a": ') == {RAW_ARGUMENTS_KEY: '{"a": '}
    assert parse_tool_arguments("[1, 2]") == {RAW_ARGUMENTS_KEY: "[1, 2]"}


def test_assembler_orders_by_index_and_joins_fragments() -> None:
    assembler = ToolCallAssembler()
    assembler.add(1, id="b", name="Glob", fragment='{"pattern"')
    assembler.add(0, id="a", name="Read")
    assembler.add(1, fragment=': "*.py"}')
    assembler.add(2, name="Nameless")
    assert assembler.calls() == [
        ToolCall(id="a", name="Read", input={}),
        ToolCall(id="b", name="Glob", input={"pattern": "*.py"}),
        ToolCall(id="call_2", name="Nameless", input={}),
    ]


class _Client:
    def __init__(self) -> None:
        self.closed = False

    async def close(self) -> None:
        self.closed = True


def test_loop_local_gives_each_event_loop_its_own_client() -> None:
    made: list[_Client] = []

    def factory() -> _Client:
        made.append(_Client())
        return made[-1]

    holder = LoopLocal(factory)

    async def use_twice() -> bool:
        return holder.get() is holder.get()

    assert asyncio.run(use_twice())
    assert asyncio.run(use_twice())
    assert len(made) == 2

    async def close() -> None:
        holder.get()
        await holder.aclose()

    asyncio.run(close())
    assert made[-1].closed


def test_raw_arguments_reach_the_model_as_a_clear_tool_error(tmp_path: Path) -> None:
    """The convention end to end: unparseable arguments → an error result, not a crash."""
    from pydantic import BaseModel

    from skilldeck.config import Settings
    from skilldeck.tools.base import Tool, ToolContext, ToolResult

    class Echo(Tool):
        name = "Echo"
        description = "echo"

        class Input(BaseModel):
            text: str

        async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
            return ToolResult(content=input.text)

    ctx = ToolContext(
        session_id="s", workspace=tmp_path, settings=Settings(home=tmp_path, workspace=tmp_path)
    )
    result = asyncio.run(Echo().call(parse_tool_arguments('{"text": "unterminated'), ctx))
    assert result.is_error
    assert "not a JSON object" in result.content
    assert "unterminated" in result.content
    assert asyncio.run(Echo().call(parse_tool_arguments('{"text": "ok"}'), ctx)).content == "ok"
