"""The OpenAI adapter driven through the real `openai` SDK over an httpx2 MockTransport."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from llm_fakes import (
    RecordingTransport,
    fast_retry,
    json_response,
    recorded_model,
    settings_for,
    sse_response,
)

from skilldeck.errors import ModelConfigError, ModelConnectionError, ModelError
from skilldeck.llm.factory import make_model
from skilldeck.llm.messages import (
    RAW_ARGUMENTS_KEY,
    AssistantMessage,
    Message,
    SystemMessage,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolResultMessage,
    ToolSpec,
    TurnComplete,
    Usage,
    UserMessage,
)
from skilldeck.llm.openai_adapter import OpenAIModel
from skilldeck.settings.model import ModelOptions

pytestmark = pytest.mark.anyio

WRITE = ToolSpec(
    name="Write",
    description="Write a file.",
    input_schema={
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["file_path", "content"],
    },
)

TOOL_CALL_COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-BXr9mQ2",
    "object": "chat.completion",
    "created": 1747000000,
    "model": "gpt-4.1-mini-2025-04-14",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_Zk3LmQ",
                        "type": "function",
                        "function": {
                            "name": "Write",
                            "arguments": '{"file_path":"notes.md","content":"# Notes\\n"}',
                        },
                    }
                ],
                "refusal": None,
                "annotations": [],
            },
            "logprobs": None,
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {
        "prompt_tokens": 412,
        "completion_tokens": 27,
        "total_tokens": 439,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    },
    "service_tier": "default",
    "system_fingerprint": "fp_6f2eabb9a5",
}

TEXT_COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-BXr9nA1",
    "object": "chat.completion",
    "created": 1747000001,
    "model": "gpt-4.1-mini-2025-04-14",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "I wrote notes.md.", "refusal": None},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 470, "completion_tokens": 6, "total_tokens": 476},
}

RATE_LIMIT_BODY = {
    "error": {
        "message": "Rate limit reached for gpt-4.1-mini in organization org-x on tokens per min.",
        "type": "tokens",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-BXs1",
        "object": "chat.completion.chunk",
        "created": 1747000002,
        "model": "gpt-4.1-mini-2025-04-14",
        "system_fingerprint": "fp_6f2eabb9a5",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def tool_chunk(index: int, arguments: str, *, call_id: str | None = None) -> dict[str, Any]:
    """A streamed fragment of a Write call; the first fragment of a call carries its id."""
    function: dict[str, Any] = {"arguments": arguments}
    part: dict[str, Any] = {"index": index, "function": function}
    if call_id is not None:
        part.update(id=call_id, type="function")
        function["name"] = "Write"
    return chunk({"tool_calls": [part]})


STREAMED_TOOL_CALLS = [
    chunk({"role": "assistant", "content": "Writing ", "refusal": None}),
    chunk({"content": "both."}),
    tool_chunk(0, "", call_id="call_A1"),
    tool_chunk(0, '{"file_'),
    tool_chunk(0, 'path": "a.txt", '),
    tool_chunk(0, '"content": "A"}'),
    tool_chunk(1, '{"file_path": "b.txt",', call_id="call_B2"),
    tool_chunk(1, ' "content": "B"}'),
    chunk({}, finish="tool_calls"),
    {
        "id": "chatcmpl-BXs1",
        "object": "chat.completion.chunk",
        "created": 1747000002,
        "model": "gpt-4.1-mini-2025-04-14",
        "choices": [],
        "usage": {"prompt_tokens": 300, "completion_tokens": 41, "total_tokens": 341},
    },
]


@pytest.fixture(autouse=True)
def _openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def build(tmp_path: Path, transport: RecordingTransport, *, retries: int = 2) -> OpenAIModel:
    model = recorded_model("openai:gpt-4.1-mini", tmp_path, transport, retry=fast_retry(retries)[0])
    assert isinstance(model, OpenAIModel)
    return model


def conversation() -> list[Message]:
    return [
        SystemMessage(content="You are skilldeck."),
        UserMessage(content="Write notes.md"),
        AssistantMessage(
            text="On it.",
            tool_calls=[ToolCall(id="call_1", name="Write", input={"file_path": "notes.md"})],
        ),
        ToolResultMessage(
            tool_call_id="call_1", name="Write", content="missing content", is_error=True
        ),
        UserMessage(content="Use the skill", meta="skill-hint"),
    ]


async def test_tool_call_answer_and_wire_format(tmp_path: Path) -> None:
    transport = RecordingTransport([json_response(200, TOOL_CALL_COMPLETION)])
    model = build(tmp_path, transport)
    turn = await model.respond(conversation(), [WRITE])

    assert turn.tool_calls == [
        ToolCall(
            id="call_Zk3LmQ", name="Write", input={"file_path": "notes.md", "content": "# Notes\n"}
        )
    ]
    assert turn.text == ""
    assert turn.stop_reason == "tool_use"
    assert turn.usage == Usage(input_tokens=412, output_tokens=27)
    assert turn.model == "gpt-4.1-mini-2025-04-14"

    request = transport.requests[0]
    assert str(request.url) == "https://api.openai.com/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test-123"
    body = transport.body()
    assert body["model"] == "gpt-4.1-mini"
    assert body["messages"] == [
        {"role": "system", "content": "You are skilldeck."},
        {"role": "user", "content": "Write notes.md"},
        {
            "role": "assistant",
            "content": "On it.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "Write", "arguments": '{"file_path": "notes.md"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Error: missing content"},
        {"role": "user", "content": "Use the skill"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "Write",
                "description": "Write a file.",
                "parameters": WRITE.input_schema,
            },
        }
    ]
    assert "stream" not in body


async def test_text_answer(tmp_path: Path) -> None:
    transport = RecordingTransport([json_response(200, TEXT_COMPLETION)])
    turn = await build(tmp_path, transport).respond([UserMessage(content="hi")], [])
    assert turn.text == "I wrote notes.md."
    assert turn.tool_calls == []
    assert turn.stop_reason == "end_turn"
    assert "tools" not in transport.body()


async def test_bad_argument_json_is_kept_raw_for_the_tool_to_reject(tmp_path: Path) -> None:
    payload = json.loads(json.dumps(TOOL_CALL_COMPLETION))
    payload["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"file_path": '
    transport = RecordingTransport([json_response(200, payload)])
    turn = await build(tmp_path, transport).respond([UserMessage(content="x")], [WRITE])
    assert turn.tool_calls[0].input == {RAW_ARGUMENTS_KEY: '{"file_path": '}


async def test_streamed_tool_call_deltas_are_assembled(tmp_path: Path) -> None:
    events_in: list[tuple[str | None, Any]] = [(None, c) for c in STREAMED_TOOL_CALLS]
    transport = RecordingTransport([sse_response([*events_in, (None, "[DONE]")])])
    model = build(tmp_path, transport)
    events = [e async for e in model.stream([UserMessage(content="write a and b")], [WRITE])]

    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Writing both."
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [d.index for d in deltas] == [0, 0, 0, 0, 1, 1]
    assert deltas[0].id == "call_A1"
    assert deltas[0].name == "Write"
    final = events[-1]
    assert isinstance(final, TurnComplete)
    assert final.message.text == "Writing both."
    assert final.message.tool_calls == [
        ToolCall(id="call_A1", name="Write", input={"file_path": "a.txt", "content": "A"}),
        ToolCall(id="call_B2", name="Write", input={"file_path": "b.txt", "content": "B"}),
    ]
    assert final.message.usage == Usage(input_tokens=300, output_tokens=41)
    assert final.message.stop_reason == "tool_use"
    body = transport.body()
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


async def test_stream_without_usage_gets_an_estimate(tmp_path: Path) -> None:
    chunks = [chunk({"role": "assistant", "content": "Hi"}), chunk({}, finish="stop")]
    transport = RecordingTransport([sse_response([(None, c) for c in chunks] + [(None, "[DONE]")])])
    events = [e async for e in build(tmp_path, transport).stream([UserMessage(content="x")], [])]
    final = events[-1]
    assert isinstance(final, TurnComplete)
    assert final.message.usage is not None
    assert final.message.usage.input_tokens > 0
    assert final.message.stop_reason == "end_turn"


async def test_rate_limit_then_success_waits_as_told(tmp_path: Path) -> None:
    transport = RecordingTransport(
        [
            json_response(429, RATE_LIMIT_BODY, {"retry-after-ms": "1500"}),
            json_response(503, {"error": {"message": "overloaded"}}),
            json_response(200, TEXT_COMPLETION),
        ]
    )
    policy, sleep = fast_retry(3)
    model = recorded_model("openai:gpt-4.1-mini", tmp_path, transport, retry=policy)
    turn = await model.respond([UserMessage(content="hi")], [])
    assert turn.text == "I wrote notes.md."
    assert len(transport.requests) == 3
    assert sleep.delays[0] == 1.5  # the server's retry-after-ms
    assert 0.375 <= sleep.delays[1] <= 0.625 * 2  # backoff with jitter for retry 2


async def test_rate_limit_exhaustion_is_a_clear_connection_error(tmp_path: Path) -> None:
    transport = RecordingTransport([json_response(429, RATE_LIMIT_BODY) for _ in range(3)])
    model = build(tmp_path, transport, retries=2)
    with pytest.raises(ModelConnectionError) as info:
        await model.respond([UserMessage(content="hi")], [])
    message = str(info.value)
    assert "rate limited" in message
    assert "gave up after 3 attempts" in message
    assert "Rate limit reached" in message
    assert len(transport.requests) == 3


async def test_bad_request_is_not_retried(tmp_path: Path) -> None:
    body = {
        "error": {
            "message": "Invalid 'messages[1].content': string too long.",
            "type": "invalid_request_error",
            "param": "messages[1].content",
            "code": "string_above_max_length",
        }
    }
    transport = RecordingTransport([json_response(400, body)])
    with pytest.raises(ModelError, match=r"HTTP 400: Invalid 'messages\[1\].content'"):
        await build(tmp_path, transport).respond([UserMessage(content="hi")], [])
    assert len(transport.requests) == 1


async def test_401_names_the_key_variable(tmp_path: Path) -> None:
    body = {
        "error": {
            "message": "Incorrect API key provided: sk-test-***123.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
    }
    transport = RecordingTransport([json_response(401, body)])
    with pytest.raises(ModelConfigError) as info:
        await build(tmp_path, transport).respond([UserMessage(content="hi")], [])
    assert "Check OPENAI_API_KEY" in str(info.value)
    assert "\n" not in str(info.value)


def _refuse(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ConnectError("[Errno 111] Connection refused", request=request)


async def test_unreachable_remote_server_is_retried_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "http://gpu-box.example:11434")
    transport = RecordingTransport([_refuse, _refuse])
    policy, sleep = fast_retry(1)
    model = recorded_model("ollama:qwen2.5", tmp_path, transport, retry=policy)
    with pytest.raises(ModelConnectionError) as info:
        await model.respond([UserMessage(content="hi")], [])
    message = str(info.value)
    assert "http://gpu-box.example:11434/v1" in message
    assert "2 attempts" in message
    assert len(sleep.delays) == 1


@pytest.mark.parametrize(
    "host", ["http://localhost:11434", "http://127.0.0.1:8080", "http://[::1]:8080"]
)
async def test_refused_local_server_fails_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    """Nothing listening on this machine will not start listening in 7 s of retries."""
    monkeypatch.setenv("OLLAMA_HOST", host)
    transport = RecordingTransport([_refuse, _refuse, _refuse])
    policy, sleep = fast_retry(3)
    model = recorded_model("ollama:qwen2.5", tmp_path, transport, retry=policy)
    with pytest.raises(ModelConnectionError) as info:
        await model.respond([UserMessage(content="hi")], [])
    assert f"{host}/v1" in str(info.value)
    assert "nothing answers there" in str(info.value)
    assert sleep.delays == []
    assert len(transport.requests) == 1


async def test_stream_error_status_is_mapped(tmp_path: Path) -> None:
    transport = RecordingTransport(
        [json_response(404, {"error": {"message": "model 'nope' not found"}})]
    )
    model = recorded_model("ollama:nope", tmp_path, transport, retry=fast_retry(0)[0])
    with pytest.raises(ModelConfigError, match=r"model 'nope' not found.*Check the model name"):
        async for _ in model.stream([UserMessage(content="hi")], []):
            pass


async def test_max_output_tokens_uses_the_right_parameter(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    settings.models.max_output_tokens = 256
    settings.models.options = {"*": ModelOptions(stream=False)}  # one JSON reply each
    transport = RecordingTransport([json_response(200, TEXT_COMPLETION)] * 2)
    openai_model = make_model("openai:gpt-4.1", settings=settings, http_client=transport.client())
    await openai_model.respond([UserMessage(content="a")], [])
    assert transport.body()["max_completion_tokens"] == 256
    compat = make_model(
        "openai-compat:local",
        settings=settings,
        base_url="http://127.0.0.1:9/v1",
        http_client=transport.client(),
    )
    await compat.respond([UserMessage(content="a")], [])
    assert transport.body()["max_tokens"] == 256
    assert str(transport.requests[-1].url) == "http://127.0.0.1:9/v1/chat/completions"


async def test_empty_assistant_turn_and_error_results_round_trip(tmp_path: Path) -> None:
    transport = RecordingTransport([json_response(200, TEXT_COMPLETION)])
    history: list[Message] = [
        UserMessage(content="a"),
        AssistantMessage(),
        UserMessage(content="b"),
    ]
    await build(tmp_path, transport).respond(history, [])
    assert transport.body()["messages"][1] == {"role": "assistant", "content": ""}


async def test_server_rejecting_stream_options_is_retried_without(tmp_path: Path) -> None:
    rejection = {"error": {"message": "Unrecognized request argument: stream_options"}}
    chunks = [chunk({"role": "assistant", "content": "Hi"}), chunk({}, finish="stop")]
    transport = RecordingTransport(
        [
            json_response(400, rejection),
            sse_response([*((None, c) for c in chunks), (None, "[DONE]")]),
        ]
    )
    model = build(tmp_path, transport)
    events = [e async for e in model.stream([UserMessage(content="x")], [])]
    assert isinstance(events[-1], TurnComplete)
    assert events[-1].message.text == "Hi"
    assert "stream_options" in transport.body(0)
    assert "stream_options" not in transport.body(1)
    assert model.stream_usage is False
