"""The scripted conversation the web tests drive (a tool card, a permission, a question,
a sub-agent, Markdown, and the end — one of each thing the page must show), and a live
uvicorn server for the streaming, browser and benchmark runs."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn
from sse_starlette.sse import AppStatus

TASK = "Write the release notes"


def call(cid: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "input": tool_input}


FLOW: list[dict[str, Any]] = [
    {
        "text": "I'll **plan** this first, then write the file.",
        "tool_calls": [
            call(
                "todo-1",
                "TodoWrite",
                todos=[
                    {
                        "content": "Write notes",
                        "status": "in_progress",
                        "activeForm": "Writing notes",
                    },
                    {"content": "Summarise", "status": "pending", "activeForm": "Summarising"},
                ],
            ),
            call("write-1", "Write", file_path="NOTES.md", content="# Release 1.0\n\n- web chat\n"),
        ],
    },
    {
        "text": "Written. One question before I go on.",
        "tool_calls": [
            call(
                "ask-1",
                "AskUserQuestion",
                questions=[
                    {
                        "question": "Which tone should the summary use?",
                        "header": "Tone",
                        "options": [
                            {"label": "Friendly", "description": "Warm and short"},
                            {"label": "Formal", "description": "For the changelog"},
                        ],
                        "multiSelect": False,
                    }
                ],
            )
        ],
    },
    {
        "text": "Asking a helper to summarise.",
        "tool_calls": [
            call(
                "todo-2",
                "TodoWrite",
                todos=[
                    {
                        "content": "Write notes",
                        "status": "completed",
                        "activeForm": "Writing notes",
                    },
                    {"content": "Summarise", "status": "in_progress", "activeForm": "Summarising"},
                ],
            ),
            call(
                "task-1",
                "Task",
                description="summarise the notes",
                prompt="SUMMARY-JOB: summarise NOTES.md",
                subagent_type="general-purpose",
            ),
        ],
    },
    {
        "text": "## Done\n\n- wrote `NOTES.md`\n"
        "- the helper's summary: *one feature, the web chat*\n\n"
        "| file | status |\n|---|---|\n| NOTES.md | written |"
    },
    {"for": "SUMMARY-JOB", "tool_calls": [call("read-1", "Read", file_path="NOTES.md")]},
    {"for": "SUMMARY-JOB", "text": "NOTES.md lists **one** feature: the web chat."},
]


def write_flow(path: Path, lines: list[dict[str, Any]] | None = None) -> Path:
    text = "".join(json.dumps(line) + "\n" for line in (lines or FLOW))
    path.write_text(text, encoding="utf-8")
    return path


@contextmanager
def live_server(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1 (a free port) in a thread; its base URL."""
    # pages keep following their sessions (an open stream): do not wait for them at exit
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="web-test-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test web server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        # what uvicorn's signal handler does under `skilldeck web` (a thread has none):
        # open event streams end, then the server
        AppStatus.should_exit = True
        server.should_exit = True
        thread.join(60)
        AppStatus.should_exit = False
