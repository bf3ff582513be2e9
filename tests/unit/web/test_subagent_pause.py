"""A sub-agent's own pause (a Write needing approval inside a Task's child) must reach
an AG-UI client as an interrupt it can answer, and the answer must let the child and
then the parent finish (issue 18, gap 1).

Not done yet: today the child, which has no approver under the session service,
pauses on its own and its parent gets "it stopped waiting for a human; nothing was
approved" as the Task's result — the user is never asked. The fix belongs to the
sub-agent layer and the session service (see the test's xfail reason); this test is
kept strict so that it fails, and gets its marker removed, the day it passes."""

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


@pytest.mark.xfail(
    strict=True,
    reason="issue 18 gap 1: a sub-agent's permission request pauses only the child "
    "(no approver under the service) and the parent carries on; it needs the child's "
    "waiting call surfaced as the parent's pending call and a resume that continues "
    "the child (agent/subagents + service), not done yet",
)
async def test_a_sub_agents_permission_request_is_an_interrupt_that_resumes_it(
    service: SessionService, tmp_path: Path
) -> None:
    app = create_app(service=service)
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as http:
        body = {
            "threadId": "",
            "runId": "r1",
            "messages": [{"id": "u", "role": "user", "content": "go"}],
        }
        first = events((await http.post("/agui", json=body)).text)
        end = first[-1]
        assert end["type"] == "RUN_FINISHED" and end["outcome"]["type"] == "interrupt"
        (interrupt,) = end["outcome"]["interrupts"]
        assert interrupt["reason"] == "tool_approval"
        assert interrupt["metadata"]["skilldeck"]["tool"] == "Write"
        sid = first[0]["threadId"]
        resume = [
            {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approve": True}}
        ]
        again = {"threadId": sid, "runId": "r2", "messages": [], "resume": resume}
        second = events((await http.post("/agui", json=again)).text)
        assert (tmp_path / "work" / "NOTES.md").read_text() == "x"
        assert any(e["type"] == "SUBAGENT_FINISHED" for e in second)
        assert second[-1]["outcome"] == {"type": "success"}
