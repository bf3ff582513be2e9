"""Checks that a server's 200 answer is really a model reply, before the SDK trusts it.

The SDKs build their response objects without validation: a server that answers
HTTP 200 with HTML, ``{}``, ``{"choices": []}`` or a text/plain page gives a reply
with no text and no tool calls, which the agent loop would record as a *completed*
run with an empty answer (or a ``str`` where a completion was expected, and a
traceback). Every reply is therefore checked here for the few fields the adapters
read, and anything else becomes a :class:`~skilldeck.errors.ModelError` that names
the server URL, the HTTP status and the start of the body — the three things a user
needs to see that ``--base-url`` points at the wrong thing.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

import httpx2

from skilldeck.errors import ModelError

if TYPE_CHECKING:
    from skilldeck.llm.sdk_errors import Endpoint

__all__ = [
    "HEAD_BYTES",
    "BodyPeek",
    "WholeReply",
    "check_anthropic_message",
    "check_json_reply",
    "check_openai_completion",
    "check_sse_reply",
    "reply_error",
]

#: how much of a bad body a message quotes
HEAD_BYTES = 200
#: how much of a non-SSE streamed body is read to quote it (never the whole body)
_READ_CAP = 4096
#: the most of a JSON answer to a streamed request that is read to use it as a reply
_WHOLE_CAP = 16 * 1024 * 1024


def _head(body: bytes | str) -> str:
    """The first :data:`HEAD_BYTES` of ``body`` on one line, quoted."""
    raw = body.encode("utf-8", "replace") if isinstance(body, str) else body
    text = raw[:HEAD_BYTES].decode("utf-8", "replace")
    text = re.sub(r"\s+", " ", text).strip()
    more = "…" if len(raw) > HEAD_BYTES else ""
    return repr(text) + more if text else "(empty body)"


def reply_error(
    endpoint: Endpoint, status: int, body: bytes | str, problem: str, *, api: str
) -> ModelError:
    """One line: who answered, with what status, what is wrong, how it began, the fix."""
    return ModelError(
        f"{endpoint.spec} at {endpoint.base_url} answered HTTP {status} with {problem}: "
        f"{_head(body)}. Check that --base-url (or *_BASE_URL) points at {api}."
    )


def check_json_reply(
    http: httpx2.Response,
    body: bytes,
    endpoint: Endpoint,
    check: Callable[[Any], str | None],
    *,
    api: str,
) -> None:
    """Raise a ModelError unless ``body`` (of ``http``) is JSON that ``check`` accepts;
    ``check`` returns what is wrong, or None."""
    try:
        data = json.loads(body)
    except ValueError:
        kind = http.headers.get("content-type", "").split(";")[0].strip() or "no content type"
        raise reply_error(
            endpoint, http.status_code, body, f"a body that is not JSON ({kind})", api=api
        ) from None
    problem = check(data)
    if problem is not None:
        raise reply_error(endpoint, http.status_code, body, problem, api=api)


def check_openai_completion(data: Any) -> str | None:
    """What keeps ``data`` from being a Chat Completion the adapter can read."""
    if not isinstance(data, dict):
        return "JSON that is not an object"
    if data.get("error"):
        return "an error object instead of a completion"
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        return "a completion that has no choices"
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        return "a choice that has no message"
    if not isinstance(message.get("content"), str | None):
        return "a message whose content is not text"
    calls = message.get("tool_calls")
    if calls is not None and not (
        isinstance(calls, list)
        and all(isinstance(c, dict) and isinstance(c.get("function"), dict) for c in calls)
    ):
        return "malformed tool calls"
    return None


def check_anthropic_message(data: Any) -> str | None:
    """What keeps ``data`` from being a Messages API message the adapter can read."""
    if not isinstance(data, dict):
        return "JSON that is not an object"
    if data.get("type") == "error" or data.get("error"):
        return "an error object instead of a message"
    content = data.get("content")
    if not isinstance(content, list):
        return "a message that has no content list"
    if not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in content):
        return "content blocks without a type"
    return None


class BodyPeek(httpx2.AsyncByteStream):
    """Passes a streamed body through untouched, keeping its first bytes to quote."""

    def __init__(self, inner: httpx2.AsyncByteStream) -> None:
        self._inner = inner
        self.head = b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            if len(self.head) < HEAD_BYTES:
                self.head += chunk[: HEAD_BYTES - len(self.head)]
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class WholeReply(ModelError):
    """A streamed request answered with one JSON body (a server that ignores
    ``stream``): raised by :func:`check_sse_reply` with the body, which the adapter
    checks and uses as the whole turn (``SDKModel._relay``)."""

    def __init__(self, http: httpx2.Response, body: bytes) -> None:
        super().__init__(f"HTTP {http.status_code}: a JSON reply to a streamed request")
        self.http = http
        self.body = body


async def check_sse_reply(http: httpx2.Response, endpoint: Endpoint, *, api: str) -> BodyPeek:
    """A streamed answer must be ``text/event-stream``; a JSON body is read whole and
    handed back as :class:`WholeReply` (some servers ignore ``stream``); anything else
    is read (up to a cap) and refused with its start quoted. Returns the peek that will
    keep the stream's first bytes, for errors found while it is read."""
    kind = http.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "application/json":
        whole = b""
        async for chunk in http.aiter_bytes():
            whole += chunk
            if len(whole) > _WHOLE_CAP:
                break
        await http.aclose()
        raise WholeReply(http, whole)
    if kind != "text/event-stream":
        body = b""
        async for chunk in http.aiter_bytes():
            body += chunk
            if len(body) >= _READ_CAP:
                break
        await http.aclose()
        problem = f"a body of type {kind or '(none)'} instead of the text/event-stream asked for"
        raise reply_error(endpoint, http.status_code, body, problem, api=api)
    stream = http.stream
    assert isinstance(stream, httpx2.AsyncByteStream), "the SDKs' async clients stream async"
    peek = BodyPeek(stream)
    http.stream = peek
    return peek
