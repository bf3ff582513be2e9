"""Helpers for the session service tests: scripts, a model a test can hold mid-turn."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from skilldeck.llm.messages import AssistantMessage, Message, StreamEvent, ToolSpec
from skilldeck.llm.scripted import ScriptedModel

QUESTION = {
    "question": "Which colour?",
    "header": "Colour",
    "options": [{"label": "red", "description": "warm"}, {"label": "blue", "description": "cold"}],
    "multiSelect": False,
}


def call(cid: str, name: str, **input: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "input": input}


def write_script(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


class HeldModel:
    """A scripted model that, while ``hold`` is set, stops after the first text delta of
    each turn until the test sets ``release`` (a run caught in the middle)."""

    def __init__(self, script: Path) -> None:
        self.inner = ScriptedModel(script)
        self.name = self.inner.name
        self.hold = True
        self.release = anyio.Event()
        self.reached = anyio.Event()

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return await self.inner.respond(messages, tools)

    async def stream(
        self, messages: list[Message], tools: list[ToolSpec]
    ) -> AsyncIterator[StreamEvent]:
        first = True
        async for chunk in self.inner.stream(messages, tools):
            yield chunk
            if first and self.hold:
                first = False
                self.reached.set()
                await self.release.wait()
