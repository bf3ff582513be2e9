"""A page that goes away mid-stream (a closed tab, a dropped connection) ends its
event stream quietly: no "socket.send() raised exception." from asyncio for each
event still written to the lost connection (served by a real uvicorn on 127.0.0.1)."""

from __future__ import annotations

import json
import logging
import socket
import struct
from pathlib import Path

import httpx2
import pytest

from skilldeck.web import create_app
from web_flow import call, live_server, write_flow

#: turns of the session replayed to the page that leaves: a history long enough to
#: be still being written when the connection is lost
TURNS = 20


def todo(step: int) -> dict[str, str]:
    return {"content": f"step {step}", "status": "in_progress", "activeForm": f"step {step}"}


def long_session(tmp_path: Path) -> Path:
    lines = [
        {
            "text": f"step {i} " + "word " * 200,
            "tool_calls": [call(f"t{i}", "TodoWrite", todos=[todo(i)])],
        }
        for i in range(TURNS)
    ]
    return write_flow(tmp_path / "flow.jsonl", [*lines, {"text": "done"}])


def leave_mid_stream(url: str, path: str) -> None:
    """Open ``path``'s event stream, read its first bytes, and drop the connection
    (a reset, as when a browser tab is killed)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        sock.sendall(request.encode())
        assert sock.recv(200).startswith(b"HTTP/1.1 200")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def test_a_client_leaving_mid_stream_logs_no_send_errors(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script = long_session(tmp_path)
    options = {"model": f"scripted:{script}", "cwd": work, "permission_mode": "bypassPermissions"}
    run = {
        "threadId": "",
        "runId": "r1",
        "messages": [{"id": "u", "role": "user", "content": "go"}],
    }
    with (
        caplog.at_level(logging.WARNING, logger="asyncio"),
        live_server(create_app(service_options=options)) as url,
        httpx2.Client(base_url=url, timeout=60) as http,
    ):
        first = http.post("/agui", json=run).text.split("data: ", 1)[1]
        sid = json.loads(first.split("\n", 1)[0])["threadId"]
        for _ in range(3):
            leave_mid_stream(url, f"/api/sessions/{sid}/events?follow=1")
        # the server is still serving (and has noticed the lost connections)
        assert http.get(f"/api/sessions/{sid}").json()["status"] == "completed"
    sent_to_lost = [r for r in caplog.records if "socket.send() raised" in r.getMessage()]
    assert not sent_to_lost, f"{len(sent_to_lost)} writes to a lost connection were logged"
