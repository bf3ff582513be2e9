"""The web app over ASGI (httpx2's ASGITransport): AG-UI runs, resume, the JSON
endpoints, and the guard (token, Host, Origin, size, headers)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from skilldeck.service import SessionService
from skilldeck.web import Guard, GuardOptions, create_app
from web_flow import TASK, write_flow

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1:8765"
SKILL = """---
name: release-notes
description: Write release notes from a changelog. <img src=x onerror=alert(1)>
---
Write them.
"""


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    skill = folder / ".skilldeck" / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL, encoding="utf-8")
    broken = folder / ".skilldeck" / "skills" / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: Broken Name\n---\nbody\n", encoding="utf-8")
    return folder


@pytest.fixture
async def service(tmp_path: Path, work: Path) -> AsyncIterator[SessionService]:
    script = write_flow(tmp_path / "flow.jsonl")
    async with SessionService(model=f"scripted:{script}", cwd=work) as service:
        yield service


def client(app: Any, **headers: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app), base_url=BASE, headers=headers
    )


def events(body: str) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in body.split("\n") if line.startswith("data:")]


def run_input(thread: str = "", text: str | None = TASK, **extra: Any) -> dict[str, Any]:
    messages = [{"id": "u1", "role": "user", "content": text}] if text else []
    return {"threadId": thread, "runId": "r1", "messages": messages, **extra}


async def test_a_run_paused_then_resumed_through_resume_entries(
    service: SessionService, work: Path
) -> None:
    async with client(create_app(service=service)) as http:
        first = await http.post("/agui", json=run_input())
        assert first.status_code == 200
        assert first.headers["content-type"].startswith("text/event-stream")
        assert "\r\n" not in first.text  # the official client cannot parse \r\n
        out = events(first.text)
        assert out[0]["type"] == "RUN_STARTED" and out[-1]["type"] == "RUN_FINISHED"
        sid = out[0]["threadId"]
        assert service.show(sid).summary.status == "paused"
        (interrupt,) = out[-1]["outcome"]["interrupts"]
        assert interrupt["toolCallId"] == "write-1" and interrupt["reason"] == "tool_approval"

        resume = [{"interruptId": "write-1", "status": "resolved", "payload": {"approve": True}}]
        second = events((await http.post("/agui", json=run_input(sid, None, resume=resume))).text)
        assert (work / "NOTES.md").exists()
        (question,) = second[-1]["outcome"]["interrupts"]
        assert question["reason"] == "question"

        answer = [{"interruptId": "ask-1", "status": "resolved", "payload": {"answer": "Formal"}}]
        third = events((await http.post("/agui", json=run_input(sid, None, resume=answer))).text)
        assert third[-1]["type"] == "RUN_FINISHED"
        assert third[-1]["outcome"] == {"type": "success"}
        assert {"SUBAGENT_STARTED", "SUBAGENT_FINISHED"} <= {e["type"] for e in third}
        assert service.show(sid).summary.status == "completed"


async def test_a_denied_call_is_not_run(service: SessionService, work: Path) -> None:
    async with client(create_app(service=service)) as http:
        sid = events((await http.post("/agui", json=run_input())).text)[0]["threadId"]
        deny = [{"interruptId": "write-1", "status": "resolved", "payload": {"approve": False}}]
        out = events((await http.post("/agui", json=run_input(sid, None, resume=deny))).text)
    result = next(e for e in out if e["type"] == "TOOL_CALL_RESULT")
    assert result["metadata"]["skilldeck"]["isError"] is True
    assert not (work / "NOTES.md").exists()


async def test_a_foreign_thread_id_is_an_alias_of_its_new_session(service: SessionService) -> None:
    async with client(create_app(service=service)) as http:
        out = events((await http.post("/agui", json=run_input("client-thread-1"))).text)
        sid = out[0]["threadId"]
        assert sid != "client-thread-1"
        resume = [{"interruptId": "write-1", "status": "resolved", "payload": {"approve": True}}]
        body = (
            await http.post("/agui", json=run_input("client-thread-1", None, resume=resume))
        ).text
    assert events(body)[0]["threadId"] == sid
    assert events(body)[-1]["outcome"]["type"] == "interrupt"  # the question, next


async def test_undecodable_run_inputs_are_422_and_start_nothing(service: SessionService) -> None:
    async with client(create_app(service=service)) as http:
        surrogate = b'{"threadId":"t","runId":"r","state":{},"messages":[{"id":"m","role":"user",'
        surrogate += b'"content":"hi \\ud800"}],"tools":[],"context":[],"forwardedProps":{}}'
        lone = await http.post("/agui", content=surrogate)
        assert lone.status_code == 422 and "lone surrogate" in lone.text
        deep = b'{"threadId":"a","runId":"r","messages":[],"state":' + b"[" * 5000 + b"]" * 5000
        nested = await http.post("/agui", content=deep + b"}")
        assert nested.status_code == 422 and "nested too deeply" in nested.text
    assert service.list() == []


async def test_bad_run_inputs(service: SessionService) -> None:
    async with client(create_app(service=service)) as http:
        assert (await http.post("/agui", content=b"{not json")).status_code == 422
        partial = await http.post("/agui", json={"threadId": "x"})
        assert partial.status_code == 422
        assert "runId: Field required" in partial.text  # names what to send
        empty = events((await http.post("/agui", json=run_input(text=None))).text)
        assert empty[-1]["type"] == "RUN_ERROR" and "no user message" in empty[-1]["message"]
        sid = events((await http.post("/agui", json=run_input())).text)[0]["threadId"]
        # a new message on a paused session, and a resume entry for an unknown call
        busy = events((await http.post("/agui", json=run_input(sid, "more"))).text)
        assert busy[-1]["type"] == "RUN_ERROR" and "paused" in busy[-1]["message"]
        wrong = [{"interruptId": "nope", "status": "resolved", "payload": {}}]
        bad = events((await http.post("/agui", json=run_input(sid, None, resume=wrong))).text)
        assert bad[-1]["type"] == "RUN_ERROR" and "nope" in bad[-1]["message"]


async def test_sessions_endpoints(service: SessionService) -> None:
    async with client(create_app(service=service)) as http:
        sid = events((await http.post("/agui", json=run_input())).text)[0]["threadId"]
        listed = (await http.get("/api/sessions")).json()["sessions"]
        assert [s["id"] for s in listed] == [sid] and listed[0]["status"] == "paused"
        shown = (await http.get(f"/api/sessions/{sid}")).json()
        assert shown["pending"][0]["call_id"] == "write-1"
        assert shown["todos"][0]["content"] == "Write notes"
        assert (await http.get("/api/sessions/unknown")).status_code == 404
        assert (await http.post(f"/api/sessions/{sid}/cancel")).json() == {"cancelled": False}
        replay = events((await http.get(f"/api/sessions/{sid}/events")).text)
    kinds = [e["type"] for e in replay]
    assert replay[1] == {**replay[1], "type": "TEXT_MESSAGE_START", "role": "user"}
    assert replay[2]["delta"] == TASK
    assert "TOOL_CALL_START" in kinds and kinds.count("RUN_STARTED") == 2
    assert replay[-1]["outcome"]["interrupts"][0]["id"] == "write-1"


async def test_health_and_skills(service: SessionService) -> None:
    async with client(create_app(service=service)) as http:
        health = (await http.get("/api/health")).json()
        assert health["model"].startswith("scripted:") and health["permissionMode"] == "default"
        rows = {s["name"]: s for s in (await http.get("/api/skills")).json()["skills"]}
        assert rows["release-notes"]["problems"] == 0 and rows["broken"]["problems"] > 0
        broken = (await http.get("/api/skills/broken")).json()
        assert "SD110" in {p["code"] for p in broken["problems"]}  # no description
        matched = (await http.get("/api/skills/match", params={"q": "release notes"})).json()
        assert matched["skills"][0]["name"] == "release-notes"
        assert (await http.get("/api/skills", params={"q": "release"})).json()["skills"]
        shown = (await http.get("/api/skills/release-notes")).json()
        assert "<img" in shown["description"]  # served as data; the page renders it as text
        assert isinstance(shown["problems"], list) and shown["unavailable_reason"] is None
        service.registry.disable("release-notes")
        try:
            hidden = (await http.get("/api/skills/release-notes")).json()
        finally:
            service.registry.enable("release-notes")
        assert hidden["unavailable_reason"]  # the page can say why, not just "unavailable"
        missing = await http.get("/api/skills/no-such-skill")
        assert missing.status_code == 404 and "no-such-skill" in missing.json()["error"]
        assert (await http.get("/api/skills/match")).status_code == 400


async def test_every_response_carries_the_security_headers(service: SessionService) -> None:
    async with client(create_app(service=service)) as http:
        for path in ("/", "/api/health", "/static/app.js", "/nowhere"):
            response = await http.get(path)
            csp = response.headers["content-security-policy"]
            assert "script-src 'self'" in csp and "unsafe-inline" not in csp
            assert "frame-ancestors 'none'" in csp and "img-src 'self' data:" in csp
            assert response.headers["x-content-type-options"] == "nosniff"
        page = (await http.get("/")).text
    assert "<script>" not in page and "onclick" not in page  # no inline script
    assert "http://" not in page and "https://" not in page  # nothing from a CDN


async def test_a_token_is_required_on_every_request(service: SessionService) -> None:
    app = create_app(service=service, token="s3cret")
    async with client(app) as http:
        for path in ("/", "/api/health", "/static/app.js", "/api/sessions"):
            assert (await http.get(path)).status_code == 401
        assert (await http.post("/agui", json=run_input())).status_code == 401
        assert (
            await http.get("/api/health", headers={"x-skilldeck-token": "wrong"})
        ).status_code == 401
        assert (await http.get("/login", params={"token": "wrong"})).status_code == 401
        ok = await http.get("/api/health", headers={"authorization": "Bearer s3cret"})
        assert ok.status_code == 200
        login = await http.get("/login", params={"token": "s3cret"})
        assert login.status_code == 303 and login.headers["location"] == "/"
        cookie = login.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
        assert (await http.get("/api/health")).status_code == 200  # the cookie now


async def test_cross_site_requests_are_refused(service: SessionService) -> None:
    async with client(create_app(service=service)) as http:
        evil = {"origin": "https://evil.example"}
        assert (await http.post("/agui", json=run_input(), headers=evil)).status_code == 403
        assert (await http.post("/api/sessions/x/cancel", headers=evil)).status_code == 403
        same = {"origin": BASE}
        assert (await http.get("/api/health", headers=same)).status_code == 200
        fetch = {"sec-fetch-site": "cross-site", "sec-fetch-mode": "cors"}
        assert (await http.get("/api/sessions", headers=fetch)).status_code == 403
        link = {"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate"}
        assert (await http.get("/", headers=link)).status_code == 200
        # DNS rebinding: a page of evil.example resolved to 127.0.0.1
        rebound = {"host": "evil.example:8765", "origin": "http://evil.example:8765"}
        assert (await http.get("/api/sessions", headers=rebound)).status_code == 421
        for odd in ("evil.com@127.0.0.1:8765", "127.0.0.1:80:90", "127.0.0.1 x", ""):
            assert (await http.get("/api/health", headers={"host": odd})).status_code == 421


async def test_extra_allowed_hosts(service: SessionService) -> None:
    app = create_app(service=service, allowed_hosts=["skilldeck.lan"])
    async with client(app, host="skilldeck.lan:8765") as http:
        assert (await http.get("/api/health")).status_code == 200


async def test_request_bodies_are_capped(service: SessionService) -> None:
    async with client(create_app(service=service, max_body=1000)) as http:
        big = run_input(text="x" * 5000)
        assert (await http.post("/agui", json=big)).status_code == 413

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as it comes
            for _ in range(10):
                yield b"x" * 500

        assert (await http.post("/agui", content=chunks())).status_code == 413


async def test_websockets_are_refused() -> None:
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:  # never reached
        raise AssertionError("the guard let a websocket through")

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    guard = Guard(app, GuardOptions.make())
    await guard({"type": "websocket", "path": "/agui", "headers": []}, receive, send)
    assert sent == [{"type": "websocket.close", "code": 1008}]


async def test_a_client_leaving_mid_body_ends_quietly(service: SessionService) -> None:
    sent: list[dict[str, Any]] = []
    app = create_app(service=service)
    messages = iter([{"type": "http.request", "body": b"{", "more_body": True}])

    async def receive() -> dict[str, Any]:
        return next(messages, {"type": "http.disconnect"})

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"host", b"127.0.0.1:8765"), (b"content-length", b"1000")]
    scope = {"type": "http", "method": "POST", "path": "/agui", "headers": headers}
    await app({**scope, "query_string": b"", "root_path": ""}, receive, send)  # no exception
    assert service.list() == []


def test_loopback_is_decided_by_the_address_not_a_prefix() -> None:
    from skilldeck.web.security import is_loopback

    for host in ("127.0.0.1", "127.0.0.2", "localhost", "LOCALHOST", "::1", "[::1]"):
        assert is_loopback(host), host
    for host in ("127.example.com", "0.0.0.0", "::", "192.168.1.5", "evil.example", ""):
        assert not is_loopback(host), host
