"""skilldeck tools for the Anthropic Messages API (``tool_use`` / ``tool_result``).

::

    kit = AnthropicToolkit.from_skills()
    reply = client.messages.create(model=..., max_tokens=1024, messages=msgs, tools=kit.tools())
    if reply.stop_reason == "tool_use":
        msgs.append({"role": "assistant", "content": reply.content})
        msgs.append(kit.dispatch_sync(reply.content))       # one "user" message of results

Content blocks are accepted as SDK objects or dicts; blocks other than ``tool_use``
(text, thinking) are ignored. Failures come back as ``is_error`` results.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import anyio

from skilldeck.integrations.toolkit import Toolkit, field


class AnthropicToolkit(Toolkit):
    """Export tools in Anthropic form; answer ``tool_use`` blocks with ``tool_result``."""

    def tools(self) -> list[dict[str, Any]]:
        """For ``messages.create(tools=...)``."""
        return self.registry.to_anthropic()

    async def dispatch(self, content: Iterable[Any]) -> dict[str, Any]:
        """``tool_use`` blocks of an assistant turn → the user message with the results."""
        uses = [b for b in content if field(b, "type") == "tool_use"]
        calls = [(field(b, "name", ""), _input(field(b, "input"))) for b in uses]
        results = await self.call_many(calls)
        blocks: list[dict[str, Any]] = []
        for block, result in zip(uses, results, strict=True):
            item: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": field(block, "id"),
                "content": result.content,
            }
            if result.is_error:
                item["is_error"] = True
            blocks.append(item)
        return {"role": "user", "content": blocks}

    def dispatch_sync(self, content: Iterable[Any]) -> dict[str, Any]:
        """:meth:`dispatch` for synchronous code (not inside a running event loop)."""
        blocks = list(content)

        async def go() -> dict[str, Any]:
            return await self.dispatch(blocks)

        return anyio.run(go)


def _input(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if hasattr(raw, "model_dump"):
        dumped = raw.model_dump()
        return dumped if isinstance(dumped, dict) else {}
    return {}
