"""Background sub-agent runs: a result once finished, cancelled by Ctrl-C (cancel_all)
whether running or still waiting for a slot, and one slot limit shared by all."""

from __future__ import annotations

import threading

import anyio
import pytest

from skilldeck.agent.subagents.background import BackgroundRuns
from skilldeck.agent.subagents.task_tools import SubagentOutcome

pytestmark = pytest.mark.anyio


def finished(task_id: str) -> SubagentOutcome:
    return SubagentOutcome(task_id, "explore", "completed", "found it")


async def test_a_finished_run_reads_as_its_outcome() -> None:
    runs = BackgroundRuns(threading.BoundedSemaphore(1))
    announced: list[str] = []

    async def run() -> SubagentOutcome:
        return finished("task_1")

    runs.start(
        "task_1",
        run,
        subagent_type="explore",
        description="look",
        announce=lambda: announced.append("start"),
    )
    assert announced == ["start"] and runs.ids() == ["task_1"] and "task_1" in runs
    text = await runs.output("task_1", timeout=30)
    assert text.startswith("Sub-agent (explore) finished") and "found it" in text


async def test_cancel_all_stops_a_running_one_and_one_waiting_for_a_slot() -> None:
    slots = threading.BoundedSemaphore(1)
    runs = BackgroundRuns(slots)
    started = threading.Event()

    async def forever() -> SubagentOutcome:
        started.set()
        await anyio.sleep(600)
        return finished("task_1")

    runs.start("task_1", forever, subagent_type="explore", description="wait")
    runs.start("task_2", forever, subagent_type="plan", description="queued")
    assert started.wait(30)
    assert await runs.output("task_2", block=False) == "Task task_2 is still running (queued)."
    assert sorted(runs.cancel_all(grace=30)) == ["task_1", "task_2"]
    for task_id in ("task_1", "task_2"):
        assert "cancelled" in await runs.output(task_id, timeout=30)
    assert slots.acquire(blocking=False)  # both threads gave their slot back (or never took it)


async def test_a_failing_run_is_reported_not_raised() -> None:
    runs = BackgroundRuns(threading.BoundedSemaphore(2))

    async def broken() -> SubagentOutcome:
        raise RuntimeError("no model")

    runs.start("task_1", broken, subagent_type="explore", description="")
    text = await runs.output("task_1", timeout=30)
    assert "RuntimeError: no model" in text
