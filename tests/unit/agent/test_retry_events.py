"""A retried model call is a first-class event: the ``model_retry`` event reaches the
run's stream (the web chat, ``--json``) and is stored with the turn (``sessions show
--events``), besides the runtime's ``on_event`` — in streaming and whole-reply modes,
and once each time."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from skilldeck.agent.builder import build_agent
from skilldeck.agent.events import Event, ModelRetryEvent
from skilldeck.config import load_settings
from skilldeck.llm.messages import AssistantMessage, StreamEvent, TextDelta, TurnComplete
from skilldeck.llm.retry import RetryNotice, RetryPolicy

pytestmark = pytest.mark.anyio

NOTICE = RetryNotice("openai-compat:m", 1, 3, 0.5, "timed out")


def retrying_agent(tmp_path: Path, *, stream: bool, on_event: Any) -> Any:
    """An agent on ``openai-compat:m`` whose first call is retried once (through the
    retry hook the builder gave the model) before it answers "done"."""
    settings = load_settings(workspace=tmp_path)
    settings.models.base_url = "http://127.0.0.1:9/v1"  # never asked: calls are faked
    agent = build_agent(
        settings,
        model="openai-compat:m",
        cwd=tmp_path,
        hints=False,
        json_events=not stream,
        on_event=on_event,
    )
    policy = agent.model.retry
    assert isinstance(policy, RetryPolicy) and policy.on_retry is not None
    hook = policy.on_retry

    async def respond(*_: Any) -> AssistantMessage:
        hook(NOTICE)
        return AssistantMessage(text="done")

    async def chunks(*_: Any) -> AsyncIterator[StreamEvent]:
        hook(NOTICE)
        yield TextDelta(text="done")
        yield TurnComplete(message=AssistantMessage(text="done"))

    agent.model.respond = respond
    agent.model.stream = chunks
    return agent


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
async def test_a_retry_is_streamed_stored_and_told_once(tmp_path: Path, stream: bool) -> None:
    live: list[Event] = []
    with retrying_agent(tmp_path, stream=stream, on_event=live.append) as agent:
        streamed = [e async for e in agent.run_stream("hi")]
        session_id = streamed[-1].session_id  # type: ignore[union-attr]
        stored = agent.store.events(session_id)
    types = [e.type for e in streamed if e.type != "text_delta"]
    assert types.count("model_retry") == 1
    assert types.index("model_call") < types.index("model_retry") < types.index("text")
    assert [e for e in stored if isinstance(e, ModelRetryEvent)] == [
        ModelRetryEvent(
            model="openai-compat:m", attempt=1, attempts=3, delay=0.5, reason="timed out"
        )
    ]
    assert sum(isinstance(e, ModelRetryEvent) for e in live) == 1  # on_event: once


async def test_a_retry_outside_a_run_still_reaches_on_event(tmp_path: Path) -> None:
    """A model call made outside a run's turn (no run to store it in) is still told."""
    live: list[Event] = []
    with retrying_agent(tmp_path, stream=False, on_event=live.append) as agent:
        agent.model.retry.on_retry(NOTICE)
    assert [e.type for e in live] == ["model_retry"]


async def test_without_on_event_the_stream_still_has_the_retry(tmp_path: Path) -> None:
    """The Python API and the web service may pass no ``on_event``: retries are not lost."""
    with retrying_agent(tmp_path, stream=False, on_event=None) as agent:
        result = await agent.run("hi")
    assert [e.type for e in result.events].count("model_retry") == 1
