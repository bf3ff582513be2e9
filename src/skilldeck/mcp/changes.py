"""Following the skill folders from the MCP server: the refresh poll and the
list-changed notifications that tell connected clients the catalog changed.

Two kinds of client listen differently. On the 2026-07-28 protocol a client
subscribes through ``subscriptions/listen``: the server publishes on its
:class:`InMemorySubscriptionBus`. A handshake-era client (today's desktop apps) only
expects notifications when the server's capabilities say ``listChanged`` and gets
them straight down its connection, so :class:`ListChangedNotifier` advertises the
capability and remembers each such connection until it closes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from skilldeck.errors import SkilldeckError

__all__ = ["SCAN_BACKOFF", "ListChangedNotifier", "poll_for_changes"]

log = logging.getLogger(__name__)

#: pause between scans ≥ this many times the last scan's duration
SCAN_BACKOFF = 5.0
_ALL_LIST_CHANGED = NotificationOptions(
    prompts_changed=True, resources_changed=True, tools_changed=True
)


class ListChangedNotifier:
    """Sends tools/resources/prompts list-changed to every client, of either era."""

    def __init__(self) -> None:
        #: the 2026-07-28 protocol's subscriptions (give it to ``MCPServer``)
        self.bus = InMemorySubscriptionBus()
        #: handshake-era connections by id; each removes itself when it closes
        self.connections: dict[int, Any] = {}

    def attach(self, server: MCPServer[Any]) -> None:
        """Advertise list-changed in ``server``'s capabilities and track its
        handshake-era connections (a middleware)."""
        server.middleware.append(self._track_session)
        self._advertise_list_changed(server)

    @staticmethod
    def _advertise_list_changed(server: MCPServer[Any]) -> None:
        """Handshake-era clients only expect list-changed notifications when the
        server's capabilities say so; every transport builds them through this method."""
        low = server._lowlevel_server
        original = low.create_initialization_options

        def with_list_changed(
            notification_options: NotificationOptions | None = None,
            experimental_capabilities: dict[str, dict[str, Any]] | None = None,
            extensions: dict[str, dict[str, Any]] | None = None,
        ) -> Any:
            return original(
                notification_options or _ALL_LIST_CHANGED, experimental_capabilities, extensions
            )

        low.create_initialization_options = with_list_changed  # type: ignore[method-assign]

    async def _track_session(self, ctx: Any, call_next: Any) -> Any:
        """Remember handshake-era connections so :meth:`notify` can reach them.

        The SDK hands middleware a per-request session; the connection behind it
        (not exposed publicly) outlives the request and has a teardown stack we use
        to forget it when the client goes away.
        """
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            conn = getattr(ctx.session, "_connection", None)
            if conn is not None and id(conn) not in self.connections:
                self.connections[id(conn)] = conn
                conn.exit_stack.callback(self.connections.pop, id(conn), None)
        return await call_next(ctx)

    async def notify(self) -> None:
        """Publish the three list-changed events, and send them down each handshake-era
        connection (a closed one is forgotten)."""
        for event in (ToolsListChanged(), ResourcesListChanged(), PromptsListChanged()):
            await self.bus.publish(event)
        for key, conn in list(self.connections.items()):
            try:
                await conn.send_tool_list_changed()
                await conn.send_resource_list_changed()
                await conn.send_prompt_list_changed()
            except (anyio.ClosedResourceError, anyio.BrokenResourceError) as e:
                log.debug("dropping a closed MCP connection: %s", e)
                self.connections.pop(key, None)


async def poll_for_changes(check: Callable[[], Awaitable[object]], poll_interval: float) -> None:
    """Call ``check`` (a re-scan that notifies on change) forever.

    The pause between scans is at least ``poll_interval`` and at least
    :data:`SCAN_BACKOFF` times the last scan's duration, so re-scanning a huge
    catalog never takes more than a small share of the machine. A failed scan (a
    broken root) is logged and the polling goes on.
    """
    delay = poll_interval
    while True:
        await anyio.sleep(delay)
        started = time.monotonic()
        try:
            await check()
        except SkilldeckError as e:
            log.warning("skill refresh failed: %s", e)
        delay = max(poll_interval, SCAN_BACKOFF * (time.monotonic() - started))
