"""The session service with other processes: sessions paused by `skilldeck run` finished
here and the reverse, and one writer per session across processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from skilldeck.errors import SessionBusyError
from skilldeck.llm.messages import AssistantMessage, Message, ToolSpec
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.service import SessionService

pytestmark = pytest.mark.anyio

QUESTION = {
    "question": "Which greeting?",
    "header": "Greeting",
    "options": [
        {"label": "Hello", "description": "friendly"},
        {"label": "Hi", "description": "short"},
    ],
    "multiSelect": False,
}


def call(cid: str, name: str, **input: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "input": input}


def script(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess, with this test's SKILLDECK_HOME."""
    return subprocess.run(
        [sys.executable, "-m", "skilldeck.cli.main", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONIOENCODING": "utf-8", "COLUMNS": "100"},
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )


async def cli_async(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """The CLI in a subprocess without blocking the service's event loop."""
    return await anyio.run_process(
        [sys.executable, "-m", "skilldeck.cli.main", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONIOENCODING": "utf-8", "COLUMNS": "100"},
        check=False,
    )


class HeldModel:
    """A scripted model (rebuildable by name in another process) that waits mid-turn."""

    def __init__(self, path: Path) -> None:
        self.inner = ScriptedModel(path)
        self.name = self.inner.name
        self.release, self.reached = anyio.Event(), anyio.Event()

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return await self.inner.respond(messages, tools)

    async def stream(self, messages: list[Message], tools: list[ToolSpec]):  # type: ignore[no-untyped-def]
        async for chunk in self.inner.stream(messages, tools):
            yield chunk
            self.reached.set()
            await self.release.wait()


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


async def test_a_session_paused_by_skilldeck_run_is_finished_by_the_service(
    tmp_path: Path, work: Path
) -> None:
    path = script(
        tmp_path / "greet.jsonl",
        [
            {
                "text": "Let me ask.",
                "tool_calls": [call("q1", "AskUserQuestion", questions=[QUESTION])],
            },
            {"tool_calls": [call("w1", "Write", file_path="greeting.txt", content="Hello!\n")]},
            {"text": "Wrote greeting.txt."},
        ],
    )
    first = cli("run", "write a greeting", "--model", f"scripted:{path}", "--json", cwd=work)
    assert first.returncode == 0, first.stderr
    done = json.loads(first.stdout.splitlines()[-1])
    assert done["type"] == "done" and done["status"] == "paused"
    sid = done["session_id"]

    async with SessionService(cwd=work) as service:
        history = [i async for i in service.subscribe(sid)]
        assert [i.event.type for i in history][-2:] == ["ask_user", "done"]  # the CLI's events
        assert service.list()[0].waiting_for == "ask_user"
        assert await service.answer(sid, "q1", "Hello") is True
        assert await service.wait(sid) == "paused"  # now the Write asks
        assert await service.approve(sid, "w1", "allow") is True
        assert await service.wait(sid) == "completed"
        rest = [i async for i in service.subscribe(sid, after=history[-1].seq)]
        stored = [e.type for e in service.store.events(sid)]
    seqs = [i.seq for i in [*history, *rest]]
    assert seqs == sorted(set(seqs))  # increasing, no duplicates
    got = [i.event.type for i in [*history, *rest] if i.event.type != "text_delta"]
    assert got == stored  # and nothing missing
    assert rest[-1].event.type == "done" and (work / "greeting.txt").read_text() == "Hello!\n"


async def test_a_session_paused_in_the_service_resumes_with_skilldeck_resume(
    tmp_path: Path, work: Path
) -> None:
    path = script(
        tmp_path / "write.jsonl",
        [
            {"tool_calls": [call("w1", "Write", file_path="out.txt", content="from the web\n")]},
            {"text": "Done."},
        ],
    )
    async with SessionService(model=f"scripted:{path}", cwd=work) as service:
        sid = await service.start("write out.txt")
        assert await service.wait(sid) == "paused"
    resumed = cli("resume", sid, "--approve", "--json", cwd=work)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout.splitlines()[-1])["status"] == "completed"
    assert (work / "out.txt").read_text() == "from the web\n"
    async with SessionService(cwd=work) as service:  # and the service sees how it ended
        events = [i.event async for i in service.subscribe(sid)]
        assert service.show(sid).summary.status == "completed"
    assert events[-1].type == "done" and events[-1].status == "completed"  # type: ignore[union-attr]


async def test_skilldeck_resume_of_a_session_running_in_the_service_is_refused(
    tmp_path: Path, work: Path
) -> None:
    path = script(tmp_path / "slow.jsonl", [{"text": "a slow answer"}])
    model = HeldModel(path)
    async with SessionService(model=model, cwd=work) as service:
        sid = await service.start("take your time")
        await model.reached.wait()
        refused = await cli_async("resume", sid, cwd=work)
        message = refused.stderr.decode()
        assert refused.returncode != 0
        assert f"Session {sid} is being run by another process" in message
        assert f"pid {os.getpid()}" in message and "Traceback" not in message
        model.release.set()
        assert await service.wait(sid) == "completed"


async def test_the_service_refuses_a_session_another_process_is_running(
    tmp_path: Path, work: Path
) -> None:
    path = script(
        tmp_path / "w.jsonl",
        [{"tool_calls": [call("w1", "Write", file_path="x.txt", content="x")]}, {"text": "ok"}],
    )
    async with SessionService(model=f"scripted:{path}", cwd=work) as service:
        sid = await service.start("write")
        assert await service.wait(sid) == "paused"
        holder = await anyio.open_process(
            [sys.executable, "-c", HOLDER, str(service.settings.sessions_db), sid]
        )
        try:
            assert holder.stdout is not None
            held = BufferedByteReceiveStream(holder.stdout)
            assert await held.receive_until(b"\n", 100) == b"held"
            with pytest.raises(SessionBusyError, match="being run by another process"):
                await service.resume(sid)
            with pytest.raises(SessionBusyError):
                await service.approve(sid, "w1", "allow")
            assert not service.running(sid)
            refused = await cli_async("resume", sid, "--approve", cwd=work)
            assert refused.returncode != 0
            assert "(another run, pid" in refused.stderr.decode()
        finally:
            assert holder.stdin is not None
            await holder.stdin.aclose()
            await holder.wait()
            await holder.aclose()
        # the holder is gone (its lease is stale): the session is ours to run again
        assert await service.approve(sid, "w1", "allow") is True
        assert await service.wait(sid) == "completed"
    assert (work / "x.txt").read_text() == "x"


#: another process taking a session's lease (as a run does) until its stdin closes
HOLDER = """
import sys
from skilldeck.agent.store import SessionStore, TurnWrite
store = SessionStore(sys.argv[1], owner="another run")
store.commit(sys.argv[2], TurnWrite(status="running"))
print("held", flush=True)
sys.stdin.read()
"""


#: another process running a session: it takes the lease, then stores a turn's event
#: and the run's end when told to (one line each on stdin)
RUNNER = """
import sys
from skilldeck.agent.events import DoneEvent, TextEvent
from skilldeck.agent.store import SessionStore, TurnWrite
store = SessionStore(sys.argv[1], owner="a terminal run")
sid = sys.argv[2]
store.commit(sid, TurnWrite(status="running"))
print("held", flush=True)
sys.stdin.readline()
store.commit(sid, TurnWrite(events=[TextEvent(text="from the terminal")]))
print("turn", flush=True)
sys.stdin.readline()
done = DoneEvent(session_id=sid, status="completed")
store.commit(sid, TurnWrite(status="completed", events=[done]))
print("done", flush=True)
"""


async def test_a_subscriber_follows_a_run_another_process_is_making(work: Path) -> None:
    async with SessionService(cwd=work) as service:
        sid = service.store.create(model="m", agent="main", cwd=work, task="from a terminal").id
        service.store.set_status(sid, "paused")
        runner = await anyio.open_process(
            [sys.executable, "-c", RUNNER, str(service.settings.sessions_db), sid]
        )
        assert runner.stdin is not None and runner.stdout is not None
        lines = BufferedByteReceiveStream(runner.stdout)
        got: list[str] = []
        try:
            assert await lines.receive_until(b"\n", 100) == b"held"
            assert service.list()[0].status == "running"

            async def follow() -> None:
                got.extend([i.event.type async for i in service.subscribe(sid)])

            async with anyio.create_task_group() as tg:
                tg.start_soon(follow)
                await runner.stdin.send(b"go\n")
                assert await lines.receive_until(b"\n", 100) == b"turn"
                with anyio.fail_after(30):
                    while not got and not service._live[sid].log.history():
                        await anyio.sleep(0.05)
                assert not got  # the subscriber is still following the other run
                await runner.stdin.send(b"go\n")
        finally:
            await runner.stdin.aclose()
            await runner.wait()
            await runner.aclose()
    assert got == ["text", "done"]


async def test_leaving_the_service_stops_following_another_processs_run(work: Path) -> None:
    async with SessionService(cwd=work) as service:
        sid = service.store.create(model="m", agent="main", cwd=work, task="t").id
        service.store.set_status(sid, "paused")
    runner = await anyio.open_process(
        [sys.executable, "-c", RUNNER, str(service.settings.sessions_db), sid]
    )
    assert runner.stdout is not None and runner.stdin is not None
    try:
        lines = BufferedByteReceiveStream(runner.stdout)
        assert await lines.receive_until(b"\n", 100) == b"held"
        with anyio.fail_after(60):  # the service does not wait for the other run
            async with SessionService(cwd=work) as service:
                followed = service.subscribe(sid)  # follows the other run...
                assert service._live[sid].tailing
        # ...until the service closed (the other process still runs the session)
        assert [i.event.type async for i in followed] == []
    finally:
        await runner.stdin.aclose()
        await runner.wait()
        await runner.aclose()
