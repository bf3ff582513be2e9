"""The bugs a new user hit (issue 15, "Also found by a new user"), through the real CLI.

Model servers here are tiny ``http.server`` threads on 127.0.0.1 that answer every
request with one fixed (broken) body, the way a wrong ``--base-url`` does.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cli_helpers import json_events, skilldeck

from skilldeck.agent.session import SessionStore
from skilldeck.config import load_settings


class FixedServer:
    """Answers every POST with ``status``, ``content_type`` and ``body``."""

    def __init__(self, body: bytes, content_type: str, status: int = 200) -> None:
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                server.requests += 1
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FixedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


JSON = "application/json"
SSE = "text/event-stream"
#: (id, body, content type) of 200 answers that are not chat completions
MALFORMED = [
    ("not-json", b"not json at all", JSON),
    ("html", b"<html><body><h1>Welcome to nginx!</h1></body></html>", "text/html"),
    ("empty-object", b"{}", JSON),
    ("no-choices", b'{"choices": []}', JSON),
    ("choice-without-message", b'{"choices": [{"index": 0, "finish_reason": "stop"}]}', JSON),
]
#: streamed answers (text/event-stream) that are not completion chunks
MALFORMED_SSE = [
    ("sse-not-json", b"data: <html>oops</html>\n\n", SSE),
    ("sse-empty-chunk", b"data: {}\n\ndata: [DONE]\n\n", SSE),
    ("sse-no-events", b"this is not server-sent events\n", SSE),
    ("sse-only-done", b"data: [DONE]\n\n", SSE),
]


def _session_status(cwd: Path, session_id: str) -> str:
    with SessionStore.open(load_settings(workspace=cwd)) as store:
        return store.get(session_id).status


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.mark.parametrize(
    ("body", "content_type"), [(b, c) for _, b, c in MALFORMED], ids=[i for i, _, _ in MALFORMED]
)
def test_malformed_200_reply_is_an_error_in_json_mode(
    ws: Path, body: bytes, content_type: str
) -> None:
    """``--json`` uses the non-streamed call: an error event, exit 1, no traceback."""
    with FixedServer(body, content_type) as server:
        proc = skilldeck(
            "run", "hi", "-m", "openai-compat:m", "--base-url", server.url, "--json", cwd=ws
        )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    done = json_events(proc.stdout)[-1]
    assert done["type"] == "done" and done["status"] == "error"
    reason = done["reason"]
    assert server.url in reason and "HTTP 200" in reason
    assert body.decode()[:40] in reason
    assert "\n" not in reason
    assert _session_status(ws, done["session_id"]) == "error"  # resumable, not completed


@pytest.mark.parametrize(
    ("body", "content_type"),
    [(b, c) for _, b, c in MALFORMED + MALFORMED_SSE],
    ids=[i for i, _, _ in MALFORMED + MALFORMED_SSE],
)
def test_malformed_200_reply_is_an_error_when_streaming(
    ws: Path, body: bytes, content_type: str
) -> None:
    """Text mode streams: one ``error:`` line on stderr naming URL, status, body start."""
    with FixedServer(body, content_type) as server:
        proc = skilldeck(
            "run", "hi", "-m", "openai-compat:m", "--base-url", server.url, cwd=ws,
            env={"COLUMNS": "80"},
        )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    assert server.url in errors[0] and "HTTP 200" in errors[0]
    first_line = body.decode().splitlines()[0].removeprefix("data: ")
    assert first_line[:30] in errors[0]
    with SessionStore.open(load_settings(workspace=ws)) as store:
        (record,) = store.list()
        assert record.status == "error"


def test_anthropic_adapter_refuses_a_malformed_reply(ws: Path) -> None:
    with FixedServer(b'{"type": "message"}', JSON) as server:
        proc = skilldeck(
            "run", "hi", "-m", "anthropic:claude-x", "--base-url", server.url, "--json",
            cwd=ws, env={"ANTHROPIC_API_KEY": "k"},
        )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    done = json_events(proc.stdout)[-1]
    assert done["status"] == "error" and "HTTP 200" in done["reason"]
    assert "Anthropic Messages API" in done["reason"]
    with FixedServer(b"<html>proxy login</html>", "text/html") as server:
        proc = skilldeck(
            "run", "hi", "-m", "anthropic:claude-x", "--base-url", server.url,
            cwd=ws, env={"ANTHROPIC_API_KEY": "k"},
        )  # fmt: skip
    assert proc.returncode == 1 and "proxy login" in proc.stderr


def test_a_failure_before_the_run_is_a_json_error_event(ws: Path) -> None:
    proc = skilldeck("run", "hi", "-m", "openai-compat:m", "--json", cwd=ws)
    assert proc.returncode == 1
    (event,) = json_events(proc.stdout)
    assert event["type"] == "error" and "--base-url" in event["message"]
    assert "Traceback" not in proc.stderr


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port nothing listens on (bound, never listened)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def test_refused_local_server_fails_fast_with_one_line(ws: Path, closed_port: int) -> None:
    url = f"http://127.0.0.1:{closed_port}/v1"
    proc = skilldeck("run", "hi", "-m", "openai-compat:m", "--base-url", url, cwd=ws)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and url in errors[0]
    assert "attempts" not in errors[0]  # tried once: nothing listens on this machine
    assert json.dumps(errors)  # one plain line
