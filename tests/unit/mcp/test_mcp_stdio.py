"""The MCP server's stdio transport answers lines that are not JSON-RPC messages."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_types import INVALID_REQUEST, PARSE_ERROR

from skill_fixtures import write_demo_catalog
from skilldeck.config import load_settings
from skilldeck.mcp.server import build_server
from skilldeck.mcp.stdio import reply_to_malformed, stdio_transport
from skilldeck.skills.registry import SkillRegistry


def reply(line: str) -> dict[str, Any]:
    answer = reply_to_malformed(line)
    assert answer is not None
    dumped: dict[str, Any] = json.loads(answer.model_dump_json(by_alias=True, exclude_unset=True))
    return dumped


@pytest.mark.parametrize("line", ["garbage\n", '{"jsonrpc": "2.0", "id": 1,\n', "\x00\x01\n"])
def test_a_line_that_is_not_json_is_a_parse_error_with_a_null_id(line: str) -> None:
    answer = reply(line)
    assert answer["jsonrpc"] == "2.0"
    assert "id" in answer and answer["id"] is None
    assert answer["error"]["code"] == PARSE_ERROR
    assert answer["error"]["message"].startswith("Parse error: the line is not JSON")
    assert "one JSON-RPC message per line" in answer["error"]["message"]


@pytest.mark.parametrize(
    ("line", "rid", "says"),
    [
        ('{"jsonrpc": "2.0", "id": 7}', 7, 'no "method"'),
        ('{"jsonrpc": "2.0", "id": "a", "method": 3}', "a", '"method" must be a string'),
        ('{"jsonrpc": "1.0", "id": 2, "method": "ping"}', 2, '"jsonrpc": "2.0"'),
        ('{"jsonrpc": "2.0", "id": 4, "method": "ping", "params": [1]}', 4, '"params"'),
        ('{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', None, '"id" must be'),
        ('{"jsonrpc": "2.0", "id": true, "method": "ping"}', None, '"id" must be'),
        ("[1, 2]", None, "batches"),
        ("42", None, "a number, not a JSON object"),
        ('"ping"', None, "a string, not a JSON object"),
    ],
)
def test_json_that_is_no_request_is_invalid_request_with_its_id(
    line: str, rid: object, says: str
) -> None:
    answer = reply(line + "\n")
    assert answer["id"] == rid
    assert answer["error"]["code"] == INVALID_REQUEST
    assert answer["error"]["message"].startswith("Invalid Request: ")
    assert says in answer["error"]["message"]


@pytest.mark.parametrize("line", ["", "\n", "  \r\n"])
def test_a_blank_line_is_not_answered(line: str) -> None:
    assert reply_to_malformed(line) is None


@pytest.mark.anyio
async def test_the_transport_answers_bad_lines_in_order(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = load_settings(workspace=ws, home=tmp_path / "home")
    root = write_demo_catalog(tmp_path / "skills")
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True, use_cache=False)
    server = build_server(registry, poll_interval=0)
    lines = ["not json\n", "\n", '{"jsonrpc": "2.0", "id": 9}\n', "[]\n"]
    out = io.StringIO()
    stdin, stdout = anyio.wrap_file(io.StringIO("".join(lines))), anyio.wrap_file(out)
    lowlevel = server._lowlevel_server
    with anyio.fail_after(20):
        async with stdio_transport(stdin, stdout) as (read_stream, write_stream):
            options = lowlevel.create_initialization_options()
            await lowlevel.run(read_stream, write_stream, options)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(a["id"], a["error"]["code"]) for a in answers] == [
        (None, PARSE_ERROR),
        (9, INVALID_REQUEST),
        (None, INVALID_REQUEST),
    ]
