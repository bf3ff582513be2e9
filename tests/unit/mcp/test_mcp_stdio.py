"""The MCP server's stdio transport answers lines that are not JSON-RPC messages, and
hostile input cannot end serving: too deep, lone surrogates, ids MCP does not allow,
malformed responses, over-long lines, closed standard streams."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_types import INVALID_REQUEST, PARSE_ERROR

from skill_fixtures import write_demo_catalog
from skilldeck.config import load_settings
from skilldeck.errors import MCPError
from skilldeck.mcp import stdio
from skilldeck.mcp.malformed import error, reply_to_malformed, writable
from skilldeck.mcp.server import build_server
from skilldeck.mcp.stdio import stdio_transport
from skilldeck.skills.registry import SkillRegistry

DEEP = "[" * 100_000 + "]" * 100_000
SURROGATE_ID = '{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}'


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


async def answers_to(tmp_path: Path, lines: list[str]) -> list[dict[str, Any]]:
    """What the server writes, fed ``lines`` through the transport, until their end."""
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = load_settings(workspace=ws, home=tmp_path / "home")
    root = write_demo_catalog(tmp_path / "skills")
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True, use_cache=False)
    server = build_server(registry, poll_interval=0)
    out = io.StringIO()
    stdin, stdout = anyio.wrap_file(io.StringIO("".join(lines))), anyio.wrap_file(out)
    lowlevel = server._lowlevel_server
    with anyio.fail_after(20):
        async with stdio_transport(stdin, stdout) as (read_stream, write_stream):
            options = lowlevel.create_initialization_options()
            await lowlevel.run(read_stream, write_stream, options)
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.mark.anyio
async def test_the_transport_answers_bad_lines_in_order(tmp_path: Path) -> None:
    lines = ["not json\n", "\n", '{"jsonrpc": "2.0", "id": 9}\n', "[]\n"]
    answers = await answers_to(tmp_path, lines)
    assert [(a["id"], a["error"]["code"]) for a in answers] == [
        (None, PARSE_ERROR),
        (9, INVALID_REQUEST),
        (None, INVALID_REQUEST),
    ]


def test_json_nested_too_deeply_for_python_is_a_parse_error() -> None:
    answer = reply(DEEP + "\n")
    assert answer["id"] is None
    assert answer["error"]["code"] == PARSE_ERROR
    assert "nests arrays or objects too deeply" in answer["error"]["message"]


def test_a_lone_surrogate_id_is_never_echoed() -> None:
    answer = reply(SURROGATE_ID + "\n")
    assert answer["id"] is None
    assert answer["error"]["code"] == PARSE_ERROR
    assert "lone surrogate" in answer["error"]["message"]


def test_an_answer_whose_id_cannot_be_written_goes_out_with_a_null_id() -> None:
    unwritable = error("\ud800", INVALID_REQUEST, "Invalid Request: x")
    fixed = writable(unwritable)
    assert fixed.id is None and fixed.error.message == "Invalid Request: x"
    fixed.model_dump_json(by_alias=True, exclude_unset=True)  # what the SDK's writer does


@pytest.mark.parametrize(
    "line",
    ['{"jsonrpc": "2.0", "id": 5, "result": 1}', '{"jsonrpc": "2.0", "id": 6, "error": "no"}'],
)
def test_a_malformed_response_is_never_answered(line: str) -> None:
    assert reply_to_malformed(line + "\n") is None


@pytest.mark.anyio
@pytest.mark.parametrize("line", [DEEP, "[" * 500 + "]" * 500, SURROGATE_ID])
async def test_the_transport_answers_unreadable_json_and_goes_on(tmp_path: Path, line: str) -> None:
    answers = await answers_to(tmp_path, [line + "\n", "after\n"])
    assert [(a["id"], a["error"]["code"]) for a in answers] == [
        (None, PARSE_ERROR),
        (None, PARSE_ERROR),
    ]


@pytest.mark.anyio
async def test_a_request_with_an_id_mcp_does_not_allow_is_answered(tmp_path: Path) -> None:
    lines = [
        '{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}\n',
        '{"jsonrpc": "2.0", "id": true, "method": "ping"}\n',
        '{"jsonrpc": "2.0", "id": null, "method": "ping"}\n',
        '{"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"id": 1}}\n',
    ]
    answers = await answers_to(tmp_path, lines)
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(None, INVALID_REQUEST)] * 3
    assert all('"id" must be a string or an integer' in a["error"]["message"] for a in answers)


@pytest.mark.anyio
async def test_a_malformed_response_is_logged_not_answered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lines = ['{"jsonrpc": "2.0", "id": 5, "result": 1}\n', "garbage\n"]
    answers = await answers_to(tmp_path, lines)
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(None, PARSE_ERROR)]
    assert "malformed response from the client (id 5)" in caplog.text


@pytest.mark.anyio
async def test_answering_a_bad_line_never_ends_serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(line: str, rejected: BaseException | None = None) -> Any:
        raise RuntimeError("a bug in the answer")

    monkeypatch.setattr(stdio, "reply_to_malformed", broken)
    answers = await answers_to(tmp_path, ["garbage\n", "more garbage\n"])
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(None, INVALID_REQUEST)] * 2
    assert "could not make the answer to a malformed message" in caplog.text


@pytest.mark.anyio
async def test_an_over_long_line_is_discarded_and_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stdio, "MAX_LINE_CHARS", 100)
    monkeypatch.setattr(stdio, "_DISCARD_CHUNK", 7)
    lines = ["x" * 100 + "\n", "y" * 1000 + "\n", "[]\n", "z" * 101]  # the last: no newline
    answers = await answers_to(tmp_path, lines)
    assert [(a["id"], a["error"]["code"]) for a in answers] == [
        (None, PARSE_ERROR),  # 100 characters: read, and not JSON
        (None, INVALID_REQUEST),  # too large
        (None, INVALID_REQUEST),  # a batch: the line after the discarded one is read whole
        (None, INVALID_REQUEST),  # too large, up to the end of the input
    ]
    assert "too large (over 100 characters" in answers[1]["error"]["message"]
    assert "batches" in answers[2]["error"]["message"]
    assert "too large" in answers[3]["error"]["message"]


def test_read_line_keeps_no_more_than_the_limit() -> None:
    fp = io.StringIO("a" * 50 + "\n" + "b" * 10_000 + "\nlast")
    assert stdio._read_line(fp, 60) == "a" * 50 + "\n"
    assert stdio._read_line(fp, 60) is None
    assert stdio._read_line(fp, 60) == "last"
    assert stdio._read_line(fp, 60) == ""


@pytest.mark.anyio
@pytest.mark.parametrize("closed", ["stdin", "stdout"])
async def test_a_closed_standard_stream_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch, closed: str
) -> None:
    monkeypatch.setattr(sys, closed, None)
    with pytest.raises(MCPError, match=f"mcp serve: {closed} is closed"):
        async with stdio_transport():
            pass


@pytest.mark.skipif(sys.platform == "win32", reason="fcntl")
def test_the_private_copy_of_fd0_never_lands_on_a_closed_fd_1_or_2(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    script = f"""
import fcntl, json, os
os.close(1)
os.close(2)
from skilldeck.mcp.stdio import _divert_fd0
private = _divert_fd0()
cloexec = bool(fcntl.fcntl(private, fcntl.F_GETFD) & fcntl.FD_CLOEXEC)
with open({str(report)!r}, "w") as f:
    json.dump({{"fd": private, "cloexec": cloexec}}, f)
"""
    subprocess.run([sys.executable, "-c", script], stdin=subprocess.PIPE, check=True, timeout=60)
    result = json.loads(report.read_text())
    assert result["fd"] >= 3, result
    assert result["cloexec"] is True
