"""``openai:``, ``ollama:`` and ``openai-compat:`` models through the official SDK.

Chat Completions with tools is the dialect every OpenAI-compatible server speaks
(Ollama, vLLM, LM Studio, OpenRouter, Groq), so one adapter serves them all. This
module only translates: our messages ↔ wire dicts, and wire responses/chunks ↔
``AssistantMessage``/stream events. Credentials and URLs come from the factory;
retries from :mod:`skilldeck.llm.retry`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

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
    check_json_reply,
    check_openai_completion,
    check_sse_reply,
)
from skilldeck.llm.retry import RetryPolicy
from skilldeck.llm.sdk_errors import Endpoint, SDKErrors
from skilldeck.llm.wire import SDKModel, StreamState, estimate_usage, parse_tool_arguments

__all__ = ["OpenAIModel", "from_openai_completion", "to_openai_messages", "to_openai_tools"]

_SDK_ERRORS = SDKErrors(
    status=openai.APIStatusError,
    connection=openai.APIConnectionError,
    timeout=openai.APITimeoutError,
    base=openai.OpenAIError,
)

#: OpenAI finish reasons → the stop reasons every skilldeck model reports
STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
}


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages as Chat Completions ``messages``."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            wire.append({"role": "system", "content": message.content})
        elif isinstance(message, UserMessage):
            wire.append({"role": "user", "content": message.content})
        elif isinstance(message, AssistantMessage):
            wire.append(_assistant_to_wire(message))
        elif isinstance(message, ToolResultMessage):
            content = f"Error: {message.content}" if message.is_error else message.content
            wire.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": content})
    return wire


def _assistant_to_wire(message: AssistantMessage) -> dict[str, Any]:
    entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
    if message.tool_calls:
        entry["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.input)},
            }
            for call in message.tool_calls
        ]
    elif not message.text:
        entry["content"] = ""
    return entry


def to_openai_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema or {"type": "object", "properties": {}},
            },
        }
        for tool in tools
    ]


def _usage(raw: Any) -> Usage | None:
    if raw is None:
        return None
    return Usage(
        input_tokens=int(getattr(raw, "prompt_tokens", 0) or 0),
        output_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
    )


def from_openai_completion(completion: ChatCompletion, *, fallback_model: str) -> AssistantMessage:
    """A non-streamed completion as our assistant message (first choice)."""
    if not completion.choices:
        return AssistantMessage(model=completion.model or fallback_model, stop_reason="end_turn")
    choice = completion.choices[0]
    message = choice.message
    calls = [
        ToolCall(
            id=call.id,
            name=call.function.name,
            input=parse_tool_arguments(call.function.arguments),
        )
        for call in message.tool_calls or []
        if call.type == "function"
    ]
    return AssistantMessage(
        text=message.content or "",
        tool_calls=calls,
        usage=_usage(completion.usage),
        model=completion.model or fallback_model,
        stop_reason=STOP_REASONS.get(choice.finish_reason, choice.finish_reason),
    )


class OpenAIModel(SDKModel[openai.AsyncOpenAI]):
    """A chat-completions model. ``name`` is the spec it was made from."""

    sdk_errors = _SDK_ERRORS
    api = "an OpenAI-compatible API (usually .../v1)"

    def __init__(
        self,
        *,
        name: str,
        model: str,
        endpoint: Endpoint,
        make_client: Callable[[], openai.AsyncOpenAI],
        retry: RetryPolicy,
        streaming: bool = False,
        sampling: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        max_tokens_param: str = "max_tokens",
        stream_usage: bool = True,
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
        #: OpenAI itself wants ``max_completion_tokens``; compatible servers ``max_tokens``
        self.max_tokens_param = max_tokens_param
        #: ask for usage in streamed responses (``stream_options.include_usage``)
        self.stream_usage = stream_usage

    def _params(self, messages: list[Message], tools: list[ToolSpec]) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": to_openai_messages(messages)}
        if tools:
            params["tools"] = to_openai_tools(tools)
        if self.max_tokens is not None:
            params[self.max_tokens_param] = self.max_tokens
        params.update(self.sampling)  # temperature, seed, top_p: only those configured
        return params

    async def _respond_whole(
        self, messages: list[Message], tools: list[ToolSpec]
    ) -> AssistantMessage:
        params = self._params(messages, tools)
        client = self._clients.get()

        async def attempt() -> ChatCompletion:
            raw = await client.chat.completions.with_raw_response.create(**params)
            http = raw.http_response
            check_json_reply(
                http, http.content, self.endpoint, check_openai_completion, api=self.api
            )
            result: ChatCompletion = raw.parse()
            return result

        completion = await self._with_retries(attempt)
        turn = from_openai_completion(completion, fallback_model=self.model)
        if turn.usage is None:
            turn.usage = estimate_usage(messages, tools, turn)
        return turn

    async def stream(
        self, messages: list[Message], tools: list[ToolSpec]
    ) -> AsyncIterator[StreamEvent]:
        """Deltas as they arrive; tool-call fragments are assembled into the final turn."""
        params = self._params(messages, tools)
        params["stream"] = True
        if self.stream_usage:
            params["stream_options"] = {"include_usage": True}
        client = self._clients.get()

        create = client.chat.completions.with_raw_response.create

        async def attempt() -> tuple[openai.AsyncStream[ChatCompletionChunk], BodyPeek]:
            try:
                raw = await create(**params)
            except openai.BadRequestError as e:
                # some compatible servers reject stream_options: do without usage then
                if "stream_options" not in params or "stream_options" not in str(e):
                    raise
                self.stream_usage = False
                del params["stream_options"]
                raw = await create(**params)
            peek = await check_sse_reply(raw.http_response, self.endpoint, api=self.api)
            result: openai.AsyncStream[ChatCompletionChunk] = raw.parse()
            return result, peek

        async for event in self._relay(attempt, _StreamState(model=self.model), messages, tools):
            yield event

    def _whole_turn(self, http: httpx2.Response, body: bytes) -> AssistantMessage:
        check_json_reply(http, body, self.endpoint, check_openai_completion, api=self.api)
        completion = ChatCompletion.model_validate(json.loads(body))
        return from_openai_completion(completion, fallback_model=self.model)


class _StreamState(StreamState[ChatCompletionChunk]):
    """One streamed completion: the first choice's deltas, usage, finish reason."""

    def __init__(self, *, model: str) -> None:
        super().__init__(model=model)
        self.finish_reason: str | None = None

    def feed(self, chunk: ChatCompletionChunk) -> list[StreamEvent]:
        if chunk.model:
            self.model = chunk.model
        if chunk.usage is not None:
            self.usage = _usage(chunk.usage)
        events: list[StreamEvent] = []
        for choice in chunk.choices[:1]:
            self.seen += 1
            delta = choice.delta
            if delta.content:
                events.append(self.add_text(delta.content))
            for part in delta.tool_calls or []:
                fn = part.function
                name = fn.name if fn else None
                fragment = (fn.arguments if fn else None) or ""
                self.calls.add(part.index, id=part.id, name=name, fragment=fragment)
                events.append(
                    ToolCallDelta(
                        index=part.index, id=part.id, name=name, arguments_fragment=fragment
                    )
                )
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
        return events

    def missing(self) -> str | None:
        return None if self.seen else "a stream that held no completion choices"

    def stop_reason(self, *, has_calls: bool) -> str:
        reason = self.finish_reason or ("tool_calls" if has_calls else "stop")
        return STOP_REASONS.get(reason, reason)
