"""The Anthropic adapter driven through the real `anthropic` SDK over an httpx2 MockTransport."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from llm_fakes import RecordingTransport, fast_retry, json_response, recorded_model, sse_response

from skilldeck.errors import ModelConfigError, ModelConnectionError, ModelError
from skilldeck.llm.anthropic_adapter import DEFAULT_MAX_TOKENS, AnthropicModel
from skilldeck.llm.messages import (
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

pytestmark = pytest.mark.anyio

READ = ToolSpec(
    name="Read",
    description="Read a file.",
    input_schema={
        "type": "object",
        "properties": {"file_path": {"type": "string"}},
        "required": ["file_path"],
    },
)

TOOL_USE_MESSAGE: dict[str, Any] = {
    "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-6",
    "content": [
        {"type": "text", "text": "I'll read both files."},
        {
            "type": "tool_use",
            "id": "toolu_01A09q90qw90lq917835lq9",
            "name": "Read",
            "input": {"file_path": "a.md"},
        },
        {
            "type": "tool_use",
            "id": "toolu_01B77x",
            "name": "Read",
            "input": {"file_path": "b.md"},
        },
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 120,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 380,
        "output_tokens": 88,
        "service_tier": "standard",
    },
}

TEXT_MESSAGE: dict[str, Any] = {
    "id": "msg_02",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-6",
    "content": [{"type": "text", "text": "Both files are empty."}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 640, "output_tokens": 9},
}

OVERLOADED = {
    "type": "error",
    "error": {"type": "overloaded_error", "message": "Overloaded"},
    "request_id": "req_011",
}


SSE = tuple[str | None, Any]


def block_start(index: int, block: dict[str, Any]) -> SSE:
    return (
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )


def block_delta(index: int, delta: dict[str, Any]) -> SSE:
    return ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})


def block_stop(index: int) -> SSE:
    return ("content_block_stop", {"type": "content_block_stop", "index": index})


def sse_tool_use_stream() -> list[SSE]:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_03",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 472, "cache_read_input_tokens": 28, "output_tokens": 2},
        },
    }
    return [
        ("message_start", start),
        block_start(0, {"type": "text", "text": ""}),
        ("ping", {"type": "ping"}),
        block_delta(0, {"type": "text_delta", "text": "Let me "}),
        block_delta(0, {"type": "text_delta", "text": "check."}),
        block_stop(0),
        block_start(1, {"type": "tool_use", "id": "toolu_S1", "name": "Read", "input": {}}),
        block_delta(1, {"type": "input_json_delta", "partial_json": ""}),
        block_delta(1, {"type": "input_json_delta", "partial_json": '{"file_path": "RE'}),
        block_delta(1, {"type": "input_json_delta", "partial_json": 'ADME.md"}'}),
        block_stop(1),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 61},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


@pytest.fixture(autouse=True)
def _anthropic_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    for var in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(var, raising=False)


def build(tmp_path: Path, transport: RecordingTransport, *, retries: int = 2) -> AnthropicModel:
    model = recorded_model(
        "anthropic:claude-sonnet-4-6", tmp_path, transport, retry=fast_retry(retries)[0]
    )
    assert isinstance(model, AnthropicModel)
    return model


def conversation() -> list[Message]:
    return [
        SystemMessage(content="You are skilldeck."),
        SystemMessage(content="Skills: none."),
        UserMessage(content="Read a.md and b.md"),
        AssistantMessage(
            text="Reading.",
            tool_calls=[
                ToolCall(id="toolu_1", name="Read", input={"file_path": "a.md"}),
                ToolCall(id="toolu_2", name="Read", input={"file_path": "b.md"}),
            ],
        ),
        ToolResultMessage(tool_call_id="toolu_1", name="Read", content="1\tA"),
        ToolResultMessage(
            tool_call_id="toolu_2", name="Read", content="no such file", is_error=True
        ),
        UserMessage(content="(hint) use the reader skill", meta="skill-hint"),
    ]


async def test_tool_use_answer_and_wire_format(tmp_path: Path) -> None:
    transport = RecordingTransport([json_response(200, TOOL_USE_MESSAGE)])
    turn = await build(tmp_path, transport).respond(conversation(), [READ])

    assert turn.text == "I'll read both files."
    assert turn.tool_calls == [
        ToolCall(id="toolu_01A09q90qw90lq917835lq9", name="Read", input={"file_path": "a.md"}),
        ToolCall(id="toolu_01B77x", name="Read", input={"file_path": "b.md"}),
    ]
    assert turn.stop_reason == "tool_use"
    assert turn.usage == Usage(input_tokens=500, output_tokens=88)  # cache reads count as input

    request = transport.requests[0]
    assert str(request.url) == "https://api.anthropic.com/v1/messages"
    body = transport.body()
    assert body["model"] == "claude-sonnet-4-6"
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS
    assert body["system"] == "You are skilldeck.\n\nSkills: none."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Read a.md and b.md"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "Read",
                    "input": {"file_path": "a.md"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "Read",
                    "input": {"file_path": "b.md"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "1\tA"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "no such file",
                    "is_error": True,
                },
                {"type": "text", "text": "(hint) use the reader skill"},
            ],
        },
    ]
    assert body["tools"] == [
        {"name": "Read", "description": "Read a file.", "input_schema": READ.input_schema}
    ]


async def test_text_answer_without_system_or_tools(tmp_path: Path) -> None:
    transport = RecordingTransport([json_response(200, TEXT_MESSAGE)])
    turn = await build(tmp_path, transport).respond([UserMessage(content="hi")], [])
    assert turn.text == "Both files are empty."
    assert turn.stop_reason == "end_turn"
    assert turn.usage == Usage(input_tokens=640, output_tokens=9)
    body = transport.body()
    assert "system" not in body
    assert "tools" not in body


async def test_streamed_input_json_deltas_are_assembled(tmp_path: Path) -> None:
    transport = RecordingTransport([sse_response(sse_tool_use_stream())])
    events = [
        e async for e in build(tmp_path, transport).stream([UserMessage(content="x")], [READ])
    ]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Let me check."
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas[0].id == "toolu_S1"
    assert deltas[0].name == "Read"
    assert {d.index for d in deltas} == {0}
    assert "".join(d.arguments_fragment for d in deltas) == '{"file_path": "README.md"}'
    final = events[-1]
    assert isinstance(final, TurnComplete)
    assert final.message.tool_calls == [
        ToolCall(id="toolu_S1", name="Read", input={"file_path": "README.md"})
    ]
    assert final.message.usage == Usage(input_tokens=500, output_tokens=61)
    assert final.message.stop_reason == "tool_use"
    assert transport.body()["stream"] is True


async def test_overloaded_then_success(tmp_path: Path) -> None:
    transport = RecordingTransport(
        [
            json_response(529, OVERLOADED),
            json_response(429, OVERLOADED),
            json_response(200, TEXT_MESSAGE),
        ]
    )
    policy, sleep = fast_retry(3)
    model = recorded_model("anthropic:claude-sonnet-4-6", tmp_path, transport, retry=policy)
    turn = await model.respond([UserMessage(content="hi")], [])
    assert turn.text == "Both files are empty."
    assert len(transport.requests) == 3
    assert len(sleep.delays) == 2
    assert sleep.delays[1] > sleep.delays[0] * 0.9  # exponential, jittered


async def test_overloaded_exhaustion(tmp_path: Path) -> None:
    transport = RecordingTransport([json_response(529, OVERLOADED) for _ in range(2)])
    with pytest.raises(
        ModelConnectionError, match="server error 529 \\(Overloaded\\); gave up after 2"
    ):
        await build(tmp_path, transport, retries=1).respond([UserMessage(content="hi")], [])


async def test_invalid_request_error_message(tmp_path: Path) -> None:
    body = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": (
                "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks"
            ),
        },
    }
    transport = RecordingTransport([json_response(400, body)])
    with pytest.raises(ModelError, match="unexpected `tool_use_id`"):
        await build(tmp_path, transport).respond([UserMessage(content="hi")], [])
    assert len(transport.requests) == 1


async def test_401_names_the_key_variable(tmp_path: Path) -> None:
    body = {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    }
    transport = RecordingTransport([json_response(401, body)])
    with pytest.raises(ModelConfigError, match=r"invalid x-api-key.*Check ANTHROPIC_API_KEY"):
        await build(tmp_path, transport).respond([UserMessage(content="hi")], [])


async def test_error_event_mid_stream_is_a_model_error(tmp_path: Path) -> None:
    events = [*sse_tool_use_stream()[:4], ("error", OVERLOADED)]
    transport = RecordingTransport([sse_response(events)])
    model = build(tmp_path, transport)
    seen: list[Any] = []
    with pytest.raises(ModelError, match="Overloaded"):
        async for event in model.stream([UserMessage(content="x")], []):
            seen.append(event)
    assert any(isinstance(e, TextDelta) for e in seen)


async def test_empty_user_and_assistant_messages_keep_the_api_happy(tmp_path: Path) -> None:
    transport = RecordingTransport([json_response(200, TEXT_MESSAGE)])
    history: list[Message] = [UserMessage(content=""), AssistantMessage(), UserMessage(content="b")]
    await build(tmp_path, transport).respond(history, [])
    assert transport.body()["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "(empty)"}, {"type": "text", "text": "b"}],
        }
    ]
