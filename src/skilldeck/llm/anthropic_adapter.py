"""``anthropic:`` models through the official SDK (Messages API with ``tool_use``).

Translation rules: system messages become the top-level ``system`` parameter; an
assistant turn is a ``text`` block plus ``tool_use`` blocks; tool results are
``tool_result`` blocks in a *user* message, and consecutive same-role messages are
merged into one (the API wants roles to alternate and all results of one turn
together). Credentials and URLs come from the factory; retries from
:mod:`skilldeck.llm.retry`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message as WireMessage
from anthropic.types import RawMessageStreamEvent

from skilldeck.llm.messages import (
    AssistantMessage,
    Message,
    StreamEvent,
    SystemMessage,
    ToolCall,
    ToolCallDelta,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from skilldeck.llm.replies import (
    BodyPeek,
    check_anthropic_message,
    check_json_reply,
    check_sse_reply,
)
from skilldeck.llm.retry import RetryPolicy
from skilldeck.llm.sdk_errors import Endpoint, SDKErrors
from skilldeck.llm.wire import SDKModel, StreamState

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "AnthropicModel",
    "from_anthropic_message",
    "to_anthropic_messages",
    "to_anthropic_tools",
]

#: the Messages API requires ``max_tokens``; every current Claude model allows this many
DEFAULT_MAX_TOKENS = 8192

_SDK_ERRORS = SDKErrors(
    status=anthropic.APIStatusError,
    connection=anthropic.APIConnectionError,
    timeout=anthropic.APITimeoutError,
    base=anthropic.AnthropicError,
)


def to_anthropic_messages(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """Our messages as ``(system, messages)`` for the Messages API."""
    system = [m.content for m in messages if isinstance(m, SystemMessage)]
    wire: list[dict[str, Any]] = []
    for message in messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    return ("\n\n".join(system) if system else None), wire


def _blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(message, UserMessage):
        return "user", [{"type": "text", "text": message.content or "(empty)"}]
    if isinstance(message, ToolResultMessage):
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": message.content,
        }
        if message.is_error:
            block["is_error"] = True
        return "user", [block]
    if isinstance(message, AssistantMessage):
        blocks: list[dict[str, Any]] = []
        if message.text:
            blocks.append({"type": "text", "text": message.text})
        blocks.extend(
            {"type": "tool_use", "id": c.id, "name": c.name, "input": c.input}
            for c in message.tool_calls
        )
        return "assistant", blocks
    return "system", []


def to_anthropic_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "name": tool.name,
            "description": tool.description,
            "input_schema": tool.input_schema or {"type": "object", "properties": {}},
        }
        for tool in tools
    ]


def _usage(raw: Any) -> Usage:
    """Input counts cache reads and writes too: together they are the prompt's size."""
    cached = int(getattr(raw, "cache_creation_input_tokens", 0) or 0) + int(
        getattr(raw, "cache_read_input_tokens", 0) or 0
    )
    return Usage(
        input_tokens=int(getattr(raw, "input_tokens", 0) or 0) + cached,
        output_tokens=int(getattr(raw, "output_tokens", 0) or 0),
    )


def from_anthropic_message(message: WireMessage) -> AssistantMessage:
    text: list[str] = []
    calls: list[ToolCall] = []
    for block in message.content:
        if block.type == "text":
            text.append(block.text)
        elif block.type == "tool_use":
            raw_input = block.input if isinstance(block.input, dict) else {}
            calls.append(ToolCall(id=block.id, name=block.name, input=dict(raw_input)))
    return AssistantMessage(
        text="".join(text),
        tool_calls=calls,
        usage=_usage(message.usage),
        model=message.model,
        stop_reason=message.stop_reason,
    )


#: the sampling settings the Messages API takes
ANTHROPIC_SAMPLING = ("temperature", "top_p")


class AnthropicModel(SDKModel[anthropic.AsyncAnthropic]):
    """A Messages API model. ``name`` is the spec it was made from."""

    sdk_errors = _SDK_ERRORS
    api = "an Anthropic Messages API"

    def __init__(
        self,
        *,
        name: str,
        model: str,
        endpoint: Endpoint,
        make_client: Callable[[], anthropic.AsyncAnthropic],
        retry: RetryPolicy,
        streaming: bool = False,
        sampling: Mapping[str, Any] | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        super().__init__(
            name=name,
            model=model,
            endpoint=endpoint,
            make_client=make_client,
            retry=retry,
            streaming=streaming,
            sampling=sampling,
        )
        self.max_tokens = max_tokens

    def _params(self, messages: list[Message], tools: list[ToolSpec]) -> dict[str, Any]:
        system, wire = to_anthropic_messages(messages)
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": wire,
        }
        if system:
            params["system"] = system
        if tools:
            params["tools"] = to_anthropic_tools(tools)
        # the Messages API has no seed; this SDK's create() no longer names temperature
        # or top_p, so they go as body fields
        sampling = {k: v for k, v in self.sampling.items() if k in ANTHROPIC_SAMPLING}
        if sampling:
            params["extra_body"] = sampling
        return params

    async def _respond_whole(
        self, messages: list[Message], tools: list[ToolSpec]
    ) -> AssistantMessage:
        params = self._params(messages, tools)
        client = self._clients.get()

        async def attempt() -> WireMessage:
            raw = await client.messages.with_raw_response.create(**params)
            body = await raw.read()
            check_json_reply(
                raw.http_response, body, self.endpoint, check_anthropic_message, api=self.api
            )
            result: WireMessage = await raw.parse()
            return result

        return from_anthropic_message(await self._with_retries(attempt))

    async def stream(
        self, messages: list[Message], tools: list[ToolSpec]
    ) -> AsyncIterator[StreamEvent]:
        """Text and ``input_json`` deltas as they arrive, then the assembled turn."""
        params = self._params(messages, tools)
        params["stream"] = True
        client = self._clients.get()

        async def attempt() -> tuple[anthropic.AsyncStream[RawMessageStreamEvent], BodyPeek]:
            raw = await client.messages.with_raw_response.create(**params)
            peek = await check_sse_reply(raw.http_response, self.endpoint, api=self.api)
            result: anthropic.AsyncStream[RawMessageStreamEvent] = await raw.parse()
            return result, peek

        async for event in self._relay(attempt, _StreamState(model=self.model), messages, tools):
            yield event

    def _whole_turn(self, http: httpx2.Response, body: bytes) -> AssistantMessage:
        check_json_reply(http, body, self.endpoint, check_anthropic_message, api=self.api)
        return from_anthropic_message(WireMessage.model_validate(json.loads(body)))


class _StreamState(StreamState[RawMessageStreamEvent]):
    """One streamed message; content block indexes map to tool-call indexes."""

    def __init__(self, *, model: str) -> None:
        super().__init__(model=model)
        self.tool_index: dict[int, int] = {}  # content block index → tool call index
        self.reported_stop: str | None = None

    def feed(self, event: RawMessageStreamEvent) -> list[StreamEvent]:
        if event.type in ("message_start", "content_block_start", "message_delta"):
            self.seen += 1
        if event.type == "message_start":
            self.model = event.message.model or self.model
            self.usage = _usage(event.message.usage)
        elif event.type == "content_block_start":
            block = event.content_block
            if block.type == "tool_use":
                index = self.tool_index.setdefault(event.index, len(self.tool_index))
                self.calls.add(index, id=block.id, name=block.name)
                return [ToolCallDelta(index=index, id=block.id, name=block.name)]
            if block.type == "text" and block.text:
                return [self.add_text(block.text)]
        elif event.type == "content_block_delta":
            return self._delta(event.index, event.delta)
        elif event.type == "message_delta":
            self.reported_stop = event.delta.stop_reason or self.reported_stop
            self._merge_usage(event.usage)
        return []

    def _delta(self, block_index: int, delta: Any) -> list[StreamEvent]:
        if delta.type == "text_delta":
            return [self.add_text(delta.text)]
        if delta.type == "input_json_delta" and block_index in self.tool_index:
            index = self.tool_index[block_index]
            self.calls.add(index, fragment=delta.partial_json)
            return [ToolCallDelta(index=index, arguments_fragment=delta.partial_json)]
        return []

    def _merge_usage(self, raw: Any) -> None:
        """``message_delta`` carries the final output count (and sometimes input)."""
        current = self.usage or Usage()
        update = _usage(raw)
        self.usage = Usage(
            input_tokens=update.input_tokens or current.input_tokens,
            output_tokens=update.output_tokens or current.output_tokens,
        )

    def stop_reason(self, *, has_calls: bool) -> str:
        return self.reported_stop or ("tool_use" if has_calls else "end_turn")
