"""``skilldeck run`` against a model server on 127.0.0.1 that misbehaves, as a user
sees it: a retried call is one ``retry:`` line (and a ``model_retry`` event with
``--json``); a reply that is not a chat completion is one ``error:`` line, exit 1, no
traceback, the session stored as ``error`` — and ``resume`` finishes it once the
server is fixed. Also: ``--temperature``/``--seed`` reach the request body."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cli_helpers import json_events, skilldeck

from skilldeck.agent.store import SessionStore
from skilldeck.config import load_settings


def _sse(text: str) -> bytes:
    def chunk(delta: dict[str, str], finish: str | None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        body = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
        return "data: " + json.dumps({**body, "choices": [choice]}) + "\n\n"

    return (chunk({"content": text}, None) + chunk({}, "stop") + "data: [DONE]\n\n").encode()


class ScriptedServer:
    """Answers each POST with the next ``(status, content type, body)``; the last one
    repeats. GETs (context-window questions) get 404."""

    def __init__(self, answers: list[tuple[int, str, bytes]]) -> None:
        self.answers = list(answers)
        self.posts = 0
        self.bodies: list[dict[str, object]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._send(404, "application/json", b'{"error": "no route"}')

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", "0")))
                server.bodies.append(json.loads(raw or b"{}"))
                server.posts += 1
                answer = server.answers.pop(0) if len(server.answers) > 1 else server.answers[0]
                self._send(*answer)

            def _send(self, status: int, kind: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


BUSY = (503, "application/json", b'{"error": {"message": "model is loading"}}')
OK = (200, "text/event-stream", _sse("all done"))
MALFORMED = [
    ("not-json", (200, "application/json", b"not json at all")),
    ("html", (200, "text/html", b"<html><body>Welcome to nginx!</body></html>")),
    ("empty-object", (200, "application/json", b"{}")),
    ("no-choices", (200, "text/event-stream", b'data: {"choices": []}\n\ndata: [DONE]\n\n')),
]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def run(ws: Path, url: str, *extra: str) -> tuple[int, str, str]:
    proc = skilldeck(
        "run", "say done", "-m", "openai-compat:m", "--base-url", url, *extra, cwd=ws,
        env={"COLUMNS": "80"},
    )  # fmt: skip
    assert "Traceback" not in proc.stdout + proc.stderr
    return proc.returncode, proc.stdout, proc.stderr


def test_a_retry_is_one_stderr_line_and_the_run_completes(ws: Path) -> None:
    with ScriptedServer([BUSY, OK]) as server:
        code, out, err = run(ws, server.url)
    assert code == 0, err
    assert "all done" in out
    (line,) = [x for x in err.splitlines() if x.startswith("retry:")]
    assert "openai-compat:m" in line and "attempt 2 of 4" in line and "model is loading" in line
    assert server.posts == 2


def test_a_retry_is_a_model_retry_event_with_json(ws: Path) -> None:
    with ScriptedServer([BUSY, OK]) as server:
        code, out, err = run(ws, server.url, "--json")
    assert code == 0, err
    events = json_events(out)
    types = [e["type"] for e in events]
    assert types.index("model_call") < types.index("model_retry") < types.index("text")
    retry = next(e for e in events if e["type"] == "model_retry")
    assert retry["attempt"] == 1 and "model is loading" in retry["reason"]
    assert events[-1]["type"] == "done" and events[-1]["status"] == "completed"
    assert sum(x.startswith("retry:") for x in err.splitlines()) == 1


@pytest.mark.parametrize("answer", [a for _, a in MALFORMED], ids=[name for name, _ in MALFORMED])
@pytest.mark.parametrize("json_mode", [False, True], ids=["text", "json"])
def test_a_malformed_reply_fails_loudly_and_is_resumable(
    ws: Path, answer: tuple[int, str, bytes], json_mode: bool
) -> None:
    with ScriptedServer([answer]) as server:
        code, out, err = run(ws, server.url, *(["--json"] if json_mode else []))
    assert code == 1
    if json_mode:
        done = json_events(out)[-1]
        assert done["type"] == "done" and done["status"] == "error"
        reason = done["reason"]
    else:
        (reason,) = [x for x in err.splitlines() if x.startswith("error:")]
    assert server.url in reason and "HTTP 200" in reason and "\n" not in reason
    with SessionStore.open(load_settings(workspace=ws)) as store:
        (record,) = store.list()
        assert record.status == "error"
    with ScriptedServer([OK]) as fixed:  # the server is fixed: the session continues
        proc = skilldeck("resume", record.id, "--base-url", fixed.url, "--json", cwd=ws)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json_events(proc.stdout)[-1]["status"] == "completed"


def test_sampling_flags_reach_every_request_and_the_resumed_session(ws: Path) -> None:
    with ScriptedServer([BUSY, OK]) as server:
        code, _, err = run(ws, server.url, "--temperature", "0", "--seed", "7", "--json")
    assert code == 0, err
    assert [(b["temperature"], b["seed"]) for b in server.bodies] == [(0.0, 7), (0.0, 7)]
    with SessionStore.open(load_settings(workspace=ws)) as store:
        (record,) = store.list()
    with ScriptedServer([OK]) as again:  # the launch record keeps them
        proc = skilldeck("chat", "--session", record.id, "--base-url", again.url, "--json",
                         cwd=ws, input="and again\n")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [(b["temperature"], b["seed"]) for b in again.bodies] == [(0.0, 7)]


def test_without_flags_no_sampling_is_sent(ws: Path) -> None:
    with ScriptedServer([OK]) as server:
        code, _, err = run(ws, server.url)
    assert code == 0, err
    assert not {"temperature", "seed", "top_p"} & set(server.bodies[0])
