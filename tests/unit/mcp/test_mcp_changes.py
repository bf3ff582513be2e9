"""The MCP server's refresh poll: a failed scan is logged and the polling goes on."""

from __future__ import annotations

import anyio
import pytest

from skilldeck.errors import SkilldeckError
from skilldeck.mcp.changes import ListChangedNotifier, poll_for_changes

pytestmark = pytest.mark.anyio


async def test_a_failed_scan_does_not_stop_the_poll() -> None:
    calls: list[int] = []
    again = anyio.Event()

    async def check() -> bool:
        calls.append(len(calls))
        if len(calls) == 1:
            raise SkilldeckError("a root went away")
        again.set()
        return False

    async with anyio.create_task_group() as tg:
        tg.start_soon(poll_for_changes, check, 0.001)
        with anyio.fail_after(10):
            await again.wait()
        tg.cancel_scope.cancel()
    assert len(calls) >= 2


async def test_notify_forgets_a_closed_connection() -> None:
    class Closed:
        async def send_tool_list_changed(self) -> None:
            raise anyio.ClosedResourceError

    notifier = ListChangedNotifier()
    notifier.connections[1] = Closed()
    await notifier.notify()
    assert notifier.connections == {}
