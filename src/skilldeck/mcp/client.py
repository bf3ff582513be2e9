"""Bring the tools of configured MCP servers into skilldeck as ordinary :class:`Tool`\\ s.

Config (``config.toml``)::

    [mcp.servers.github]
    command = "npx"
    args = ["-y", "@modelcontextprotocol/server-github"]
    env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }   # ${VAR} is expanded from the environment

    [mcp.servers.docs]
    url = "http://127.0.0.1:8000/mcp"            # streamable HTTP

Each remote tool becomes ``mcp__<server>__<tool>`` (so permission rules such as
``mcp__github__*`` can target it), with the server's input schema passed through
unchanged and validated by the server. Text content of a result is joined; an
``isError`` result becomes an error :class:`ToolResult` the model can act on.

:class:`MCPToolset` is an async context manager that starts every server, lists its
tools, and on exit shuts them all down (stdin closed, then the process tree killed
if it lingers). Each server lives in a task of the toolset's task group, so the
toolset must be entered and exited by the same task. A server that cannot start
(command not found, exits at once, speaks no MCP, no answer within the timeout)
raises :class:`~skilldeck.errors.MCPError` naming the server, its command, and the
tail of its stderr.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, TextIO

import anyio
from anyio.abc import TaskStatus
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from mcp_types import Tool as RemoteTool
from pydantic import BaseModel, ConfigDict

from skilldeck.config import MCPServerConfig, Settings
from skilldeck.errors import MCPError
from skilldeck.tools.base import Tool, ToolContext, ToolResult

DEFAULT_STARTUP_TIMEOUT = 30.0
_NAME_OK = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64  # OpenAI's limit on function names
_STDERR_TAIL = 1500


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, restricted to ``[A-Za-z0-9_-]`` and 64 characters."""
    name = f"mcp__{_NAME_OK.sub('_', server)}__{_NAME_OK.sub('_', tool)}"
    if len(name) <= _MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: _MAX_NAME - 9]}_{digest}"


class _AnyInput(BaseModel):
    """Remote tools validate their own input; locally anything passes through."""

    model_config = ConfigDict(extra="allow")


class RemoteMCPTool(Tool):
    """A tool of an MCP server. One subclass per remote tool (see :func:`remote_tool`)."""

    name: ClassVar[str] = "mcp"
    description: ClassVar[str] = ""
    Input: ClassVar[type[BaseModel]] = _AnyInput
    server: ClassVar[str] = ""
    remote_name: ClassVar[str] = ""
    schema: ClassVar[dict[str, Any]] = {}

    def __init__(self, client: Client, *, timeout: float | None = None) -> None:
        self._client = client
        self._timeout = timeout

    def input_schema(self) -> dict[str, Any]:
        return dict(self.schema) or {"type": "object", "properties": {}}

    async def call(self, raw_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await self.run(raw_input, ctx)

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        arguments = input.model_dump() if isinstance(input, BaseModel) else dict(input or {})
        try:
            result = await self._client.call_tool(
                self.remote_name, arguments, read_timeout_seconds=self._timeout
            )
        except Exception as e:  # the server's failure is the model's information
            return ToolResult.error(
                f"MCP server {self.server!r} failed on tool {self.remote_name!r}: "
                f"{type(e).__name__}: {e}"
            )
        return convert_result(result)


def remote_tool(
    server: str, remote: RemoteTool, client: Client, *, timeout: float | None = None
) -> RemoteMCPTool:
    """A :class:`RemoteMCPTool` instance for ``remote`` of ``server``."""
    hints = remote.annotations
    attrs = {
        "name": tool_name(server, remote.name),
        "description": remote.description or f"Tool {remote.name} of MCP server {server}.",
        "server": server,
        "remote_name": remote.name,
        "schema": dict(remote.input_schema or {}),
        "read_only": bool(hints and hints.read_only_hint),
    }
    cls = type(f"RemoteMCPTool_{attrs['name']}", (RemoteMCPTool,), attrs)
    tool: RemoteMCPTool = cls(client, timeout=timeout)
    return tool


def convert_result(result: CallToolResult) -> ToolResult:
    """Text blocks joined; other blocks described; structured content kept as data."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent | AudioContent):
            parts.append(f"[{block.type}: {block.mime_type}, {len(block.data) * 3 // 4} bytes]")
        elif isinstance(block, EmbeddedResource):
            res = block.resource
            text = res.text if isinstance(res, TextResourceContents) else "[binary content]"
            parts.append(f"[resource {res.uri}]\n{text}")
        elif isinstance(block, ResourceLink):
            parts.append(f"[resource link: {block.uri}]")
    content = "\n".join(parts)
    if not content and result.structured_content is not None:
        content = json.dumps(result.structured_content, ensure_ascii=False)
    return ToolResult(
        content=content, is_error=bool(result.is_error), data=result.structured_content
    )


# ---- connections ------------------------------------------------------------------------


@dataclass
class _Server:
    name: str
    config: MCPServerConfig
    client: Client | None = None
    tools: list[RemoteTool] = field(default_factory=list)
    stderr: TextIO | None = None

    def describe(self) -> str:
        if self.config.url:
            return self.config.url
        return shlex.join([self.config.command or "", *self.config.args])

    def stderr_tail(self) -> str:
        if self.stderr is None:
            return ""
        try:
            self.stderr.seek(0)
            text = self.stderr.read()
        except (OSError, ValueError):
            return ""
        return text[-_STDERR_TAIL:].strip()


class MCPToolset:
    """Start the configured MCP servers; ``tools`` holds their tools while entered."""

    def __init__(
        self,
        servers: Mapping[str, MCPServerConfig],
        *,
        cwd: Path | None = None,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        call_timeout: float | None = None,
    ) -> None:
        self._servers = [_Server(name, cfg) for name, cfg in servers.items()]
        self._cwd = cwd
        self._startup_timeout = startup_timeout
        self._call_timeout = call_timeout
        self._stack: AsyncExitStack | None = None
        self._closing = anyio.Event()
        self.tools: list[Tool] = []

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> MCPToolset:
        return cls(settings.mcp.servers, cwd=settings.workspace, **kwargs)

    async def __aenter__(self) -> MCPToolset:
        stack = AsyncExitStack()
        failures: list[str] = []
        try:
            tg = await stack.enter_async_context(anyio.create_task_group())
            for server in self._servers:  # kept open past a failure, for its message
                if server.config.command and not server.config.url:
                    # closed by the stack, not a with-block: it must outlive this loop
                    errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
                    server.stderr = stack.enter_context(errlog)
            stack.callback(self._closing.set)  # runs first on exit: servers wind down
            async with anyio.create_task_group() as starters:
                for server in self._servers:
                    starters.start_soon(self._start, tg, server, failures)
        except BaseException:
            await stack.aclose()
            raise
        if failures:
            await stack.aclose()  # outside the task group, so the error is not wrapped
            raise MCPError("\n".join(failures))
        self.tools = [
            remote_tool(s.name, t, s.client, timeout=self._call_timeout)
            for s in self._servers
            if s.client is not None
            for t in s.tools
        ]
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Shut every server down (idempotent). Call from the task that entered."""
        stack, self._stack = self._stack, None
        self.tools = []
        if stack is not None:
            await stack.aclose()

    async def _start(self, tg: anyio.abc.TaskGroup, server: _Server, failures: list[str]) -> None:
        try:
            with anyio.fail_after(self._startup_timeout):
                await tg.start(self._serve, server)
        except TimeoutError:
            failures.append(self._failure(server, f"no answer within {self._startup_timeout:g}s"))
        except Exception as e:
            failures.append(self._failure(server, _reason(e)))

    def _failure(self, server: _Server, reason: str) -> str:
        tail = server.stderr_tail()
        return (
            f"MCP server {server.name!r} ({server.describe()}) failed to start: {reason}."
            + (
                f"\n  its stderr ends with:\n    {tail.replace(chr(10), chr(10) + '    ')}"
                if tail
                else ""
            )
            + f"\n  Check [mcp.servers.{server.name}] in your skilldeck config."
        )

    async def _serve(self, server: _Server, *, task_status: TaskStatus[None]) -> None:
        """Run one connection: connect, list tools, report started, wait for close."""
        async with AsyncExitStack() as stack:
            client = Client(self._transport(server), cache=None)
            await stack.enter_async_context(client)
            listing = await client.list_tools()
            server.client, server.tools = client, list(listing.tools)
            task_status.started()
            await self._closing.wait()
            server.client = None

    def _transport(self, server: _Server) -> Any:
        cfg = server.config
        if cfg.url:
            return cfg.url
        if not cfg.command:
            raise MCPError(f"MCP server {server.name!r} has neither `command` nor `url` set.")
        params = StdioServerParameters(
            command=cfg.command,
            args=list(cfg.args),
            env={k: os.path.expandvars(v) for k, v in cfg.env.items()} or None,
            cwd=self._cwd,
        )
        return stdio_client(params, errlog=server.stderr or sys.stderr)


def _reason(e: BaseException) -> str:
    """The innermost meaningful message of ``e`` (task groups wrap errors in groups)."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    if isinstance(e, FileNotFoundError):
        return f"command not found ({e.filename or e})"
    if isinstance(e, PermissionError):
        return f"command not executable ({e.filename or e})"
    text = str(e) or type(e).__name__
    if "Connection closed" in text:
        return "the server exited or closed its output before completing the MCP handshake"
    return f"{type(e).__name__}: {text}"


async def mcp_tools(
    settings: Settings, **kwargs: Any
) -> tuple[list[Tool], Callable[[], Awaitable[None]]]:
    """Start ``settings.mcp.servers``; returns their tools and an async closer.

    The closer must be awaited by the same task that called this function.
    """
    toolset = MCPToolset.from_settings(settings, **kwargs)
    await toolset.__aenter__()
    return list(toolset.tools), toolset.aclose
