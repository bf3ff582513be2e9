"""The scripted model: line selection from history, `for` routing, errors, recording."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skilldeck.errors import ModelConfigError, ModelError, ScriptExhaustedError
from skilldeck.llm.messages import (
    AssistantMessage,
    Message,
    Model,
    SystemMessage,
    TextDelta,
    ToolCallDelta,
    ToolResultMessage,
    ToolSpec,
    TurnComplete,
    Usage,
    UserMessage,
    collect_stream,
)
from skilldeck.llm.scripted import ScriptedModel, load_script

pytestmark = pytest.mark.anyio

WRITE = ToolSpec(name="Write", description="write a file", input_schema={"type": "object"})


def write_script(tmp_path: Path, *lines: dict[str, Any] | str) -> Path:
    path = tmp_path / "script.jsonl"
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def convo(task: str, *turns: AssistantMessage) -> list[Message]:
    """A conversation where each assistant turn's tool calls got a result."""
    messages: list[Message] = [SystemMessage(content="sys"), UserMessage(content=task)]
    for turn in turns:
        messages.append(turn)
        messages.extend(
            ToolResultMessage(tool_call_id=c.id, name=c.name, content="ok") for c in turn.tool_calls
        )
    return messages


async def test_plays_lines_in_order_and_generates_ids(tmp_path: Path) -> None:
    path = write_script(
        tmp_path,
        "# a comment line",
        {"text": "writing", "tool_calls": [{"name": "Write", "input": {"file_path": "a"}}]},
        "",
        {"tool_calls": [{"name": "Read"}, {"id": "mine", "name": "Read"}]},
        {"text": "done"},
    )
    model = ScriptedModel(path)
    assert isinstance(model, Model)
    assert model.name == f"scripted:{path}"

    first = await model.respond(convo("task"), [WRITE])
    assert first.text == "writing"
    assert [(c.id, c.name, c.input) for c in first.tool_calls] == [
        ("call_1", "Write", {"file_path": "a"})
    ]
    assert first.stop_reason == "tool_use"
    second = await model.respond(convo("task", first), [WRITE])
    assert [c.id for c in second.tool_calls] == ["call_2", "mine"]
    assert second.tool_calls[0].input == {}
    third = await model.respond(convo("task", first, second), [WRITE])
    assert third.text == "done"
    assert third.tool_calls == []
    assert third.stop_reason == "end_turn"


async def test_line_is_chosen_from_history_not_memory(tmp_path: Path) -> None:
    """A resumed session (a fresh model object in another process) continues correctly."""
    path = write_script(tmp_path, {"text": "one", "tool_calls": [{"name": "X"}]}, {"text": "two"})
    first = await ScriptedModel(path).respond(convo("task"), [])
    fresh = ScriptedModel(path)  # as if in a new process
    again = await fresh.respond(convo("task", first), [])
    assert again.text == "two"
    # asking twice for the same point in the conversation gives the same line
    assert (await fresh.respond(convo("task", first), [])).text == "two"


async def test_for_lines_route_by_first_user_message(tmp_path: Path) -> None:
    path = write_script(
        tmp_path,
        {"text": "main 1", "tool_calls": [{"name": "Task"}]},
        {"for": "summarise the report", "text": "sub 1", "tool_calls": [{"name": "Read"}]},
        {"for": "summarise the report", "text": "sub 2"},
        {"text": "main 2"},
    )
    model = ScriptedModel(path)
    main1 = await model.respond(convo("do the work"), [])
    assert main1.text == "main 1"
    sub1 = await model.respond(convo("Please summarise the report in 3 lines"), [])
    assert sub1.text == "sub 1"
    sub2 = await model.respond(convo("Please summarise the report in 3 lines", sub1), [])
    assert sub2.text == "sub 2"
    assert (await model.respond(convo("do the work", main1), [])).text == "main 2"
    assert [r.lineno for r in model.requests] == [1, 2, 3, 4]


async def test_meta_user_messages_do_not_count_as_the_task(tmp_path: Path) -> None:
    path = write_script(tmp_path, {"for": "sub", "text": "sub"}, {"text": "main"})
    messages: list[Message] = [
        UserMessage(content="hint: sub skill", meta="skill-hint"),
        UserMessage(content="the main task"),
    ]
    assert (await ScriptedModel(path).respond(messages, [])).text == "main"


async def test_exhaustion_names_file_conversation_and_count(tmp_path: Path) -> None:
    path = write_script(tmp_path, {"text": "only", "tool_calls": [{"name": "X"}]})
    model = ScriptedModel(path)
    first = await model.respond(convo("my task"), [])
    with pytest.raises(ScriptExhaustedError) as info:
        await model.respond(convo("my task", first), [])
    message = str(info.value)
    assert str(path) in message
    assert "'my task'" in message
    assert "turn 2" in message
    assert "only 1" in message


async def test_exhaustion_of_for_lines_says_which(tmp_path: Path) -> None:
    path = write_script(tmp_path, {"for": "child", "text": "c"}, {"text": "m"})
    model = ScriptedModel(path)
    child = await model.respond(convo("child job"), [])
    with pytest.raises(ScriptExhaustedError, match="\"for\" 'child'"):
        await model.respond(convo("child job", child), [])


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("{not json", "invalid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"txt": "typo"}', "unknown key(s) txt"),
        ('{"text": 3}', "'text' must be a string"),
        ('{"tool_calls": {"name": "X"}}', "'tool_calls' must be a list"),
        ('{"tool_calls": [{"input": {}}]}', "tool_calls[0] needs a string 'name'"),
        ('{"tool_calls": [{"name": "X", "input": [1]}]}', "tool_calls[0].input must be"),
        ('{"usage": {"input_tokens": "many"}}', "'usage' must be"),
    ],
)
def test_malformed_line_is_a_config_error_with_file_and_line(
    tmp_path: Path, line: str, fragment: str
) -> None:
    path = write_script(tmp_path, {"text": "fine"}, "", line)
    with pytest.raises(ModelConfigError) as info:
        load_script(path)
    assert f"{path}:3:" in str(info.value)
    assert fragment in str(info.value)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="not found"):
        ScriptedModel(tmp_path / "nope.jsonl")


async def test_records_every_request_as_a_snapshot(tmp_path: Path) -> None:
    path = write_script(tmp_path, {"text": "a", "tool_calls": [{"name": "W"}]}, {"text": "b"})
    model = ScriptedModel(path)
    messages = convo("task")
    first = await model.respond(messages, [WRITE])
    messages.append(first)  # mutating the caller's list later must not change the record
    await model.respond(convo("task", first), [])
    assert len(model.requests) == 2
    assert len(model.requests[0].messages) == 2
    assert model.requests[0].tool_names == ["Write"]
    assert model.requests[1].tools == []
    assert isinstance(model.requests[1].messages[-1], ToolResultMessage)


async def test_usage_scripted_or_estimated(tmp_path: Path) -> None:
    path = write_script(
        tmp_path,
        {
            "text": "x",
            "usage": {"input_tokens": 7, "output_tokens": 3},
            "tool_calls": [{"name": "A"}],
        },
        {"text": "a longer answer than before"},
    )
    model = ScriptedModel(path)
    first = await model.respond(convo("task"), [])
    assert first.usage == Usage(input_tokens=7, output_tokens=3)
    second = await model.respond(convo("task", first), [WRITE])
    assert second.usage is not None
    assert second.usage.input_tokens > 10
    assert second.usage.output_tokens == len("a longer answer than before") // 4 + 1


async def test_error_line_raises_model_error(tmp_path: Path) -> None:
    path = write_script(tmp_path, {"error": "overloaded"})
    with pytest.raises(ModelError, match=r"script\.jsonl:1: scripted error: overloaded"):
        await ScriptedModel(path).respond(convo("t"), [])


async def test_stream_yields_text_deltas_tool_deltas_then_turn(tmp_path: Path) -> None:
    path = write_script(
        tmp_path,
        {"text": "Hello there, world", "tool_calls": [{"name": "W", "input": {"a": 1}}]},
    )
    model = ScriptedModel(path)
    events = [e async for e in model.stream(convo("t"), [])]
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(texts) == 3
    assert "".join(texts) == "Hello there, world"
    tool_deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [(d.id, d.name, json.loads(d.arguments_fragment)) for d in tool_deltas] == [
        ("call_1", "W", {"a": 1})
    ]
    assert isinstance(events[-1], TurnComplete)
    assert events[-1].message.tool_calls[0].input == {"a": 1}
    assert (await collect_stream(model.stream(convo("t"), []))).text == "Hello there, world"


async def test_trimmed_history_still_finds_the_next_line(tmp_path: Path) -> None:
    """After context trimming dropped early turns, the last assistant turn locates us."""
    lines = [{"text": f"step {i}", "tool_calls": [{"name": "X"}]} for i in range(1, 6)]
    model = ScriptedModel(write_script(tmp_path, *lines, {"text": "end"}))
    turns: list[AssistantMessage] = []
    for _ in range(5):
        turns.append(await model.respond(convo("task", *turns), []))
    trimmed: list[Message] = [
        SystemMessage(content="sys"),
        UserMessage(content="task"),
        UserMessage(content="[6 earlier messages omitted]", meta="context-marker"),
    ]
    trimmed += convo("task", turns[-2], turns[-1])[2:]
    assert (await model.respond(trimmed, [])).text == "end"


def test_from_lines_builds_an_inline_script() -> None:
    model = ScriptedModel.from_lines([{"text": "hi"}, '{"text": "there"}'])
    assert [ln.text for ln in model.lines] == ["hi", "there"]
    assert model.name == "scripted:inline"
