"""The event log: numbered history then live events, for late and early subscribers."""

from __future__ import annotations

import anyio
import pytest

from skilldeck.agent.events import DoneEvent, TextDeltaEvent, TextEvent
from skilldeck.service import EventLog, SessionEvent

pytestmark = pytest.mark.anyio


def text(t: str) -> TextEvent:
    return TextEvent(text=t)


async def collect(log: EventLog, after: int = -1) -> list[SessionEvent]:
    return [e async for e in log.follow(after)]


async def test_stored_history_takes_the_first_numbers_and_live_events_follow() -> None:
    log = EventLog("s1")
    log.add_stored([text("a"), text("b")])
    assert log.stored == 2
    log.begin_run()
    live = log.append(text("c"))
    assert [e.seq for e in log.history()] == [0, 1, 2]
    assert live.seq == 2 and live.to_dict()["seq"] == 2 and live.to_dict()["text"] == "c"
    assert [e.seq for e in log.history(after=0)] == [1, 2]


async def test_a_subscriber_of_an_idle_session_gets_its_history_and_ends() -> None:
    log = EventLog("s1")
    log.add_stored([text("a"), DoneEvent(session_id="s1", status="paused")])
    got = await collect(log)
    assert [e.event.type for e in got] == ["text", "done"]
    assert await collect(log, after=1) == []


async def test_subscribers_attaching_at_any_moment_see_every_event_once() -> None:
    log = EventLog("s1")
    log.add_stored([text("history")])
    log.begin_run()
    seen: dict[str, list[int]] = {}

    async def subscriber(name: str, after: int) -> None:
        seen[name] = [e.seq async for e in log.follow(after)]

    async with anyio.create_task_group() as tg:
        tg.start_soon(subscriber, "early", -1)
        for i in range(5):
            log.append(TextDeltaEvent(text=f"d{i}"))
            await anyio.sleep(0)
            if i == 2:
                tg.start_soon(subscriber, "late", -1)
                tg.start_soon(subscriber, "reload", 2)
        log.append(DoneEvent(session_id="s1", status="completed"))
        log.end_run(stored_now=2)
    assert seen["early"] == seen["late"] == list(range(7))
    assert seen["reload"] == [3, 4, 5, 6]


async def test_deltas_leave_the_log_when_the_run_ends_and_numbers_are_not_reused() -> None:
    log = EventLog("s1")
    log.begin_run()
    log.append(TextDeltaEvent(text="He"))
    log.append(TextDeltaEvent(text="llo"))
    log.append(text("Hello"))
    log.append(DoneEvent(session_id="s1", status="completed"))
    log.end_run(stored_now=2)
    assert [(e.seq, e.event.type) for e in log.history()] == [(2, "text"), (3, "done")]
    assert log.append(text("next")).seq == 4
    assert not log.active and log.stored == 2


async def test_forever_follows_later_runs_until_the_log_closes() -> None:
    log = EventLog("s1")
    got: list[int] = []

    async def follower() -> None:
        got.extend([e.seq async for e in log.follow(forever=True)])

    async with anyio.create_task_group() as tg:
        tg.start_soon(follower)
        await anyio.sleep(0)
        for run in range(2):
            log.begin_run()
            log.append(DoneEvent(session_id="s1", status="paused"))
            log.end_run(stored_now=run + 1)
            await anyio.sleep(0)
        log.close()
    assert got == [0, 1]


async def test_a_slow_subscriber_still_gets_the_deltas_of_a_run_that_ended() -> None:
    log = EventLog("s1")
    log.begin_run()
    log.append(TextDeltaEvent(text="a"))
    slow = log.follow()
    fast = log.follow()
    assert (await anext(slow)).seq == 0
    assert (await anext(fast)).seq == 0
    log.append(TextDeltaEvent(text="b"))
    log.append(DoneEvent(session_id="s1", status="completed"))
    log.end_run(stored_now=1)
    assert [e.seq async for e in fast] == [1, 2]
    assert [e.seq async for e in slow] == [1, 2]  # kept for it although the run ended
    assert [e.seq for e in log.history()] == [2]  # and dropped once both had them
