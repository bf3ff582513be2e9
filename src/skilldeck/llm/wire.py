"""Pieces both HTTP adapters share: tool-argument parsing, stream assembly, usage
estimates, and :class:`SDKModel` (client per loop, retried calls, stream relay).

How an SDK's exceptions become skilldeck errors is :mod:`skilldeck.llm.sdk_errors`.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import httpx2

from skilldeck.errors import ModelError
from skilldeck.llm.messages import (
    RAW_ARGUMENTS_KEY,
    AssistantMessage,
    Message,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolSpec,
    TurnComplete,
    Usage,
    collect_stream,
)
from skilldeck.llm.replies import BodyPeek, WholeReply, reply_error
from skilldeck.llm.retry import Failure, RetryPolicy, call_with_retries
from skilldeck.llm.sdk_errors import Endpoint, SDKErrors, classify_sdk_error

__all__ = [
    "LoopLocal",
    "SDKModel",
    "StreamState",
    "ToolCallAssembler",
    "estimate_tokens",
    "estimate_tokens_n",
    "estimate_usage",
    "parse_tool_arguments",
]


def estimate_tokens(text: str) -> int:
    """Rough token count (~4 characters per token) for when a server reports none."""
    return estimate_tokens_n(len(text))


def estimate_usage(
    messages: Sequence[Message], tools: Sequence[ToolSpec], turn: AssistantMessage
) -> Usage:
    """Usage for a turn whose server reported none, estimated from character counts.

    Deliberately cheap (no JSON serialisation of the history): it runs on every
    scripted turn, and the loop's per-turn overhead budget is a couple of milliseconds.
    """
    shown = sum(_chars(m) for m in messages)
    shown += sum(len(t.name) + len(t.description) + len(str(t.input_schema)) for t in tools)
    return Usage(
        input_tokens=estimate_tokens_n(shown), output_tokens=estimate_tokens_n(_chars(turn))
    )


def estimate_tokens_n(chars: int) -> int:
    return (chars + 3) // 4


def _chars(message: Message) -> int:
    if isinstance(message, AssistantMessage):
        return len(message.text) + sum(len(c.name) + len(str(c.input)) for c in message.tool_calls)
    return len(message.content)


class _Closeable(Protocol):
    async def close(self) -> None: ...


C = TypeVar("C", bound=_Closeable)


class LoopLocal(Generic[C]):
    """One SDK client per event loop.

    An HTTP connection pool belongs to the loop that opened it; a model reused from a
    second ``asyncio.run`` (``run_sync`` twice, a code skill's client) would otherwise
    fail with "Event loop is closed". A new loop gets a fresh client.
    """

    def __init__(self, factory: Callable[[], C]) -> None:
        self._factory = factory
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: C | None = None

    def get(self) -> C:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = self._factory()
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.close()
        self._client = None
        self._loop = None


def parse_tool_arguments(raw: str | None) -> dict[str, Any]:
    """The model's argument text as a dict; never raises.

    Empty text means no arguments. Text that is not a JSON object is kept whole under
    :data:`RAW_ARGUMENTS_KEY`, so the tool call still reaches the loop and the tool's
    validation tells the model what went wrong, instead of the whole turn failing.
    """
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {RAW_ARGUMENTS_KEY: raw}
    if not isinstance(value, dict):
        return {RAW_ARGUMENTS_KEY: raw}
    return value


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class ToolCallAssembler:
    """Collects streamed tool-call fragments by index into complete ``ToolCall``s."""

    _calls: dict[int, _PartialCall] = field(default_factory=dict)

    def add(
        self, index: int, *, id: str | None = None, name: str | None = None, fragment: str = ""
    ) -> None:
        call = self._calls.setdefault(index, _PartialCall())
        if id:
            call.id = id
        if name:
            call.name = name
        if fragment:
            call.arguments.append(fragment)

    def calls(self) -> list[ToolCall]:
        return [
            ToolCall(
                id=part.id or f"call_{index}",
                name=part.name,
                input=parse_tool_arguments("".join(part.arguments)),
            )
            for index, part in sorted(self._calls.items())
        ]


T = TypeVar("T")
Item = TypeVar("Item")
Item_co = TypeVar("Item_co", covariant=True)
Item_contra = TypeVar("Item_contra", contravariant=True)


class _EventStream(Protocol[Item_co]):
    """What both SDKs' ``AsyncStream`` offer: async iteration inside ``async with``."""

    def __aiter__(self) -> AsyncIterator[Item_co]: ...

    async def __aenter__(self) -> object: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> object: ...


class StreamState(ABC, Generic[Item_contra]):
    """Accumulates one streamed turn: text, tool-call fragments, usage, model. An
    adapter's subclass reads its SDK's stream items and names the stop reason."""

    def __init__(self, *, model: str) -> None:
        self.model = model
        self.text: list[str] = []
        self.calls = ToolCallAssembler()
        self.usage: Usage | None = None
        #: items that carried part of a reply (the subclass counts them in ``feed``)
        self.seen = 0

    @abstractmethod
    def feed(self, item: Item_contra, /) -> list[StreamEvent]:
        """Take one stream item; the events it yields to the caller."""

    @abstractmethod
    def stop_reason(self, *, has_calls: bool) -> str:
        """skilldeck's stop reason, with a fallback for streams that sent none."""

    def missing(self) -> str | None:
        """What the finished stream lacked to be a reply (None: it was one). The
        default wants at least one item the subclass recognised (:attr:`seen`)."""
        return None if self.seen else "a stream that held no reply events"

    def add_text(self, text: str) -> TextDelta:
        self.text.append(text)
        return TextDelta(text=text)

    def finish(self) -> AssistantMessage:
        calls = self.calls.calls()
        return AssistantMessage(
            text="".join(self.text),
            tool_calls=calls,
            usage=self.usage,
            model=self.model,
            stop_reason=self.stop_reason(has_calls=bool(calls)),
        )


class SDKModel(ABC, Generic[C]):
    """What an SDK-backed model is besides its dialect: identity, one client per event
    loop, retried calls mapped to skilldeck errors, and the stream relay that ends every
    streamed turn with a ``TurnComplete``. Subclasses set :attr:`sdk_errors` and
    translate messages; ``name`` is the spec the model was made from."""

    sdk_errors: ClassVar[SDKErrors]
    #: what the base URL should point at, for messages about replies that are not
    api: ClassVar[str]

    def __init__(
        self,
        *,
        name: str,
        model: str,
        endpoint: Endpoint,
        make_client: Callable[[], C],
        retry: RetryPolicy,
        streaming: bool = False,
        sampling: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self.endpoint = endpoint
        self.retry = retry
        #: ``respond`` streams too: a long prompt then waits only for the first chunk
        #: and between chunks, never for a whole reply (the SDK timeout is per read)
        self.streaming = streaming
        #: ``temperature``/``seed``/``top_p`` as the request's own keys, only those set
        self.sampling = dict(sampling or {})
        self._clients = LoopLocal(make_client)

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        """One turn: streamed and collected when :attr:`streaming`, else one JSON reply."""
        if self.streaming:
            return await collect_stream(self.stream(messages, tools))
        return await self._respond_whole(messages, tools)

    @abstractmethod
    async def _respond_whole(
        self, messages: list[Message], tools: list[ToolSpec]
    ) -> AssistantMessage:
        """One turn as a single (non-streamed) reply."""

    @abstractmethod
    def stream(self, messages: list[Message], tools: list[ToolSpec]) -> AsyncIterator[StreamEvent]:
        """The turn as deltas, ending with ``TurnComplete``."""

    @abstractmethod
    def _whole_turn(self, http: httpx2.Response, body: bytes) -> AssistantMessage:
        """A whole JSON reply as the turn, after the dialect's reply check (a body
        that is not a reply is a ModelError naming URL, status and body start)."""

    def _classify(self, exc: Exception) -> Failure | None:
        return classify_sdk_error(exc, sdk=self.sdk_errors, endpoint=self.endpoint)

    async def _with_retries(self, attempt: Callable[[], Awaitable[T]]) -> T:
        return await call_with_retries(
            attempt, policy=self.retry, classify=self._classify, model=self.name
        )

    async def _relay(
        self,
        open_stream: Callable[[], Awaitable[tuple[_EventStream[Item], BodyPeek]]],
        state: StreamState[Item],
        messages: list[Message],
        tools: list[ToolSpec],
    ) -> AsyncIterator[StreamEvent]:
        """Open the stream (with retries), then ``state``'s events for each of its items,
        then the assembled turn (with estimated usage when the server sent none). A
        failure mid-stream is mapped like one before it, but not retried: deltas were
        already yielded. A stream that is not a reply (chunks that are not JSON or not
        of the dialect's shape, or none at all) is a ModelError quoting its start. A
        server that ignores ``stream`` and sends one JSON body gets it checked and used
        as the whole turn (:meth:`_whole_turn`)."""
        try:
            source, peek = await self._with_retries(open_stream)
        except WholeReply as whole:
            turn = self._whole_turn(whole.http, whole.body)
            if turn.text:
                yield TextDelta(text=turn.text)
            if turn.usage is None:
                turn.usage = estimate_usage(messages, tools, turn)
            yield TurnComplete(message=turn)
            return
        async with source:
            try:
                async for item in source:
                    for event in self._feed(state, item, peek):
                        yield event
            except json.JSONDecodeError as exc:
                raise self._bad_reply(
                    exc.doc or peek.head, "a stream chunk that is not JSON"
                ) from exc
            except ModelError:
                raise
            except Exception as exc:
                failure = self._classify(exc)
                if failure is None:
                    raise
                raise failure.error from exc
        problem = state.missing()
        if problem is not None:
            raise self._bad_reply(peek.head, problem)
        turn = state.finish()
        if turn.usage is None:
            turn.usage = estimate_usage(messages, tools, turn)
        yield TurnComplete(message=turn)

    def _feed(self, state: StreamState[Item], item: Item, peek: BodyPeek) -> list[StreamEvent]:
        """``state.feed``; an item missing the fields it reads is the server's fault."""
        try:
            return state.feed(item)
        except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
            raise self._bad_reply(peek.head, "a stream chunk of the wrong shape") from exc

    def _bad_reply(self, body: bytes | str, problem: str) -> ModelError:
        return reply_error(self.endpoint, 200, body, problem, api=self.api)

    async def aclose(self) -> None:
        await self._clients.aclose()
