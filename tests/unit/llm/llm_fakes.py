"""Shared fakes for the adapter tests: a queue of recorded HTTP answers under the real SDKs."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from skilldeck.config import Settings
from skilldeck.llm.factory import make_model
from skilldeck.llm.messages import Model
from skilldeck.llm.retry import RetryPolicy
from skilldeck.settings.model import ModelOptions

Answer = httpx2.Response | Callable[[httpx2.Request], httpx2.Response]


@dataclass
class RecordingTransport:
    """Answers requests from ``answers`` in order and keeps every request it saw."""

    answers: list[Answer]
    requests: list[httpx2.Request] = field(default_factory=list)

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError(f"unexpected extra request to {request.url}")
        answer = self.answers.pop(0)
        return answer(request) if callable(answer) else answer

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler))

    def body(self, index: int = -1) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.requests[index].content)
        return data


@dataclass
class FakeSleep:
    """Records retry delays instead of waiting."""

    delays: list[float] = field(default_factory=list)

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def fast_retry(max_retries: int = 2) -> tuple[RetryPolicy, FakeSleep]:
    sleep = FakeSleep()
    return RetryPolicy(max_retries=max_retries, sleep=sleep), sleep


def settings_for(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", workspace=tmp_path)


def recorded_model(
    spec: str,
    tmp_path: Path,
    transport: RecordingTransport,
    *,
    retry: RetryPolicy,
    stream: bool = False,
) -> Model:
    """The factory's model for ``spec``, its real SDK talking to ``transport``.
    ``respond`` sends one JSON request unless ``stream`` (the factory's default)."""
    settings = settings_for(tmp_path)
    settings.models.options = {"*": ModelOptions(stream=stream)}
    return make_model(spec, settings=settings, http_client=transport.client(), retry=retry)


def json_response(
    status: int, payload: Any, headers: dict[str, str] | None = None
) -> httpx2.Response:
    return httpx2.Response(status, json=payload, headers=headers or {})


def sse_response(events: list[tuple[str | None, Any]]) -> httpx2.Response:
    """Server-sent events; ``(None, "[DONE]")`` writes the OpenAI terminator."""
    parts: list[str] = []
    for event, data in events:
        head = f"event: {event}\n" if event else ""
        text = data if isinstance(data, str) else json.dumps(data)
        parts.append(f"{head}data: {text}\n\n")
    return httpx2.Response(
        200, content="".join(parts).encode(), headers={"content-type": "text/event-stream"}
    )
