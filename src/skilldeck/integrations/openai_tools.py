"""skilldeck tools for OpenAI function calling (Chat Completions and Responses APIs).

::

    kit = OpenAIToolkit.from_skills()                       # the skill catalog as tools
    reply = client.chat.completions.create(model=..., messages=msgs, tools=kit.tools())
    msg = reply.choices[0].message
    if msg.tool_calls:
        msgs.append(msg)
        msgs += kit.dispatch_sync(msg.tool_calls)            # role "tool" messages

Tool calls are accepted as SDK objects or plain dicts; arguments arrive as the JSON
string the model wrote. Bad JSON or an unknown tool becomes an error result the model
reads — a model mistake never raises here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import anyio

from skilldeck.integrations.toolkit import Toolkit, field
from skilldeck.tools.base import ToolResult


class OpenAIToolkit(Toolkit):
    """Export tools as OpenAI function tools; run the model's tool calls."""

    def tools(self) -> list[dict[str, Any]]:
        """For Chat Completions ``tools=``."""
        return self.registry.to_openai()

    def response_tools(self) -> list[dict[str, Any]]:
        """For the Responses API ``tools=`` (flat function definitions)."""
        return [
            {
                "type": "function",
                "name": s.name,
                "description": s.description,
                "parameters": s.input_schema,
            }
            for s in self.registry.specs()
        ]

    async def dispatch(self, tool_calls: Iterable[Any]) -> list[dict[str, Any]]:
        """Run Chat Completions ``tool_calls`` → ``{"role": "tool", …}`` messages, or
        Responses ``function_call`` items → ``function_call_output`` items."""
        calls = [c for c in tool_calls if _kind(c) is not None]
        parsed = [_parse(c) for c in calls]
        runnable = [(name, args) for name, args, err in parsed if err is None]
        results = iter(await self.call_many(runnable))
        out = []
        for call, (_, _, err) in zip(calls, parsed, strict=True):
            result = ToolResult.error(err) if err is not None else next(results)
            out.append(_result_message(call, result))
        return out

    def dispatch_sync(self, tool_calls: Iterable[Any]) -> list[dict[str, Any]]:
        """:meth:`dispatch` for synchronous code (not inside a running event loop)."""
        calls = list(tool_calls)

        async def go() -> list[dict[str, Any]]:
            return await self.dispatch(calls)

        return anyio.run(go)


def _kind(call: Any) -> str | None:
    if field(call, "type") == "function_call":
        return "responses"
    if field(call, "function") is not None:
        return "chat"
    return None  # e.g. a Responses "message" or "reasoning" item


def _parse(call: Any) -> tuple[str, dict[str, Any], str | None]:
    if _kind(call) == "responses":
        name, raw = field(call, "name", ""), field(call, "arguments", "")
    else:
        function = field(call, "function")
        name, raw = field(function, "name", ""), field(function, "arguments", "")
    try:
        args = json.loads(raw) if isinstance(raw, str) and raw.strip() else (raw or {})
    except json.JSONDecodeError as e:
        return name, {}, f"Arguments for {name} are not valid JSON ({e}); send a JSON object."
    if not isinstance(args, dict):
        return name, {}, f"Arguments for {name} must be a JSON object."
    return name, args, None


def _text(result: ToolResult) -> str:
    return f"Error: {result.content}" if result.is_error else result.content


def _result_message(call: Any, result: ToolResult) -> dict[str, Any]:
    if _kind(call) == "responses":
        return {
            "type": "function_call_output",
            "call_id": field(call, "call_id"),
            "output": _text(result),
        }
    return {"role": "tool", "tool_call_id": field(call, "id"), "content": _text(result)}
