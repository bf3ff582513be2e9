"""The stdio transport of ``skilldeck mcp serve``: the SDK's, plus answers to bad lines.

The SDK's ``stdio_server`` reads one JSON-RPC message per line and, when a line is
not one, hands the server an exception that it logs at debug level and drops: the
client waits forever for an answer. JSON-RPC 2.0 says a line that is not JSON gets
``-32700 Parse error`` and a JSON value that is not a request gets ``-32600 Invalid
Request`` (with the request's id when one can be read). :func:`stdio_transport`
keeps the SDK's reader and writer (and its claim of fd 1) and adds that answer:

* it reads fd 0 itself (moving fd 0 to the null device meanwhile, as the SDK does,
  so a handler or child process reads EOF instead of the protocol) through a file
  that remembers every line it hands the SDK's reader;
* the SDK's reader turns each line into exactly one item, in order, so the receive
  side pairs every rejected item with its line and answers it from the line (a
  blank line is skipped silently, as whitespace between messages).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager, suppress
from io import TextIOWrapper
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, BinaryIO, Self

import anyio
from anyio import AsyncFile
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError

from skilldeck.mcp.arguments import json_kind

if TYPE_CHECKING:  # the SDK's stream protocols, from a private module: for mypy only
    from mcp.shared._stream_protocols import ReadStream, WriteStream

log = logging.getLogger(__name__)

REQUEST_SHAPE = 'a request is {"jsonrpc": "2.0", "id": 1, "method": "...", "params": {...}}'


def reply_to_malformed(line: str) -> JSONRPCError | None:
    """The JSON-RPC error answering ``line``, a line that is not a JSON-RPC message
    (None for a blank line, which is not answered)."""
    if not line.strip():
        return None
    try:
        value = json.loads(line)
    except ValueError as e:
        where = f" ({e.msg} at column {e.colno})" if isinstance(e, json.JSONDecodeError) else ""
        message = f"Parse error: the line is not JSON{where}; send one JSON-RPC message per line."
        return _error(None, PARSE_ERROR, message)
    problem = _request_problem(value)
    return _error(
        _readable_id(value), INVALID_REQUEST, f"Invalid Request: {problem}; {REQUEST_SHAPE}."
    )


def _request_problem(value: Any) -> str:
    """What makes ``value`` (parsed JSON) no JSON-RPC 2.0 message, in a few words."""
    if isinstance(value, list):
        return "batches (JSON arrays) are not supported by MCP, send each message on its own line"
    if not isinstance(value, dict):
        return f"the message is {json_kind(value)}, not a JSON object"
    if value.get("jsonrpc") != "2.0":
        return 'the message needs "jsonrpc": "2.0"'
    if "id" in value and _readable_id(value) is None:
        return '"id" must be a string or an integer'
    if "method" in value and not isinstance(value["method"], str):
        return '"method" must be a string'
    if "params" in value and not isinstance(value["params"], dict):
        return '"params" must be a JSON object'
    if "method" not in value:
        return 'the message has no "method" (and is no valid response either)'
    return "the message does not match any JSON-RPC message shape"


def _readable_id(value: Any) -> str | int | None:
    if not isinstance(value, dict):
        return None
    rid = value.get("id")
    return rid if isinstance(rid, str | int) and not isinstance(rid, bool) else None


def _error(rid: str | int | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=code, message=message))


class _TappedFile(AsyncFile[str]):
    """An async text file that remembers each line it hands out, until taken."""

    def __init__(self, fp: IO[str]) -> None:
        super().__init__(fp)
        self.lines: deque[str] = deque()

    async def readline(self) -> str:
        line = await super().readline()
        if line:
            self.lines.append(line)
        return line


class _AnsweringReader:
    """The server's read stream: the SDK's items, minus the rejected ones, which are
    answered on the write stream instead (paired with their lines in order)."""

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        write: WriteStream[SessionMessage],
        lines: deque[str],
    ) -> None:
        self._inner = inner
        self._write = write
        self._lines = lines

    @property
    def last_context(self) -> Any:
        """The sender's contextvars of the last item (the SDK's dispatcher reads it)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            line = self._lines.popleft() if self._lines else ""
            if not isinstance(item, Exception):
                return item
            reply = reply_to_malformed(line)
            if reply is None:
                continue
            log.info("answered a malformed message: %s", reply.error.message)
            try:
                await self._write.send(SessionMessage(reply))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                log.debug("dropped the answer to a malformed message: write stream closed")

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class _UnownedTextWrapper(TextIOWrapper):
    """A text layer that never closes the stream under it (it may be sys.stdin's)."""

    def close(self) -> None:
        with suppress(ValueError):
            self.detach()


def _divert_fd0() -> int | None:
    """A private duplicate of fd 0, with fd 0 itself now reading the null device
    (None, fd 0 untouched, when that cannot be done)."""
    try:
        if sys.stdin.buffer.fileno() != 0:
            return None
        private = os.dup(0)
    except (AttributeError, OSError, ValueError):
        return None
    try:
        null = os.open(os.devnull, os.O_RDONLY)
    except OSError:
        os.close(private)
        return None
    try:
        os.dup2(null, 0)
    except OSError:
        os.close(private)
        return None
    finally:
        os.close(null)
    return private


@contextmanager
def _wire_stdin() -> Iterator[BinaryIO]:
    """The protocol's input: fd 0 read through a private duplicate while fd 0 itself
    reads the null device (so a handler or a child reads EOF, not the protocol),
    restored on exit. Best effort, as the SDK's: else sys.stdin's buffer in place."""
    private = _divert_fd0()
    if private is None:
        yield sys.stdin.buffer
        return
    try:
        # closefd=False: a worker thread may still be blocked reading it at exit
        yield os.fdopen(private, "rb", closefd=False)
    finally:
        with suppress(OSError):
            os.dup2(private, 0)


@asynccontextmanager
async def stdio_transport(
    stdin: AsyncFile[str] | None = None, stdout: AsyncFile[str] | None = None
) -> AsyncIterator[tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]]:
    """``(read_stream, write_stream)`` for ``Server.run``, over the process's stdin and
    stdout (or the given text files), answering malformed lines (see the module)."""
    with ExitStack() as stack:
        if stdin is None:
            wire = stack.enter_context(_wire_stdin())
            text: IO[str] = _UnownedTextWrapper(wire, encoding="utf-8", errors="replace")
        else:
            text = stdin.wrapped
        tapped = _TappedFile(text)
        async with stdio_server(stdin=tapped, stdout=stdout) as (read_stream, write_stream):
            yield _AnsweringReader(read_stream, write_stream, tapped.lines), write_stream
