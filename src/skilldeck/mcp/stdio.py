"""The stdio transport of ``skilldeck mcp serve``: the SDK's, plus answers to bad lines.

The SDK's ``stdio_server`` reads one JSON-RPC message per line and, when a line is
not one, hands the server an exception that it logs at debug level and drops: the
client waits forever for an answer. :func:`stdio_transport` keeps the SDK's reader
and writer (and its claim of fd 1) and answers such a line as JSON-RPC 2.0 says
(``-32700 Parse error``, ``-32600 Invalid Request``; the answers are in
:mod:`.malformed`):

* it reads fd 0 itself (moving fd 0 to the null device meanwhile, as the SDK does,
  so a handler or child process reads EOF instead of the protocol) through a file
  that remembers every line it hands the SDK's reader;
* the SDK's reader turns each line into exactly one item, in order, so the receive
  side pairs every rejected item with its line and answers it from the line (a
  blank line is skipped silently, as whitespace between messages);
* a line the SDK reads as a notification although it has an ``"id"`` (``1.5``,
  ``true``, ``null``: no MCP request id) is answered instead of ignored;
* a line longer than :data:`MAX_LINE_CHARS` is discarded unread and answered;
* answering a bad line never ends serving: whatever goes wrong there is logged.
"""

from __future__ import annotations

import logging
import os
import sys
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager, suppress
from io import TextIOWrapper
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, BinaryIO, Self

if sys.platform != "win32":
    import fcntl

import anyio
from anyio import AsyncFile
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCNotification

from skilldeck.errors import MCPError
from skilldeck.mcp.malformed import (
    has_id,
    invalid_request,
    reply_to_malformed,
    reply_to_misread_request,
    writable,
)

if TYPE_CHECKING:  # the SDK's stream protocols, from a private module: for mypy only
    from mcp.shared._stream_protocols import ReadStream, WriteStream

log = logging.getLogger(__name__)

#: the longest line read (in characters, its newline not counted): a longer one is
#: discarded up to its newline, unread, and answered -32600
MAX_LINE_CHARS = 16 * 1024 * 1024
_DISCARD_CHUNK = 64 * 1024


def reply_to_oversized() -> JSONRPCError:
    """The answer to a line longer than :data:`MAX_LINE_CHARS` (discarded unread)."""
    return invalid_request(
        f"the message is too large (over {MAX_LINE_CHARS} characters on one line) and "
        "was discarded unread"
    )


class _TappedFile(AsyncFile[str]):
    """An async text file that remembers each line it hands out, until taken; a line
    longer than :data:`MAX_LINE_CHARS` is discarded unread, handed out as a blank
    line (which the SDK's reader rejects) and remembered as None."""

    def __init__(self, fp: IO[str]) -> None:
        super().__init__(fp)
        self.lines: deque[str | None] = deque()

    async def readline(self) -> str:
        line = await anyio.to_thread.run_sync(
            _read_line, self.wrapped, MAX_LINE_CHARS, limiter=self.limiter
        )
        if line is None:
            self.lines.append(None)
            return "\n"
        if line:
            self.lines.append(line)
        return line


def _read_line(fp: IO[str], limit: int) -> str | None:
    """The next line of ``fp`` ("" at the end), or None when it is longer than
    ``limit`` characters: then it is read up to its newline and dropped, in chunks."""
    line = fp.readline(limit + 1)
    if len(line) <= limit or line.endswith("\n"):
        return line
    while True:
        chunk = fp.readline(_DISCARD_CHUNK)
        if not chunk or chunk.endswith("\n"):
            return None


def _misread_request(item: SessionMessage | Exception, line: str | None) -> bool:
    """Whether the SDK read ``line`` as a notification although it has an ``"id"``."""
    if isinstance(item, Exception) or not isinstance(item.message, JSONRPCNotification):
        return False
    return line is not None and has_id(line)


class _AnsweringReader:
    """The server's read stream: the SDK's items, minus the rejected ones, which are
    answered on the write stream instead (paired with their lines in order)."""

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        write: WriteStream[SessionMessage],
        lines: deque[str | None],
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
            if isinstance(item, Exception) or _misread_request(item, line):
                await self._answer(line, item)
                continue
            return item

    async def _answer(self, line: str | None, item: SessionMessage | Exception) -> None:
        """Answer a line the server does not take. Never raises: a line, however bad,
        must not end serving."""
        try:
            if line is None:
                reply: JSONRPCError | None = reply_to_oversized()
            elif isinstance(item, Exception):
                reply = reply_to_malformed(line, item)
            else:
                reply = reply_to_misread_request(line)
            if reply is None:
                return
            reply = writable(reply)
        except Exception:
            log.exception("could not make the answer to a malformed message")
            reply = invalid_request("the message could not be read")
        log.info("answered a malformed message: %s", reply.error.message)
        try:
            await self._write.send(SessionMessage(reply))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            log.debug("dropped the answer to a malformed message: write stream closed")
        except Exception:
            log.exception("could not send the answer to a malformed message")

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


def _dup_above_std(fd: int) -> int:
    """A close-on-exec duplicate of ``fd`` numbered 3 or more, as the SDK makes its
    own: never fd 1 or 2, even when they are closed (the protocol copy would become
    "stdout" or "stderr" of everything that writes there)."""
    if sys.platform == "win32":  # pragma: no cover - no fcntl there
        duplicate = os.dup(fd)
        if duplicate <= 2:
            os.close(duplicate)
            raise OSError(f"the duplicate of fd {fd} landed on fd {duplicate}")
        return duplicate
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


def _divert_fd0() -> int | None:
    """A private duplicate of fd 0, with fd 0 itself now reading the null device
    (None, fd 0 untouched, when that cannot be done)."""
    try:
        if sys.stdin.buffer.fileno() != 0:
            return None
        private = _dup_above_std(0)
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


def _check_std_streams(need_stdin: bool, need_stdout: bool) -> None:
    """A process started with fd 0 or fd 1 closed has no sys.stdin or sys.stdout
    (None): one clear error, not an AttributeError deep in the transport."""
    missing = [
        name
        for name, needed, stream in (
            ("stdin", need_stdin, sys.stdin),
            ("stdout", need_stdout, sys.stdout),
        )
        if needed and stream is None
    ]
    if missing:
        raise MCPError(
            f"mcp serve: {' and '.join(missing)} is closed; the stdio transport reads "
            "requests from stdin and writes answers to stdout (a client starts the "
            "server with both as pipes, or use --transport http)."
        )


@asynccontextmanager
async def stdio_transport(
    stdin: AsyncFile[str] | None = None, stdout: AsyncFile[str] | None = None
) -> AsyncIterator[tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]]:
    """``(read_stream, write_stream)`` for ``Server.run``, over the process's stdin and
    stdout (or the given text files), answering malformed lines (see the module).

    Raises :class:`~skilldeck.errors.MCPError` when the process has no stdin or no
    stdout to speak the protocol on (started with it closed)."""
    _check_std_streams(stdin is None, stdout is None)
    with ExitStack() as stack:
        if stdin is None:
            wire = stack.enter_context(_wire_stdin())
            text: IO[str] = _UnownedTextWrapper(wire, encoding="utf-8", errors="replace")
        else:
            text = stdin.wrapped
        tapped = _TappedFile(text)
        async with stdio_server(stdin=tapped, stdout=stdout) as (read_stream, write_stream):
            yield _AnsweringReader(read_stream, write_stream, tapped.lines), write_stream
