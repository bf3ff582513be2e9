"""An agent's lifetime as a library sees it: a stream closed early, an agent used after
``close()``, ``run_sync`` where an event loop already runs."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from pathlib import Path

import pytest

from skilldeck.agent.builder import build_agent
from skilldeck.agent.loop import Agent
from skilldeck.agent.store import SessionStore
from skilldeck.config import Settings, load_settings
from skilldeck.errors import SessionError
from skilldeck.llm.scripted import ScriptedModel

BASH_THEN_DONE = [
    {"tool_calls": [{"id": "b", "name": "Bash", "input": {"command": "echo RAN > ran.txt"}}]},
    {"text": "done"},
]


@pytest.fixture
def settings(tmp_path: Path, skilldeck_home: Path) -> Settings:
    return load_settings(workspace=tmp_path, home=skilldeck_home)


def make_agent(settings: Settings) -> Agent:
    return build_agent(
        settings,
        model=ScriptedModel.from_lines(BASH_THEN_DONE),
        cwd=settings.workspace,
        permission_mode="bypassPermissions",
    )


def only_session(settings: Settings) -> tuple[str, str | None]:
    """The status of the one stored session and the reason of its last ``done``."""
    with SessionStore.open(settings) as store:
        [record] = store.list()
        done = [e for e in store.events(record.id) if e.type == "done"]
        return record.status, getattr(done[-1], "reason", None) if done else None


# ---- a stream closed before its end -------------------------------------------------


@pytest.mark.parametrize("stop_at", ["model_call", "tool_call", "tool_result"])
def test_closing_the_stream_early_stores_the_session_cancelled(
    settings: Settings, stop_at: str
) -> None:
    async def main() -> None:
        with make_agent(settings) as agent:
            stream = agent.run_stream("go")
            async for event in stream:
                if event.type == stop_at:
                    break
            await stream.aclose()
            status, reason = only_session(settings)
            assert status == "cancelled"
            assert reason == "the caller closed the event stream before the run ended"

    asyncio.run(main())


def test_a_break_without_aclose_is_recorded_when_the_agent_closes(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    """The QA reproduction: the session stayed ``running`` and the interpreter logged
    "Task exception was never retrieved … Cannot operate on a closed database"."""
    kept: list[object] = []

    async def main() -> None:
        with make_agent(settings) as agent:
            stream = agent.run_stream("go")
            kept.append(stream)  # not finalised before the agent closes
            async for _ in stream:
                break
        assert only_session(settings)[0] == "cancelled"

    loop = asyncio.new_event_loop()
    errors: list[dict[str, object]] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    try:
        loop.run_until_complete(main())
        kept.clear()
        gc.collect()
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()
    assert errors == []
    assert "closed database" not in capsys.readouterr().err
    assert only_session(settings)[0] == "cancelled"


def test_a_closed_stream_closes_the_model_stream_too(settings: Settings) -> None:
    closed: list[bool] = []

    class Streaming(ScriptedModel):
        async def stream(self, *args, **kwargs):  # type: ignore[no-untyped-def, override]
            try:
                async for chunk in super().stream(*args, **kwargs):
                    yield chunk
            finally:
                closed.append(True)

    async def main() -> None:
        model = Streaming.from_lines([{"text": "a long answer"}])
        with build_agent(settings, model=model, cwd=settings.workspace) as agent:
            async with contextlib.aclosing(agent.run_stream("go")) as stream:
                async for event in stream:
                    if event.type == "text_delta":
                        break
        assert closed == [True]

    asyncio.run(main())


def test_a_stream_read_to_its_end_is_unchanged(settings: Settings) -> None:
    async def main() -> None:
        with make_agent(settings) as agent:
            events = [e async for e in agent.run_stream("go")]
        assert events[-1].type == "done" and events[-1].status == "completed"  # type: ignore[union-attr]

    asyncio.run(main())
    assert only_session(settings) == ("completed", None)


# ---- an agent used after close() -------------------------------------------------------


def test_an_agent_used_after_its_with_block_says_it_is_closed(settings: Settings) -> None:
    with make_agent(settings) as agent:
        pass
    with pytest.raises(SessionError, match=r"is closed .*build a new one with build_agent\(\)"):
        agent.run_sync("go")
    with pytest.raises(SessionError, match="is closed"):
        agent.resume_sync("abc")

    async def streams() -> None:
        with pytest.raises(SessionError, match="is closed"):
            await agent.run("go")
        with pytest.raises(SessionError, match="is closed"):
            async for _ in agent.resume_stream("abc"):
                pass

    asyncio.run(streams())


def test_a_closed_store_is_a_session_error_not_sqlite3s(settings: Settings) -> None:
    store = SessionStore.open(settings)
    store.close()
    with pytest.raises(SessionError, match=r"session store .*sessions.db is closed"):
        store.list()


def test_an_agent_on_a_store_closed_by_its_owner_says_so(settings: Settings) -> None:
    store = SessionStore.open(settings)
    agent = build_agent(
        settings, model=ScriptedModel.from_lines(BASH_THEN_DONE), session_store=store
    )
    store.close()
    with pytest.raises(SessionError, match="is closed"):
        agent.run_sync("go")


# ---- run_sync inside a running event loop -------------------------------------------


def test_run_sync_inside_an_event_loop_says_to_await_run(settings: Settings) -> None:
    async def notebook_cell() -> None:
        with make_agent(settings) as agent:
            with pytest.raises(SessionError, match=r"use `await agent\.run\(\.\.\.\)`"):
                agent.run_sync("go")
            with pytest.raises(SessionError, match=r"use `await agent\.resume\(\.\.\.\)`"):
                agent.resume_sync("abc")
            assert (await agent.run("go")).status == "completed"  # the way that works

    asyncio.run(notebook_cell())


def test_run_sync_outside_a_loop_still_runs(settings: Settings) -> None:
    with make_agent(settings) as agent:
        assert agent.run_sync("go").status == "completed"
    assert (settings.workspace / "ran.txt").read_text(encoding="utf-8") == "RAN\n"


# ---- a new message to a paused session ------------------------------------------------


def test_a_new_message_to_a_paused_session_names_the_resume_command(settings: Settings) -> None:
    model = ScriptedModel.from_lines(BASH_THEN_DONE)
    with build_agent(settings, model=model, cwd=settings.workspace) as agent:
        paused = agent.run_sync("go")  # Bash asks in the default mode: paused
        assert paused.status == "paused"
        with pytest.raises(SessionError) as refused:
            agent.run_sync("more", session_id=paused.session_id)
    message = str(refused.value)
    sid = paused.session_id
    assert f"waiting for approval; reply first with `skilldeck resume {sid}" in message
    assert "--approve (or --deny)" in message and "resume it first" not in message
