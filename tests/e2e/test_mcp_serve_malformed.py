"""The real ``skilldeck mcp serve`` on stdio, fed bad lines, bad requests and bad calls:
every one is answered (JSON-RPC errors or MCP tool errors), the session goes on, and
the server's stderr holds no traceback."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skill_fixtures import write_demo_catalog

ANSWER_TIMEOUT = 20.0


class StdioPeer:
    """A hand-written MCP client: one JSON-RPC line in, the answers read line by line."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self._buffer = b""

    def send(self, line: str | dict[str, Any]) -> None:
        text = line if isinstance(line, str) else json.dumps(line)
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        """The next line the server writes, parsed (fails after ANSWER_TIMEOUT)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + ANSWER_TIMEOUT
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0))
            if not ready:
                pytest.fail(f"no answer within {ANSWER_TIMEOUT}s")
            chunk = os.read(fd, 65536)
            if not chunk:
                pytest.fail("the server closed its stdout instead of answering")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    def answer_to(self, rid: int, method: str) -> dict[str, Any]:
        """Send a request and return the next line the server writes, whatever it is."""
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": {}})
        return self.answer()

    def request(self, rid: int, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request and return the answer to it (notifications in between skipped)."""
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        while True:
            message = self.answer()
            if message.get("id") == rid:
                return message


@pytest.fixture
def peer(tmp_path: Path) -> Iterator[StdioPeer]:
    root = write_demo_catalog(tmp_path / "skills")
    command = [sys.executable, "-m", "skilldeck.cli.main", "mcp", "serve", "--no-defaults"]
    proc = subprocess.Popen(
        [*command, "--root", str(root), "--poll-interval", "0"],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    peer = StdioPeer(proc)
    try:
        yield peer
    finally:
        try:  # closes stdin: the server ends at EOF
            _, stderr = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, stderr = proc.communicate()
    assert "Traceback" not in stderr.decode(errors="replace"), stderr.decode(errors="replace")


def initialize(peer: StdioPeer) -> None:
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "e2e", "version": "1"},
    }
    init = peer.request(1, "initialize", params)
    assert init["result"]["serverInfo"]["name"] == "skilldeck"
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def test_garbage_and_invalid_requests_are_answered_and_serving_goes_on(peer: StdioPeer) -> None:
    peer.send("this is not json {")
    parse_error = peer.answer()
    assert parse_error["jsonrpc"] == "2.0"
    assert parse_error["id"] is None
    assert parse_error["error"]["code"] == -32700
    assert parse_error["error"]["message"].startswith("Parse error")

    peer.send({"jsonrpc": "2.0", "id": 41, "params": {}})  # no method
    invalid = peer.answer()
    assert invalid["id"] == 41
    assert invalid["error"]["code"] == -32600
    assert "method" in invalid["error"]["message"]

    peer.send("[1, 2, 3]")  # a batch: not a request, no id to read
    batch = peer.answer()
    assert batch["id"] is None and batch["error"]["code"] == -32600

    peer.send("")  # a blank line is whitespace between messages: no answer
    initialize(peer)
    tools = peer.request(2, "tools/list")
    names = {t["name"] for t in tools["result"]["tools"]}
    assert names == {"list_skills", "load_skill", "read_skill_resource"}


def test_bad_calls_are_one_sentence_errors_and_the_session_goes_on(peer: StdioPeer) -> None:
    initialize(peer)
    missing = peer.request(3, "tools/call", {"name": "read_skill_resource", "arguments": {}})
    result = missing["result"]
    assert result["isError"] is True
    (block,) = result["content"]
    assert block["text"].startswith("read_skill_resource: argument 'name' is required (a string")
    assert "validation error" not in block["text"] and "\n" not in block["text"]

    unknown_tool = peer.request(4, "tools/call", {"name": "no_such_tool", "arguments": {}})
    assert unknown_tool["result"]["isError"] is True
    assert "no_such_tool" in unknown_tool["result"]["content"][0]["text"]
    assert "load_skill" in unknown_tool["result"]["content"][0]["text"]

    unknown_resource = peer.request(5, "resources/read", {"uri": "skill://nope/SKILL.md"})
    assert "nope" in unknown_resource["error"]["message"]
    not_a_skill_uri = peer.request(6, "resources/read", {"uri": "file:///etc/passwd"})
    assert "skill://<name>/SKILL.md" in not_a_skill_uri["error"]["message"]

    ok = peer.request(
        7,
        "tools/call",
        {
            "name": "read_skill_resource",
            "arguments": {"name": "demo", "path": "references/guide.md"},
        },
    )
    assert ok["result"]["content"][0]["text"] == "# Guide\n"


def test_json_nested_too_deeply_is_a_parse_error_and_serving_goes_on(peer: StdioPeer) -> None:
    initialize(peer)
    peer.send("[" * 100_000 + "]" * 100_000)  # deeper than Python's json recurses
    deep = peer.answer()
    assert deep["id"] is None and deep["error"]["code"] == -32700
    assert "too deeply" in deep["error"]["message"]
    assert peer.request(8, "ping")["result"] == {}


def test_a_lone_surrogate_id_is_answered_with_a_null_id(peer: StdioPeer) -> None:
    initialize(peer)
    peer.send('{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}')  # no UTF-8 string
    surrogate = peer.answer()
    assert surrogate["id"] is None and surrogate["error"]["code"] == -32700
    assert "lone surrogate" in surrogate["error"]["message"]
    assert peer.request(8, "ping")["result"] == {}


def test_a_request_with_an_id_mcp_does_not_allow_is_answered(peer: StdioPeer) -> None:
    initialize(peer)
    for rid in ("1.5", "true", "null"):  # the SDK reads these as notifications
        peer.send(f'{{"jsonrpc":"2.0","id":{rid},"method":"tools/list"}}')
        invalid = peer.answer()
        assert invalid["id"] is None and invalid["error"]["code"] == -32600
        assert '"id" must be a string or an integer' in invalid["error"]["message"]


def test_a_malformed_response_from_the_client_is_not_answered(peer: StdioPeer) -> None:
    initialize(peer)
    peer.send('{"jsonrpc":"2.0","id":5,"result":1}')
    pong = peer.answer_to(8, "ping")  # the very next line the server writes
    assert pong == {"jsonrpc": "2.0", "id": 8, "result": {}}


def test_an_over_long_line_is_discarded_and_serving_goes_on(peer: StdioPeer) -> None:
    initialize(peer)
    peer.send("x" * (16 * 1024 * 1024 + 1))  # one character over MAX_LINE_CHARS
    too_large = peer.answer()
    assert too_large["id"] is None and too_large["error"]["code"] == -32600
    assert "too large" in too_large["error"]["message"]
    assert peer.request(9, "ping")["result"] == {}


def test_serving_with_stdin_closed_is_one_clear_error(tmp_path: Path) -> None:
    root = write_demo_catalog(tmp_path / "skills")
    serve = [sys.executable, "-m", "skilldeck.cli.main", "mcp", "serve", "--no-defaults"]
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" <&-', "sh", *serve, "--root", str(root), "--poll-interval", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("error: mcp serve: stdin is closed;"), done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
