"""The provider-neutral message model, and the ``Model`` protocol every adapter meets.

Messages are a discriminated union on ``role`` with one serializer
(:data:`MESSAGE_ADAPTER`), so the session store saves and reloads them exactly.
Adapters only translate these to and from a provider's wire format.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field, TypeAdapter

from skilldeck.errors import ModelError


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )


class ToolCall(BaseModel):
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class SystemMessage(BaseModel):
    role: Literal["system"] = "system"
    content: str


class UserMessage(BaseModel):
    role: Literal["user"] = "user"
    content: str
    #: why skilldeck (not the user) added this message, e.g. "skill-hint", "skill-body",
    #: "context-marker"; None for what the user typed
    meta: str | None = None


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage | None = None
    model: str | None = None
    stop_reason: str | None = None


class ToolResultMessage(BaseModel):
    role: Literal["tool"] = "tool"
    tool_call_id: str
    name: str
    content: str
    is_error: bool = False


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolResultMessage,
    Field(discriminator="role"),
]
MESSAGE_ADAPTER: TypeAdapter[Message] = TypeAdapter(Message)


class ToolSpec(BaseModel):
    """What the model is shown of a tool."""

    name: str
    description: str
    input_schema: dict[str, Any]


# ---- streaming ---------------------------------------------------------------


class TextDelta(BaseModel):
    type: Literal["text_delta"] = "text_delta"
    text: str


class ToolCallDelta(BaseModel):
    type: Literal["tool_call_delta"] = "tool_call_delta"
    index: int
    id: str | None = None
    name: str | None = None
    arguments_fragment: str = ""


class TurnComplete(BaseModel):
    type: Literal["turn_complete"] = "turn_complete"
    message: AssistantMessage


StreamEvent = TextDelta | ToolCallDelta | TurnComplete


@runtime_checkable
class Model(Protocol):
    """A language model that can take tool calls. ``name`` is ``provider:model``."""

    name: str

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        """One assistant turn for the conversation so far."""
        ...

    def stream(self, messages: list[Message], tools: list[ToolSpec]) -> AsyncIterator[StreamEvent]:
        """The same turn as deltas; the last event is always ``TurnComplete``."""
        ...


@runtime_checkable
class LLMClient(Protocol):
    """The small interface handed to code skills."""

    async def complete(self, prompt: str, system: str | None = None) -> str: ...


#: When a model sends tool-call arguments that are not a JSON object, adapters keep the
#: raw text under this key (the call's only key) instead of failing the turn, so the
#: tool's input validation reports it back to the model as an error result it can fix.
RAW_ARGUMENTS_KEY = "_raw_arguments"


async def collect_stream(events: AsyncIterator[StreamEvent]) -> AssistantMessage:
    """Drain a ``Model.stream`` iterator and return its final assistant message."""
    final: AssistantMessage | None = None
    async for event in events:
        if isinstance(event, TurnComplete):
            final = event.message
    if final is None:
        raise ModelError("The model stream ended without completing the turn.")
    return final
