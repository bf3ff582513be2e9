"""skilldeck tools for the Anthropic Messages API (``tool_use`` / ``tool_result``).

::

    kit = AnthropicToolkit.from_skills()
    reply = client.messages.create(model=..., max_tokens=1024, messages=msgs, tools=kit.tools())
    if reply.stop_reason == "tool_use":
        msgs.append({"role": "assistant", "content": reply.content})
        msgs.append(kit.dispatch_sync(reply.content))       # one "user" message of results

Content blocks are accepted as SDK objects or dicts — the assistant turn's content,
one ``tool_use`` block alone, or the message itself; blocks other than ``tool_use``
(text, thinking) are ignored. Failures come back as ``is_error`` results. Content
with no ``tool_use`` block (the API refuses an empty user message) or what is not
content at all raises :class:`~skilldeck.errors.IntegrationError` naming what was
expected.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from skilldeck.errors import IntegrationError
from skilldeck.integrations.toolkit import Toolkit, arguments_of, field, run_sync, shown
from skilldeck.tools.base import ToolResult

_EXPECTED = "the assistant turn's content blocks (`response.content`) or one tool_use block"


class AnthropicToolkit(Toolkit):
    """Export tools in Anthropic form; answer ``tool_use`` blocks with ``tool_result``."""

    def tools(self) -> list[dict[str, Any]]:
        """For ``messages.create(tools=...)``."""
        return self.registry.to_anthropic()

    async def dispatch(self, content: Iterable[Any] | Any) -> dict[str, Any]:
        """``tool_use`` blocks of an assistant turn → the user message with the results.
        Raises IntegrationError when there is no ``tool_use`` block to answer."""
        uses = _tool_uses(content)
        parsed = [arguments_of(field(b, "name", ""), field(b, "input")) for b in uses]
        runnable = [
            (field(b, "name", ""), a) for b, (a, e) in zip(uses, parsed, strict=True) if not e
        ]
        results = iter(await self.call_many(runnable))
        blocks: list[dict[str, Any]] = []
        for block, (_, err) in zip(uses, parsed, strict=True):
            result = ToolResult.error(err) if err is not None else next(results)
            item: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": field(block, "id"),
                "content": result.content,
            }
            if result.is_error:
                item["is_error"] = True
            blocks.append(item)
        return {"role": "user", "content": blocks}

    def dispatch_sync(self, content: Iterable[Any] | Any) -> dict[str, Any]:
        """:meth:`dispatch` for synchronous code; inside a running event loop it raises
        IntegrationError (``await toolkit.dispatch(...)`` there)."""
        blocks = _tool_uses(content)

        async def go() -> dict[str, Any]:
            return await self.dispatch(blocks)

        return run_sync(go, self)


def _tool_uses(content: Any) -> list[Any]:
    """The ``tool_use`` blocks of ``content`` (see :meth:`AnthropicToolkit.dispatch`)."""
    if field(content, "type") == "tool_use":
        return [content]
    if field(content, "type") == "message" or field(content, "role") == "assistant":
        content = field(content, "content")  # the message itself
    if isinstance(content, str | bytes | dict) or not isinstance(content, Iterable):
        raise IntegrationError(
            f"dispatch() got {shown(content)}, not content blocks. Expected {_EXPECTED}."
        )
    blocks = list(content)
    for block in blocks:
        if not isinstance(field(block, "type"), str):
            raise IntegrationError(
                f"dispatch() got {shown(block)} among the content blocks, which is not one "
                f"(no type). Expected {_EXPECTED}."
            )
    uses = [b for b in blocks if field(b, "type") == "tool_use"]
    if not uses:
        kinds = ", ".join(sorted({str(field(b, "type")) for b in blocks})) or "nothing"
        raise IntegrationError(
            f"dispatch() got content with no tool_use block ({kinds}), so there is nothing "
            f"to answer (the API refuses a user message with no content). Dispatch only "
            f'when `response.stop_reason == "tool_use"`; expected {_EXPECTED}.'
        )
    return uses
