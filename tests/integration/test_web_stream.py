"""``skilldeck web``'s app served by a real uvicorn on 127.0.0.1: the AG-UI stream
arrives as it is produced, in ``\\n``-terminated SSE lines, and the stop button's
endpoint cancels a run going on."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from skilldeck.web import create_app
from web_flow import TASK, call, live_server, write_flow


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def serve(
    tmp_path: Path, work: Path, lines: list[dict[str, Any]] | None = None, **options: Any
) -> Any:
    script = write_flow(tmp_path / "flow.jsonl", lines)
    app = create_app(service_options={"model": f"scripted:{script}", "cwd": work, **options})
    return live_server(app)


def message(text: str) -> dict[str, Any]:
    return {
        "threadId": "",
        "runId": "r1",
        "messages": [{"id": "u", "role": "user", "content": text}],
    }


def sse_data(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if line.startswith("data:"):
            yield json.loads(line[5:])


def test_the_stream_is_sse_with_lf_line_ends(tmp_path: Path, work: Path) -> None:
    with (
        serve(tmp_path, work) as url,
        httpx2.Client(base_url=url, timeout=60) as http,
        http.stream("POST", "/agui", json=message(TASK)) as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        raw = b"".join(response.iter_raw())
    assert b"\r" not in raw
    blocks = [b for b in raw.decode().split("\n\n") if b.strip()]
    assert all(b.startswith("data: {") for b in blocks)
    kinds = [json.loads(b[6:])["type"] for b in blocks]
    assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED"
    assert "TEXT_MESSAGE_CONTENT" in kinds and "TOOL_CALL_START" in kinds


def test_stop_cancels_the_run_going_on(tmp_path: Path, work: Path) -> None:
    lines = [
        {"text": "Waiting.", "tool_calls": [call("b1", "Bash", command="sleep 60")]},
        {"text": "never reached"},
    ]
    seen: list[dict[str, Any]] = []
    answers: list[Any] = []
    started = threading.Event()
    with (
        serve(tmp_path, work, lines, permission_mode="bypassPermissions") as url,
        httpx2.Client(base_url=url, timeout=60) as http,
    ):

        def stop_when_bash_runs() -> None:
            started.wait(60)
            answers.append(http.post(f"/api/sessions/{seen[0]['threadId']}/cancel").json())

        stopper = threading.Thread(target=stop_when_bash_runs)
        stopper.start()
        with http.stream("POST", "/agui", json=message("wait")) as response:
            for event in sse_data(response.iter_lines()):
                seen.append(event)
                if event["type"] == "TOOL_CALL_END":
                    started.set()
        stopper.join(60)
        shown = http.get(f"/api/sessions/{seen[0]['threadId']}").json()
    assert answers == [{"cancelled": True}]
    assert seen[-1]["type"] == "RUN_FINISHED"
    assert seen[-1]["outcome"] == {"type": "cancelled"}
    assert shown["status"] == "cancelled"
