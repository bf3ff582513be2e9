"""skilldeck tools for OpenAI function calling (Chat Completions and Responses APIs).

::

    kit = OpenAIToolkit.from_skills()                       # the skill catalog as tools
    reply = client.chat.completions.create(model=..., messages=msgs, tools=kit.tools())
    msg = reply.choices[0].message
    if msg.tool_calls:
        msgs.append(msg)
        msgs += kit.dispatch_sync(msg.tool_calls)            # role "tool" messages

Tool calls are accepted as SDK objects or plain dicts — a list of them, one alone, a
flattened ``{"id", "name", "arguments"}`` dict, or the assistant message holding them;
arguments arrive as the JSON string the model wrote. Bad JSON or an unknown tool
becomes an error result the model reads — a model mistake never raises here. What is
not a tool call at all (None, a string, a message without tool calls) is the caller's
mistake: an :class:`~skilldeck.errors.IntegrationError` naming what was expected.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from skilldeck.errors import IntegrationError
from skilldeck.integrations.toolkit import Toolkit, arguments_of, field, run_sync, shown
from skilldeck.tools.base import ToolResult

_EXPECTED = (
    "the model's tool calls: Chat Completions `message.tool_calls` (a list, or one call) "
    "or the Responses API's `response.output` items"
)


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

    async def dispatch(self, tool_calls: Iterable[Any] | Any) -> list[dict[str, Any]]:
        """Run Chat Completions ``tool_calls`` → ``{"role": "tool", …}`` messages, or
        Responses ``function_call`` items → ``function_call_output`` items (other
        Responses items are skipped). One call alone is taken as a list of one.
        Raises IntegrationError for what is not a tool call (see the module docs)."""
        calls = _calls(tool_calls)
        parsed = [arguments_of(c.name, c.raw) for c in calls]
        runnable = [(c.name, args) for c, (args, err) in zip(calls, parsed, strict=True) if not err]
        results = iter(await self.call_many(runnable))
        out = []
        for call, (_, err) in zip(calls, parsed, strict=True):
            result = ToolResult.error(err) if err is not None else next(results)
            out.append(_result_message(call, result))
        return out

    def dispatch_sync(self, tool_calls: Iterable[Any] | Any) -> list[dict[str, Any]]:
        """:meth:`dispatch` for synchronous code; inside a running event loop it raises
        IntegrationError (``await toolkit.dispatch(...)`` there)."""
        calls = _calls(tool_calls)

        async def go() -> list[dict[str, Any]]:
            return await self.dispatch(calls)

        return run_sync(go, self)


class _Call(NamedTuple):
    """One tool call, whatever shape it came in: which API, its id, name, raw arguments."""

    responses: bool
    id: Any
    name: str
    raw: Any


def _call(item: Any) -> _Call | None:
    """``item`` as a call, or None when it is not one."""
    if isinstance(item, _Call):
        return item
    if field(item, "type") == "function_call":
        return _Call(
            True, field(item, "call_id"), field(item, "name", ""), field(item, "arguments")
        )
    function = field(item, "function")
    if function is not None:
        return _Call(
            False, field(item, "id"), field(function, "name", ""), field(function, "arguments")
        )
    if isinstance(item, dict) and isinstance(item.get("name"), str) and "arguments" in item:
        call_id = item.get("call_id", item.get("id"))  # flattened: {"id", "name", "arguments"}
        return _Call("call_id" in item, call_id, item["name"], item["arguments"])
    return None


def _calls(tool_calls: Any) -> list[_Call]:
    """The calls in ``tool_calls`` (see :meth:`OpenAIToolkit.dispatch`)."""
    one = _call(tool_calls)
    if one is not None:
        return [one]
    held = field(tool_calls, "tool_calls") if field(tool_calls, "role") == "assistant" else None
    if held:  # the assistant message itself
        tool_calls = held
    elif field(tool_calls, "role") == "assistant" or tool_calls is None:
        raise IntegrationError(
            f"dispatch() got {shown(tool_calls)}: there are no tool calls to run (the model "
            f"has answered). Expected {_EXPECTED}; dispatch only when it has some."
        )
    if isinstance(tool_calls, str | bytes | dict) or not isinstance(tool_calls, Iterable):
        raise IntegrationError(
            f"dispatch() got {shown(tool_calls)}, not a tool call. Expected {_EXPECTED}."
        )
    calls = []
    for item in tool_calls:
        call = _call(item)
        if call is not None:
            calls.append(call)
        elif not isinstance(field(item, "type"), str):  # a Responses item: message, reasoning
            raise IntegrationError(
                f"dispatch() got {shown(item)} among the tool calls, which is not one. "
                f"Expected {_EXPECTED}."
            )
    return calls


def _text(result: ToolResult) -> str:
    return f"Error: {result.content}" if result.is_error else result.content


def _result_message(call: _Call, result: ToolResult) -> dict[str, Any]:
    if call.responses:
        return {"type": "function_call_output", "call_id": call.id, "output": _text(result)}
    return {"role": "tool", "tool_call_id": call.id, "content": _text(result)}
