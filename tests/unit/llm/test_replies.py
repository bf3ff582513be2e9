"""Replies that are not replies: HTTP 200 bodies the SDKs would accept without a word.

Each case goes through the real SDK (a MockTransport under it) and must end as a
ModelError naming the URL, the status and the start of the body — never an empty
"completed" turn, never a non-skilldeck exception.
"""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from llm_fakes import RecordingTransport, fast_retry, recorded_model

from skilldeck.errors import ModelError
from skilldeck.llm.messages import Model, TurnComplete, UserMessage
from skilldeck.llm.replies import check_anthropic_message, check_openai_completion
from skilldeck.llm.sdk_errors import is_local_url

pytestmark = pytest.mark.anyio

HI = [UserMessage(content="hi")]
BODIES = [
    (b"not json", "application/json"),
    (b"<html><h1>It works!</h1></html>", "text/html"),
    (b"{}", "application/json"),
    (b'{"choices": []}', "application/json"),
    (b'{"choices": [{"index": 0, "finish_reason": "stop"}]}', "application/json"),
    (b'{"choices": [{"message": {"content": 42}}]}', "application/json"),
    (b"[1, 2]", "application/json"),
]
STREAMS = [
    b"data: not json\n\n",
    b"data: {}\n\ndata: [DONE]\n\n",
    b"data: [DONE]\n\n",
    b"",
    b"garbage without fields\n\n",
    b'data: {"choices": [{"delta": 5}]}\n\n',
]


def _response(body: bytes, content_type: str) -> httpx2.Response:
    return httpx2.Response(200, content=body, headers={"content-type": content_type})


def _model(tmp_path: Path, spec: str, answer: httpx2.Response) -> Model:
    policy, _ = fast_retry(2)
    return recorded_model(spec, tmp_path, RecordingTransport([answer]), retry=policy)


def _assert_names_it(error: ModelError, body: bytes) -> None:
    text = str(error)
    assert "http://127.0.0.1:9/v1" in text and "HTTP 200" in text
    assert "\n" not in text
    first = body.decode().splitlines()[0] if body.strip() else "(empty body)"
    assert first[:20] in text


@pytest.fixture(autouse=True)
def _compat_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")


@pytest.mark.parametrize(("body", "content_type"), BODIES)
async def test_openai_respond_refuses_a_body_that_is_no_completion(
    tmp_path: Path, body: bytes, content_type: str
) -> None:
    model = _model(tmp_path, "openai-compat:m", _response(body, content_type))
    with pytest.raises(ModelError) as info:
        await model.respond(HI, [])
    _assert_names_it(info.value, body)


@pytest.mark.parametrize(("body", "content_type"), BODIES)
async def test_openai_stream_refuses_a_body_that_is_not_an_event_stream(
    tmp_path: Path, body: bytes, content_type: str
) -> None:
    model = _model(tmp_path, "openai-compat:m", _response(body, content_type))
    with pytest.raises(ModelError) as info:
        [e async for e in model.stream(HI, [])]
    _assert_names_it(info.value, body)


@pytest.mark.parametrize("body", STREAMS)
async def test_openai_stream_refuses_events_that_are_no_chunks(tmp_path: Path, body: bytes) -> None:
    model = _model(tmp_path, "openai-compat:m", _response(body, "text/event-stream"))
    with pytest.raises(ModelError) as info:
        events = [e async for e in model.stream(HI, [])]
        assert not any(isinstance(e, TurnComplete) for e in events)
    assert "HTTP 200" in str(info.value) and "\n" not in str(info.value)


async def test_a_valid_stream_still_streams(tmp_path: Path) -> None:
    body = (
        b'data: {"choices": [{"index": 0, "delta": {"content": "Hel"}}]}\n\n'
        b'data: {"choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": '
        b'"stop"}]}\n\ndata: [DONE]\n\n'
    )
    model = _model(tmp_path, "openai-compat:m", _response(body, "text/event-stream"))
    events = [e async for e in model.stream(HI, [])]
    assert isinstance(events[-1], TurnComplete) and events[-1].message.text == "Hello"


@pytest.mark.parametrize(
    ("body", "content_type", "stream"),
    [
        (b"<html>login</html>", "text/html", False),
        (b'{"type": "message"}', "application/json", False),
        (b'{"content": [{"text": "no type"}]}', "application/json", False),
        (b"<html>login</html>", "text/html", True),
        (b"event: ping\ndata: {}\n\n", "text/event-stream", True),
    ],
)
async def test_anthropic_refuses_a_body_that_is_no_message(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    body: bytes,
    content_type: str,
    stream: bool,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/v1")
    model = _model(tmp_path, "anthropic:claude-x", _response(body, content_type))
    with pytest.raises(ModelError) as info:
        if stream:
            [e async for e in model.stream(HI, [])]
        else:
            await model.respond(HI, [])
    assert "HTTP 200" in str(info.value) and "Anthropic Messages API" in str(info.value)


def test_checks_accept_real_replies() -> None:
    assert check_openai_completion({"choices": [{"message": {"content": "hi"}}]}) is None
    assert check_anthropic_message({"content": [{"type": "text", "text": "hi"}]}) is None


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://localhost:11434/v1", True),
        ("http://127.0.0.1:8000/v1", True),
        ("http://127.5.5.5/v1", True),
        ("http://[::1]:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.2:8000/v1", False),
    ],
)
def test_is_local_url(url: str, local: bool) -> None:
    assert is_local_url(url) is local
