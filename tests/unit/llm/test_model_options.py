"""Per-model options through the factory: streaming by default, sampling in the request
body only when set, the local timeout, and every retry told to ``on_retry``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from llm_fakes import RecordingTransport, fast_retry, json_response, settings_for, sse_response

from skilldeck.config import Settings
from skilldeck.errors import ModelConnectionError, ModelError
from skilldeck.llm.anthropic_adapter import AnthropicModel
from skilldeck.llm.factory import make_model
from skilldeck.llm.messages import UserMessage
from skilldeck.llm.openai_adapter import OpenAIModel
from skilldeck.llm.retry import RetryNotice
from skilldeck.settings.model import ModelOptions

pytestmark = pytest.mark.anyio

HI = [UserMessage(content="hi")]


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def streamed(text: str) -> Any:
    return sse_response(
        [(None, chunk({"content": text})), (None, chunk({}, "stop")), (None, "[DONE]")]
    )


ANTHROPIC_STREAM = [
    (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 5, "output_tokens": 0},
            },
        },
    ),
    (
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
    ),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 1},
        },
    ),
    ("message_stop", {"type": "message_stop"}),
]


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OLLAMA_HOST", raising=False)


def configured(tmp_path: Path, **options: ModelOptions) -> Settings:
    settings = settings_for(tmp_path)
    settings.models.options = dict(options)
    return settings


async def test_respond_streams_by_default_and_collects_the_turn(tmp_path: Path) -> None:
    transport = RecordingTransport([streamed("streamed hello")])
    model = make_model(
        "openai-compat:m",
        settings=settings_for(tmp_path),
        base_url="http://127.0.0.1:9/v1",
        http_client=transport.client(),
    )
    turn = await model.respond(HI, [])
    assert turn.text == "streamed hello"
    assert transport.body()["stream"] is True


async def test_stream_false_sends_one_json_request(tmp_path: Path) -> None:
    completion = {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "whole"},
                "finish_reason": "stop",
            }
        ],
    }
    transport = RecordingTransport([json_response(200, completion)])
    settings = configured(tmp_path, **{"openai:gpt-4.1": ModelOptions(stream=False)})
    model = make_model("openai:gpt-4.1", settings=settings, http_client=transport.client())
    assert (await model.respond(HI, [])).text == "whole"
    assert "stream" not in transport.body()


async def test_sampling_reaches_the_body_only_when_set(tmp_path: Path) -> None:
    transport = RecordingTransport([streamed("a"), streamed("b")])
    settings = configured(
        tmp_path,
        **{
            "*": ModelOptions(temperature=0.7),
            "openai-compat": ModelOptions(seed=1),
            "qwen": ModelOptions(temperature=0.0, seed=42, top_p=0.9),
        },
    )
    url = "http://127.0.0.1:9/v1"
    qwen = make_model(
        "openai-compat:qwen", settings=settings, base_url=url, http_client=transport.client()
    )
    await qwen.respond(HI, [])
    body = transport.body()
    assert (body["temperature"], body["seed"], body["top_p"]) == (0.0, 42, 0.9)
    other = make_model(
        "openai-compat:other", settings=settings, base_url=url, http_client=transport.client()
    )
    await other.respond(HI, [])
    body = transport.body()
    assert (body["temperature"], body["seed"]) == (0.7, 1) and "top_p" not in body


async def test_no_sampling_is_sent_unless_configured(tmp_path: Path) -> None:
    transport = RecordingTransport([streamed("a")])
    model = make_model(
        "ollama:qwen2.5", settings=settings_for(tmp_path), http_client=transport.client()
    )
    await model.respond(HI, [])
    assert not {"temperature", "seed", "top_p"} & set(transport.body())


async def test_anthropic_gets_temperature_but_no_seed(tmp_path: Path) -> None:
    transport = RecordingTransport([sse_response(ANTHROPIC_STREAM)])
    settings = configured(tmp_path, **{"*": ModelOptions(temperature=0.2, seed=3)})
    model = make_model("anthropic:claude-x", settings=settings, http_client=transport.client())
    assert isinstance(model, AnthropicModel)
    assert (await model.respond(HI, [])).text == "ok"
    body = transport.body()
    assert body["temperature"] == 0.2 and "seed" not in body and body["stream"] is True


def test_local_servers_get_the_long_timeout(tmp_path: Path) -> None:
    settings = configured(tmp_path, **{"openai:slow": ModelOptions(request_timeout=42)})

    def timeout(spec: str, base_url: str | None = None) -> float:
        model = make_model(spec, settings=settings, base_url=base_url)
        assert isinstance(model, OpenAIModel)
        value = model._clients._factory().timeout
        assert isinstance(value, float)
        return value

    assert timeout("openai:gpt-4.1") == 120.0
    assert timeout("ollama:qwen2.5") == 600.0
    assert timeout("openai-compat:m", "http://127.0.0.1:8080/v1") == 600.0
    assert timeout("openai-compat:m", "http://localhost:8080/v1") == 600.0
    assert timeout("openai-compat:m", "https://example.com/v1") == 120.0
    assert timeout("openai:slow") == 42.0


async def test_every_retry_is_told_before_its_wait(tmp_path: Path) -> None:
    busy = json_response(503, {"error": {"message": "loading model"}})
    transport = RecordingTransport([busy, busy, streamed("finally")])
    notices: list[RetryNotice] = []
    policy, sleep = fast_retry(3)
    model = make_model(
        "openai-compat:m",
        settings=settings_for(tmp_path),
        base_url="http://127.0.0.1:9/v1",
        http_client=transport.client(),
        retry=policy,
        on_retry=notices.append,
    )
    assert (await model.respond(HI, [])).text == "finally"
    assert [(n.attempt, n.attempts) for n in notices] == [(1, 4), (2, 4)]
    assert [n.delay for n in notices] == sleep.delays
    assert all("loading model" in n.reason and n.model == "openai-compat:m" for n in notices)


async def test_a_failing_listener_does_not_fail_the_call(tmp_path: Path) -> None:
    busy = json_response(503, {"error": {"message": "busy"}})
    transport = RecordingTransport([busy, busy])

    def broken(notice: RetryNotice) -> None:
        raise RuntimeError("renderer bug")

    model = make_model(
        "openai-compat:m",
        settings=settings_for(tmp_path),
        base_url="http://127.0.0.1:9/v1",
        http_client=transport.client(),
        retry=fast_retry(1)[0],
        on_retry=broken,
    )
    with pytest.raises(ModelConnectionError, match="gave up after 2 attempts"):
        await model.respond(HI, [])


TOOL_COMPLETION = {
    "id": "x",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Writing.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "Write", "arguments": '{"file_path": "a"}'},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
}


async def test_a_server_ignoring_stream_gets_its_json_reply_used(tmp_path: Path) -> None:
    """Some servers answer a streamed request with one JSON completion: it is checked
    and used as the turn, by ``respond`` and by ``stream`` alike."""
    transport = RecordingTransport([json_response(200, TOOL_COMPLETION)] * 2)
    model = make_model(
        "openai-compat:m",
        settings=settings_for(tmp_path),
        base_url="http://127.0.0.1:9/v1",
        http_client=transport.client(),
    )
    turn = await model.respond(HI, [])
    assert turn.text == "Writing." and turn.tool_calls[0].input == {"file_path": "a"}
    assert turn.stop_reason == "tool_use" and transport.body()["stream"] is True
    events = [e async for e in model.stream(HI, [])]
    assert [type(e).__name__ for e in events] == ["TextDelta", "TurnComplete"]


@pytest.mark.parametrize(
    "payload",
    [{}, {"choices": []}, {"error": {"message": "boom"}}],
    ids=["{}", "no-choices", "error"],
)
async def test_a_bad_json_reply_to_a_streamed_request_is_a_model_error(
    tmp_path: Path, payload: dict[str, Any]
) -> None:
    transport = RecordingTransport([json_response(200, payload)])
    model = make_model(
        "openai-compat:m",
        settings=settings_for(tmp_path),
        base_url="http://127.0.0.1:9/v1",
        http_client=transport.client(),
    )
    with pytest.raises(ModelError, match=r"127\.0\.0\.1:9/v1 answered HTTP 200 with .*'\{"):
        await model.respond(HI, [])
