"""SessionService in one process: runs, subscribers, replies, cancel, views, isolation."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from service_fakes import QUESTION, HeldModel, call, write_script

from skilldeck.agent.events import ToolResultEvent
from skilldeck.errors import SessionError, SkillNotFoundError
from skilldeck.service import SessionEvent, SessionService
from skilldeck.service.eventlog import STRIDE

pytestmark = pytest.mark.anyio


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def types(items: list[SessionEvent]) -> list[str]:
    return [i.event.type for i in items]


async def drain(service: SessionService, sid: str, after: int = -1) -> list[SessionEvent]:
    return [item async for item in service.subscribe(sid, after=after)]


async def test_a_session_pauses_for_an_answer_and_an_approval_and_completes(
    tmp_path: Path, work: Path
) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {
                "text": "Let me ask.",
                "tool_calls": [call("q1", "AskUserQuestion", questions=[QUESTION])],
            },
            {
                "text": "Writing.",
                "tool_calls": [call("w1", "Write", file_path="c.txt", content="blue")],
            },
            {"text": "All done."},
        ],
    )
    async with SessionService(model=f"scripted:{script}", cwd=work) as service:
        sid = await service.start("pick a colour")
        first = await drain(service, sid)
        assert types(first)[-3:] == ["tool_call", "ask_user", "done"]
        assert first[-1].event.status == "paused"  # type: ignore[union-attr]
        detail = service.show(sid)
        assert detail.summary.waiting_for == "ask_user" and detail.last_seq == first[-1].seq
        [asked] = detail.pending
        assert (asked.call_id, asked.kind, asked.questions[0]["header"]) == (
            "q1",
            "ask_user",
            "Colour",
        )
        assert detail.messages[0] == {"seq": 1, "role": "user", "text": "pick a colour"}

        assert await service.answer(sid, "q1", {"Colour": "blue"}) is True
        second = await drain(service, sid, after=detail.last_seq)
        assert second[0].seq == detail.last_seq + STRIDE  # the next stored event
        assert "permission_request" in types(second)
        [perm] = service.show(sid).pending
        assert (perm.call_id, perm.kind, perm.tool) == ("w1", "permission", "Write")

        assert await service.approve(sid, "w1", "allow") is True
        assert await service.wait(sid) == "completed"
        third = await drain(service, sid, after=second[-1].seq)
        assert third[-1].event.type == "done" and third[-1].event.status == "completed"  # type: ignore[union-attr]
    assert (work / "c.txt").read_text() == "blue"
    answered = next(e.event for e in second if isinstance(e.event, ToolResultEvent))
    assert '"Which colour?"="blue"' in answered.content


async def test_late_subscribers_get_history_then_live_without_gaps_or_duplicates(
    tmp_path: Path, work: Path
) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"text": "one two three four five six"}])
    model = HeldModel(script)
    async with SessionService(model=model, cwd=work) as service:
        sid = await service.start("count")
        await model.reached.wait()  # the run is held after its first text delta
        assert service.running(sid) and service.list()[0].running_here
        seen: dict[str, list[int]] = {}

        async def follow(name: str, after: int) -> None:
            seen[name] = [i.seq async for i in service.subscribe(sid, after=after)]

        async with anyio.create_task_group() as tg:
            tg.start_soon(follow, "early", -1)
            await anyio.sleep(0)
            tg.start_soon(follow, "reload", STRIDE)  # a page that had seen the first event
            await anyio.sleep(0)
            model.release.set()
        assert await service.wait(sid) == "completed"
        after_run = [i.seq for i in await drain(service, sid)]
    early = seen["early"]
    assert early == sorted(set(early)) and len(early) > 5
    assert seen["reload"] == early[1:]
    assert after_run == early  # the latest run's deltas stay for a subscriber after it


async def test_cancel_stores_cancelled_and_the_session_resumes(tmp_path: Path, work: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"text": "slow answer here"}])
    model = HeldModel(script)
    async with SessionService(model=model, cwd=work) as service:
        sid = await service.start("be slow")
        await model.reached.wait()
        assert await service.cancel(sid) is True
        assert service.store.get(sid).status == "cancelled"
        assert service.store.lease(sid) is None
        events = await drain(service, sid)
        assert events[-1].event.type == "done" and events[-1].event.status == "cancelled"  # type: ignore[union-attr]
        assert await service.cancel(sid) is False
        model.hold = False
        await service.resume(sid)
        assert await service.wait(sid) == "completed"
        more = await drain(service, sid, after=events[-1].seq)
        assert more[-1].event.status == "completed"  # type: ignore[union-attr]


async def test_leaving_the_service_cancels_its_runs(tmp_path: Path, work: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"text": "never finished"}])
    model = HeldModel(script)
    async with SessionService(model=model, cwd=work) as service:
        sid = await service.start("hang")
        await model.reached.wait()
        store = service.store
    assert store is not None
    async with SessionService(model=model, cwd=work) as again:
        assert again.store.get(sid).status == "cancelled"


async def test_allow_one_call_and_deny_another_of_the_same_turn(tmp_path: Path, work: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {
                "tool_calls": [
                    call("a", "Write", file_path="a.txt", content="A"),
                    call("b", "Write", file_path="b.txt", content="B"),
                ]
            },
            {"text": "Done."},
        ],
    )
    async with SessionService(model=f"scripted:{script}", cwd=work) as service:
        sid = await service.start("write two files")
        await drain(service, sid)
        assert [p.call_id for p in service.show(sid).pending] == ["a", "b"]
        assert await service.approve(sid, "a", "allow") is False  # b still waits
        assert service.show(sid).summary.status == "paused"
        assert await service.approve(sid, "b", "deny") is True
        assert await service.wait(sid) == "completed"
        results = {
            e.event.id: e.event
            for e in await drain(service, sid)
            if isinstance(e.event, ToolResultEvent)
        }
        tools = [m for m in service.show(sid).messages if m["role"] == "tool"]
    assert (work / "a.txt").read_text() == "A" and not (work / "b.txt").exists()
    assert results["b"].is_error and "denied" in results["b"].content
    assert [m["tool_call_id"] for m in tools] == ["a", "b"]  # recorded in call order


async def test_allow_always_is_remembered_for_the_rest_of_the_session(
    tmp_path: Path, work: Path
) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {"tool_calls": [call("w1", "Write", file_path="one.txt", content="1")]},
            {"tool_calls": [call("w2", "Write", file_path="two.txt", content="2")]},
            {"text": "Done."},
        ],
    )
    async with SessionService(model=f"scripted:{script}", cwd=work) as service:
        sid = await service.start("write twice")
        await drain(service, sid)
        assert await service.approve(sid, "w1", "always") is True
        assert await service.wait(sid) == "completed"  # w2 did not ask
        events = await drain(service, sid)
    assert types(events).count("permission_request") == 1
    assert (work / "two.txt").read_text() == "2"


async def test_wrong_replies_and_states_are_refused_clearly(tmp_path: Path, work: Path) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [{"tool_calls": [call("w1", "Write", file_path="x.txt", content="x")]}, {"text": "ok"}],
    )
    async with SessionService(model=f"scripted:{script}", cwd=work) as service:
        with pytest.raises(SkillNotFoundError):
            await service.start("x", skills=["no-such-skill"])
        sid = await service.start("write")
        await service.wait(sid)
        with pytest.raises(SessionError, match="waiting for a permission decision"):
            await service.answer(sid, "w1", "yes")
        with pytest.raises(SessionError, match="waiting for approval"):
            await service.resume(sid)
        with pytest.raises(SessionError, match="paused"):
            await service.send(sid, "more")
        await service.approve(sid, "w1", "allow")
        await service.wait(sid)
        with pytest.raises(SessionError, match="not waiting for a reply"):
            await service.approve(sid, "w1", "allow")
    with pytest.raises(SessionError, match="not open"):
        service.list()


async def test_a_finished_session_takes_a_next_message(tmp_path: Path, work: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"text": "first"}, {"text": "second"}])
    async with SessionService(model=f"scripted:{script}", cwd=work) as service:
        sid = await service.start("hello")
        await service.wait(sid)
        await service.send(sid, "and again")
        assert await service.wait(sid) == "completed"
        texts = [m["text"] for m in service.show(sid).messages]
    assert texts == ["hello", "first", "and again", "second"]


async def test_many_sessions_at_once_each_see_only_their_own_events(
    tmp_path: Path, work: Path
) -> None:
    count = 8
    lines = []
    for n in range(count):
        tag = f"agent{n:03d}"
        lines += [
            {
                "for": tag,
                "text": f"{tag} thinking",
                "tool_calls": [
                    call(
                        f"{tag}-t",
                        "TodoWrite",
                        todos=[
                            {"content": f"{tag} todo", "status": "in_progress", "activeForm": tag}
                        ],
                    )
                ],
            },
            {"for": tag, "text": f"{tag} done"},
        ]
    script = write_script(tmp_path / "s.jsonl", lines)
    async with SessionService(model=f"scripted:{script}", cwd=work) as service:
        sids: dict[str, str] = {}
        seen: dict[str, list[SessionEvent]] = {}

        async def one(n: int) -> None:
            tag = f"agent{n:03d}"
            sids[tag] = await service.start(f"task for {tag}")
            seen[tag] = await drain(service, sids[tag])

        async with anyio.create_task_group() as tg:
            for n in range(count):
                tg.start_soon(one, n)
        for tag, sid in sids.items():
            assert service.store.get(sid).status == "completed"
            dumped = " ".join(i.event.model_dump_json() for i in seen[tag])
            others = [t for t in sids if t != tag and t in dumped]
            assert not others, f"{tag} saw events of {others}"
            assert {i.session_id for i in seen[tag]} == {sid}
            assert service.show(sid).todos == [
                {"content": f"{tag} todo", "status": "in_progress", "activeForm": tag}
            ]
        assert len({s.id for s in service.list()}) == count


async def test_event_numbers_survive_a_forgotten_log_and_a_new_service(
    tmp_path: Path, work: Path
) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"text": "hello there"}])
    async with SessionService(model=f"scripted:{script}", cwd=work) as service:
        sid = await service.start("greet")
        live = [(i.seq, i.event.type) async for i in service.subscribe(sid)]
        await service.wait(sid)
        kept = [(i.seq, i.event.type) async for i in service.subscribe(sid)]
        service._live.forget_idle(time.monotonic() + 1)  # as after IDLE_SECONDS
        assert sid not in service._live
        rebuilt = [(i.seq, i.event.type) async for i in service.subscribe(sid)]
    async with SessionService(cwd=work) as restarted:
        again = [(i.seq, i.event.type) async for i in restarted.subscribe(sid)]
    stored = [(n, t) for n, t in kept if n % STRIDE == 0]
    assert rebuilt == again == stored  # the same numbers (the deltas were live only)
    assert kept == live


async def test_a_sub_agent_streams_into_its_parents_session_and_does_not_end_it(
    tmp_path: Path, work: Path
) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [
            {
                "text": "Delegating.",
                "tool_calls": [
                    call(
                        "t1",
                        "Task",
                        description="look around",
                        prompt="child: list files",
                        subagent_type="general-purpose",
                    )
                ],
            },
            {"for": "child: list files", "text": "child found nothing"},
            {"text": "Parent done."},
        ],
    )
    async with SessionService(model=f"scripted:{script}", cwd=work) as service:
        sid = await service.start("delegate something")
        events = [i.event async for i in service.subscribe(sid)]
        assert await service.wait(sid) == "completed"
        listed = service.list()
    kinds = [(e.type, e.is_sub_agent) for e in events]
    assert ("subagent_start", False) in kinds or ("subagent_start", True) in kinds
    assert ("done", True) in kinds  # the child's end ...
    assert kinds[-1] == ("done", False)  # ... did not end the parent's subscription
    child_text = [e for e in events if e.type == "text" and e.is_sub_agent]
    assert child_text and child_text[0].text == "child found nothing"  # type: ignore[union-attr]
    assert [s.id for s in listed] == [sid]  # the child's own session is not listed
