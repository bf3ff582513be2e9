"""Tool calls written as text (``llm/textcalls.py``): the shapes small models emit are
calls only when the whole text is calls to offered tools with fitting arguments."""

from __future__ import annotations

import json

import pytest

from skilldeck.llm.messages import ToolSpec
from skilldeck.llm.textcalls import TextToolCall, parse_text_tool_calls

WRITE = ToolSpec(
    name="Write",
    description="write a file",
    input_schema={
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["file_path", "content"],
    },
)
READ = ToolSpec(
    name="Read",
    description="read a file",
    input_schema={
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["file_path"],
    },
)
TOOLS = [WRITE, READ]
HI = TextToolCall("Write", {"file_path": "a.txt", "content": "hi"})


@pytest.mark.parametrize(
    "text",
    [
        # the 0.5B model's reply, verbatim shape (lower-case tool name)
        '{ "name": "write", "arguments": {"file_path": "a.txt", "content": "hi"} }',
        '{"name": "Write", "parameters": {"file_path": "a.txt", "content": "hi"}}',
        '{"tool": "Write", "parameters": {"file_path": "a.txt", "content": "hi"}}',
        '{"tool": "Write", "input": {"file_path": "a.txt", "content": "hi"}}',
        '{"name": "Write", "arguments": "{\\"file_path\\": \\"a.txt\\", \\"content\\": \\"hi\\"}"}',
        '{"type": "function", "function": {"name": "Write", "arguments": '
        '{"file_path": "a.txt", "content": "hi"}}}',
        '```json\n{"name": "Write", "arguments": {"file_path": "a.txt", "content": "hi"}}\n```',
        '<tool_call>\n{"name": "Write", "arguments": {"file_path": "a.txt", "content": "hi"}}\n'
        "</tool_call>",
        '  \n{"name": "Write", "arguments": {"file_path": "a.txt", "content": "hi"}}\n',
    ],
)
def test_the_shapes_models_write_are_recovered(text: str) -> None:
    assert parse_text_tool_calls(text, TOOLS) == [HI]


def test_several_hermes_blocks_and_a_json_list_give_every_call() -> None:
    read = {"name": "Read", "arguments": {"file_path": "b.txt"}}
    write = {"name": "Write", "arguments": {"file_path": "a.txt", "content": "hi"}}
    tagged = (
        f"<tool_call>{json.dumps(write)}</tool_call>\n<tool_call>{json.dumps(read)}</tool_call>"
    )
    expected = [HI, TextToolCall("Read", {"file_path": "b.txt"})]
    assert parse_text_tool_calls(tagged, TOOLS) == expected
    assert parse_text_tool_calls(json.dumps([write, read]), TOOLS) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I wrote the file.",  # prose
        'Sure: {"name": "Write", "arguments": {"file_path": "a.txt", "content": "hi"}}',
        '{"name": "Delete", "arguments": {"file_path": "a.txt"}}',  # not offered
        '{"name": "Write", "arguments": {"file_path": "a.txt"}}',  # a required key missing
        '{"name": "Write", "arguments": {"file_path": "a", "content": "x", "mode": "w"}}',
        '{"name": "Alice", "age": 3}',  # an answer that holds a "name"
        '{"name": "Write", "arguments": "not json"}',
        '<tool_call>{"name": "Read", "arguments": {"file_path": "b"}}</tool_call> and more',
        '[{"name": "Read", "arguments": {"file_path": "b"}}, {"name": "Nope"}]',
        "[]",
        "",
    ],
)
def test_anything_but_calls_to_offered_tools_stays_text(text: str) -> None:
    assert parse_text_tool_calls(text, TOOLS) == []


def test_no_tools_offered_means_no_calls() -> None:
    assert parse_text_tool_calls('{"name": "Write", "arguments": {}}', []) == []
