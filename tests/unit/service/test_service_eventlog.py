"""The event log: numbered history then live events, for late and early subscribers."""

from __future__ import annotations

import anyio
import pytest

from skilldeck.agent.events import DoneEvent, TextDeltaEvent, TextEvent
from skilldeck.service import EventLog, SessionEvent
from skilldeck.service.eventlog import STRIDE

pytestmark = pytest.mark.anyio


def text(t: str) -> TextEvent:
    return TextEvent(text=t)


def delta(t: str) -> TextDeltaEvent:
    return TextDeltaEvent(text=t)


async def collect(log: EventLog, after: int = -1) -> list[SessionEvent]:
    return [e async for e in log.follow(after)]


async def test_numbers_come_from_store_positions_and_deltas_fit_between() -> None:
    log = EventLog("s1")
    log.add_stored([text("a"), text("b")])
    assert log.stored == 2 and log.last_seq == 2 * STRIDE
    log.begin_run()
    first = log.append(delta("c"))
    second = log.append(delta("d"))
    whole = log.append(text("cd"))
    assert [first.seq, second.seq, whole.seq] == [2 * STRIDE + 1, 2 * STRIDE + 2, 3 * STRIDE]
    assert whole.to_dict()["seq"] == whole.seq and whole.to_dict()["text"] == "cd"
    assert [e.seq for e in log.history(after=STRIDE)] == [
        2 * STRIDE,
        *[e.seq for e in (first, second, whole)],
    ]


async def test_a_log_rebuilt_from_the_store_keeps_the_numbers_a_page_saw() -> None:
    live = EventLog("s1")
    live.begin_run()
    for event in [text("model"), delta("He"), delta("llo"), text("Hello")]:
        live.append(event)
    live.append(DoneEvent(session_id="s1", status="completed"))
    live.end_run(stored_now=3)
    rebuilt = EventLog("s1")  # what the store holds: the three non-delta events
    rebuilt.add_stored(
        [text("model"), text("Hello"), DoneEvent(session_id="s1", status="completed")]
    )
    stored = [e.seq for e in live.history() if e.event.type != "text_delta"]
    assert [e.seq for e in rebuilt.history()] == stored
    seen_by_page = live.history()[3].seq  # the page had the whole text
    assert [e.event.type for e in rebuilt.history(after=seen_by_page)] == ["done"]
    mid_text = live.history()[1].seq  # the page had one delta: the text comes again
    assert [e.event.type for e in rebuilt.history(after=mid_text)] == ["text", "done"]


async def test_a_subscriber_of_an_idle_session_gets_its_history_and_ends() -> None:
    log = EventLog("s1")
    log.add_stored([text("a"), DoneEvent(session_id="s1", status="paused")])
    got = await collect(log)
    assert [e.event.type for e in got] == ["text", "done"]
    assert await collect(log, after=got[-1].seq) == []


async def test_subscribers_attaching_at_any_moment_see_every_event_once() -> None:
    log = EventLog("s1")
    log.add_stored([text("history")])
    log.begin_run()
    seen: dict[str, list[int]] = {}

    async def subscriber(name: str, after: int) -> None:
        seen[name] = [e.seq async for e in log.follow(after)]

    numbers = [STRIDE]
    async with anyio.create_task_group() as tg:
        tg.start_soon(subscriber, "early", -1)
        for i in range(5):
            numbers.append(log.append(delta(f"d{i}")).seq)
            await anyio.sleep(0)
            if i == 2:
                tg.start_soon(subscriber, "late", -1)
                tg.start_soon(subscriber, "reload", numbers[2])
        numbers.append(log.append(DoneEvent(session_id="s1", status="completed")).seq)
        log.end_run(stored_now=2)
    assert seen["early"] == seen["late"] == numbers
    assert seen["reload"] == numbers[3:]
    assert numbers == sorted(set(numbers))


async def test_deltas_leave_the_log_when_the_next_run_begins_and_numbers_are_not_reused() -> None:
    log = EventLog("s1")
    log.begin_run()
    log.append(delta("He"))
    log.append(delta("llo"))
    log.append(text("Hello"))
    log.append(DoneEvent(session_id="s1", status="completed"))
    log.end_run(stored_now=2)
    assert not log.active and log.stored == 2 and log.idle()
    # a subscriber just after a fast run still sees its text stream
    assert [e.event.type for e in log.history()] == ["text_delta", "text_delta", "text", "done"]
    log.begin_run()
    assert [(e.seq, e.event.type) for e in log.history()] == [
        (STRIDE, "text"),
        (2 * STRIDE, "done"),
    ]
    assert log.append(text("next")).seq == 3 * STRIDE


async def test_an_unstored_done_goes_after_everything_and_before_the_next_stored_event() -> None:
    log = EventLog("s1")
    log.add_stored([text("a")])
    done = log.append_unstored(DoneEvent(session_id="s1", status="error"))
    assert STRIDE < done.seq < 2 * STRIDE and log.stored == 1
    assert log.append(text("b")).seq == 2 * STRIDE


async def test_forever_follows_later_runs_until_the_log_closes() -> None:
    log = EventLog("s1")
    got: list[int] = []

    async def follower() -> None:
        got.extend([e.seq async for e in log.follow(forever=True)])

    async with anyio.create_task_group() as tg:
        tg.start_soon(follower)
        await anyio.sleep(0)
        assert not log.idle()  # followed
        for run in range(2):
            log.begin_run()
            log.append(DoneEvent(session_id="s1", status="paused"))
            log.end_run(stored_now=run + 1)
            await anyio.sleep(0)
        log.close()
    assert got == [STRIDE, 2 * STRIDE]


async def test_a_slow_subscriber_still_gets_the_deltas_of_a_run_that_ended() -> None:
    log = EventLog("s1")
    log.begin_run()
    log.append(delta("a"))
    slow = log.follow()
    fast = log.follow()
    assert (await anext(slow)).seq == 1
    assert (await anext(fast)).seq == 1
    log.append(delta("b"))
    log.append(DoneEvent(session_id="s1", status="completed"))
    log.end_run(stored_now=1)
    assert [e.seq async for e in fast] == [2, STRIDE]
    log.begin_run()  # the next run: the deltas of the first may go...
    log.append(DoneEvent(session_id="s1", status="completed"))
    log.end_run(stored_now=2)
    got = [e.seq async for e in slow]  # ...but the slow one still gets them
    assert got == [2, STRIDE, 2 * STRIDE]
    assert [e.seq for e in log.history()] == [STRIDE, 2 * STRIDE]  # gone once both had them
