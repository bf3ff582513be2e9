"""`openai-compat:` against a real HTTP server on 127.0.0.1 (the real network stack).

The server speaks just enough of Chat Completions to drive an agent: like the scripted
model, it picks its answer from the number of assistant messages already in the
request, so it is stateless; it streams SSE when asked to.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from skilldeck.config import Settings
from skilldeck.errors import ModelConnectionError
from skilldeck.llm.factory import make_model
from skilldeck.llm.messages import (
    Message,
    TextDelta,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    TurnComplete,
    UserMessage,
)
from skilldeck.llm.openai_adapter import OpenAIModel
from skilldeck.llm.retry import RetryPolicy

Reply = Callable[[dict[str, Any]], dict[str, Any]]

READ = ToolSpec(
    name="Read",
    description="Read a file",
    input_schema={"type": "object", "properties": {"file_path": {"type": "string"}}},
)


def read_then_answer(body: dict[str, Any]) -> dict[str, Any]:
    """Turn 1: call Read on hello.txt. Turn 2: quote what the tool returned."""
    turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if turn == 0:
        return {
            "content": "Reading the file.",
            "tool_calls": [
                {
                    "id": "call_read_1",
                    "type": "function",
                    "function": {
                        "name": "Read",
                        "arguments": json.dumps({"file_path": "hello.txt"}),
                    },
                }
            ],
        }
    results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    said = "greetings from disk" if any("greetings from disk" in r for r in results) else "nothing"
    return {"content": f"The file says: {said}."}


class CompatServer:
    """A ThreadingHTTPServer answering /v1/chat/completions from ``reply``."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length))
                server.requests.append(body)
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                message = server.reply(body)
                if body.get("stream"):
                    self._stream(body["model"], message)
                else:
                    self._send(200, _completion(body["model"], message))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, model: str, message: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for chunk in _chunks(model, message):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> CompatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def _completion(model: str, message: dict[str, Any]) -> dict[str, Any]:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
        ],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }


def _chunks(model: str, message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": model,
            "choices": [choice],
        }

    content = message.get("content") or ""
    for i in range(0, len(content), 5):
        yield chunk({"content": content[i : i + 5]})
    for index, call in enumerate(message.get("tool_calls", [])):
        args = call["function"]["arguments"]
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""},
                    }
                ]
            }
        )
        for i in range(0, len(args), 7):
            yield chunk(
                {"tool_calls": [{"index": index, "function": {"arguments": args[i : i + 7]}}]}
            )
    yield chunk({}, finish="tool_calls" if message.get("tool_calls") else "stop")
    yield {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": [],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }


@pytest.fixture
def server() -> Iterator[CompatServer]:
    with CompatServer(read_then_answer) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.mark.anyio
async def test_respond_and_stream_over_loopback(server: CompatServer, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", workspace=tmp_path)
    model = make_model("openai-compat:test", settings=settings, base_url=server.base_url)

    first = await model.respond([UserMessage(content="read hello.txt")], [READ])
    assert first.tool_calls == [
        ToolCall(id="call_read_1", name="Read", input={"file_path": "hello.txt"})
    ]
    assert first.usage is not None and first.usage.input_tokens == 50

    history: list[Message] = [
        UserMessage(content="read hello.txt"),
        first,
        ToolResultMessage(
            tool_call_id="call_read_1", name="Read", content="1\tgreetings from disk"
        ),
    ]
    events = [e async for e in model.stream(history, [READ])]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == (
        "The file says: greetings from disk."
    )
    final = events[-1]
    assert isinstance(final, TurnComplete)
    assert final.message.stop_reason == "end_turn"

    streamed_call = [e async for e in model.stream([UserMessage(content="again")], [READ])][-1]
    assert isinstance(streamed_call, TurnComplete)
    assert streamed_call.message.tool_calls == first.tool_calls

    wire = server.requests[1]
    assert wire["model"] == "test"
    assert wire["messages"][2] == {
        "role": "tool",
        "tool_call_id": "call_read_1",
        "content": "1\tgreetings from disk",
    }
    assert wire["tools"][0]["function"]["name"] == "Read"
    assert isinstance(model, OpenAIModel)
    await model.aclose()


@pytest.mark.anyio
async def test_closed_port_is_one_clear_line_naming_the_url(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    settings = Settings(home=tmp_path / "home", workspace=tmp_path)

    async def no_wait(_: float) -> None:
        return None

    model = make_model(
        "openai-compat:test",
        settings=settings,
        base_url=url,
        retry=RetryPolicy(max_retries=1, sleep=no_wait),
    )
    with pytest.raises(ModelConnectionError) as info:
        await model.respond([UserMessage(content="hi")], [])
    assert url in str(info.value)
    assert "\n" not in str(info.value)


def test_skilldeck_run_against_the_loopback_server(server: CompatServer, tmp_path: Path) -> None:
    """The issue's acceptance test: `skilldeck run --model openai-compat:test --base-url ...`."""
    pytest.importorskip("skilldeck.cli.run.run_cmd")
    (tmp_path / "hello.txt").write_text("greetings from disk\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SKILLDECK_MODEL"))}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "skilldeck.cli.main",
            "run",
            "Read hello.txt and tell me",
            "--model",
            "openai-compat:test",
            "--base-url",
            server.base_url,
            "--json",
            "--cwd",
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    types = [e["type"] for e in events]
    assert "tool_call" in types
    call = next(e for e in events if e["type"] == "tool_call")
    assert (call["name"], call["input"]) == ("Read", {"file_path": "hello.txt"})
    result = next(e for e in events if e["type"] == "tool_result")
    assert result["is_error"] is False
    assert "greetings from disk" in result["content"]
    texts = " ".join(e["text"] for e in events if e["type"] == "text")
    assert "The file says: greetings from disk." in texts
    assert events[-1]["type"] == "done"
    assert events[-1]["status"] == "completed"
    assert len(server.requests) == 2
    assert any(m["role"] == "tool" for m in server.requests[1]["messages"])
