"""A sub-agent's own pause (a Write needing approval inside a Task's child) reaches an
AG-UI client as an interrupt it can answer, and the answer lets the child and then the
parent finish (issue 18, gap 1). The child's request waits in memory, its run going
on (``service/live.py``); the AG-UI run ends with the interrupt, the resume continues
it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from skilldeck.service import SessionService
from skilldeck.web import create_app
from web_flow import call, write_flow

pytestmark = pytest.mark.anyio

FLOW = [
    {
        "tool_calls": [
            call(
                "task-1",
                "Task",
                description="write the file",
                prompt="CHILD-JOB: write NOTES.md",
                subagent_type="general-purpose",
            )
        ]
    },
    {"text": "The helper wrote it."},
    {"for": "CHILD-JOB", "tool_calls": [call("cw-1", "Write", file_path="NOTES.md", content="x")]},
    {"for": "CHILD-JOB", "text": "Written."},
]


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[SessionService]:
    work = tmp_path / "work"
    work.mkdir()
    script = write_flow(tmp_path / "flow.jsonl", FLOW)
    async with SessionService(model=f"scripted:{script}", cwd=work) as service:
        yield service


def events(body: str) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in body.split("\n") if line.startswith("data:")]


@pytest.fixture
async def http(service: SessionService) -> AsyncIterator[httpx2.AsyncClient]:
    transport = httpx2.ASGITransport(app=create_app(service=service))
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as http:
        yield http


async def first_run(http: httpx2.AsyncClient) -> list[dict[str, Any]]:
    """The parent's run up to the child's interrupt: its AG-UI events."""
    body = {
        "threadId": "",
        "runId": "r1",
        "messages": [{"id": "u", "role": "user", "content": "go"}],
    }
    return events((await http.post("/agui", json=body)).text)


async def test_a_sub_agents_permission_request_is_an_interrupt_that_resumes_it(
    http: httpx2.AsyncClient, tmp_path: Path
) -> None:
    first = await first_run(http)
    end = first[-1]
    assert end["type"] == "RUN_FINISHED" and end["outcome"]["type"] == "interrupt"
    (interrupt,) = end["outcome"]["interrupts"]
    assert interrupt["reason"] == "tool_approval"
    assert interrupt["metadata"]["skilldeck"]["tool"] == "Write"
    sid = first[0]["threadId"]
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approve": True}}]
    again = {"threadId": sid, "runId": "r2", "messages": [], "resume": resume}
    second = events((await http.post("/agui", json=again)).text)
    assert (tmp_path / "work" / "NOTES.md").read_text() == "x"
    assert any(e["type"] == "SUBAGENT_FINISHED" for e in second)
    assert second[-1]["outcome"] == {"type": "success"}


async def test_a_denied_sub_agent_request_is_not_run(
    http: httpx2.AsyncClient, service: SessionService, tmp_path: Path
) -> None:
    first = await first_run(http)
    sid = first[0]["threadId"]
    deny = [{"interruptId": "cw-1", "status": "cancelled"}]
    again = {"threadId": sid, "runId": "r2", "messages": [], "resume": deny}
    second = events((await http.post("/agui", json=again)).text)
    assert second[-1]["type"] == "RUN_FINISHED"
    assert not (tmp_path / "work" / "NOTES.md").exists()
    assert service.show(sid).summary.status == "completed"
