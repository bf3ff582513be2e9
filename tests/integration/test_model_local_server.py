"""A local OpenAI-compatible server on 127.0.0.1, the way llama.cpp serves a small
model: ``/props`` reports a 4,096-token window, replies stream slowly, the first call
may fail while the model loads. The agent streams, retries visibly, sends the sampling
settings, and picks the compact profile from the window the server reported."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from skilldeck.agent.builder import build_agent
from skilldeck.agent.events import Event, ModelRetryEvent
from skilldeck.agent.prompt import COMPACT_INSTRUCTIONS
from skilldeck.config import Settings, load_settings
from skilldeck.errors import ModelConnectionError
from skilldeck.llm.factory import make_model
from skilldeck.llm.messages import UserMessage
from skilldeck.llm.profile import forget_context_windows
from skilldeck.llm.retry import RetryPolicy
from skilldeck.settings.model import ModelOptions
from skilldeck.tools.compact import COMPACT_DESCRIPTIONS

pytestmark = pytest.mark.anyio


class LocalServer:
    """``/props`` with ``n_ctx``; chat completions that fail ``busy`` times with 503,
    then answer ``text`` in ``pieces`` chunks, ``gap`` seconds apart (also before the
    first byte); a non-streamed request waits ``pieces * gap`` and sends it whole."""

    def __init__(self, *, n_ctx: int = 4096, busy: int = 0, pieces: int = 3, gap: float = 0.0):
        self.bodies: list[dict[str, Any]] = []
        self.busy, self.pieces, self.gap = busy, pieces, gap
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                if self.path == "/props":
                    self._json(200, {"default_generation_settings": {"n_ctx": n_ctx}})
                else:
                    self._json(404, {"error": {"message": "no route"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                server.bodies.append(body)
                if server.busy:
                    server.busy -= 1
                    self._json(503, {"error": {"message": "loading model"}})
                elif body.get("stream"):
                    self._stream(body["model"])
                else:
                    time.sleep(server.gap * server.pieces)
                    self._json(200, _completion(body["model"], "the answer"))

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, model: str) -> None:
                time.sleep(server.gap)  # the prompt is read before the first byte
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.flush()
                words = ["the ", "answer", ""] if server.pieces == 3 else ["x"] * server.pieces
                for i, word in enumerate(words):
                    finish = "stop" if i == len(words) - 1 else None
                    self._event(_chunk(model, {"content": word}, finish))
                    time.sleep(server.gap)
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def _event(self, payload: dict[str, Any]) -> None:
                self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
                self.wfile.flush()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> LocalServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _chunk(model: str, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": model,
            "choices": [choice]}  # fmt: skip


def _completion(model: str, text: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    return {"id": "x", "object": "chat.completion", "created": 1, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}  # fmt: skip


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    forget_context_windows()
    yield
    forget_context_windows()


def local_settings(tmp_path: Path, **options: Any) -> Settings:
    settings = load_settings(workspace=tmp_path)
    settings.models.options = {"openai-compat:small": ModelOptions(**options)}
    return settings


async def test_a_slow_streaming_server_answers_within_a_short_read_timeout(
    tmp_path: Path,
) -> None:
    """Each read waits at most 0.25 s, the whole reply 3 s: streamed, a 2 s read
    timeout is never reached; the same reply sent whole times out."""
    settings = local_settings(tmp_path, request_timeout=2.0)
    with LocalServer(pieces=12, gap=0.25) as server:
        model = make_model("openai-compat:small", settings=settings, base_url=server.url)
        turn = await model.respond([UserMessage(content="hi")], [])
        assert turn.text == "x" * 12 and server.bodies[-1]["stream"] is True
        settings.models.options["openai-compat:small"].stream = False
        whole = make_model(
            "openai-compat:small",
            settings=settings,
            base_url=server.url,
            retry=RetryPolicy(max_retries=0),
        )
        with pytest.raises(ModelConnectionError, match="timed out"):
            await whole.respond([UserMessage(content="hi")], [])


async def test_local_agent_run_is_compact_sampled_and_retries_visibly(tmp_path: Path) -> None:
    events: list[Event] = []
    settings = local_settings(tmp_path, temperature=0.0, seed=7)
    with LocalServer(busy=1) as server:
        agent = build_agent(
            settings,
            model="openai-compat:small",
            base_url=server.url,
            cwd=tmp_path,
            hints=False,
            json_events=True,
            on_event=events.append,
        )
        with agent:
            result = await agent.run("say the answer")
    assert result.status == "completed" and result.text == "the answer"
    (retry,) = [e for e in events if isinstance(e, ModelRetryEvent)]
    assert retry.attempt == 1 and "loading model" in retry.reason
    busy, served = server.bodies
    for body in (busy, served):
        assert (body["temperature"], body["seed"], body["stream"]) == (0.0, 7, True)
    # /props said 4,096 tokens: the compact profile
    assert served["messages"][0]["content"].startswith(COMPACT_INSTRUCTIONS)
    shown = {t["function"]["name"]: t["function"]["description"] for t in served["tools"]}
    assert shown["Read"] == COMPACT_DESCRIPTIONS["Read"]
    assert agent.settings.models.context_windows["openai-compat:small"] == 4096


async def test_a_large_window_keeps_the_default_profile(tmp_path: Path) -> None:
    with LocalServer(n_ctx=131_072) as server:
        agent = build_agent(
            load_settings(workspace=tmp_path),
            model="openai-compat:small",
            base_url=server.url,
            cwd=tmp_path,
            hints=False,
        )
        with agent:
            await agent.run("say the answer")
    served = server.bodies[-1]
    assert not served["messages"][0]["content"].startswith(COMPACT_INSTRUCTIONS)
    assert "temperature" not in served and "seed" not in served
