"""``skilldeck mcp serve`` in a subprocess, driven over stdio (and HTTP) by MCP clients."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError as ProtocolError

from skill_fixtures import write_demo_catalog, write_skill
from skilldeck.config import MCPServerConfig, load_settings
from skilldeck.mcp.client import MCPToolset
from skilldeck.tools.base import ToolContext

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_demo_catalog(root)
    return root


def serve_params(root: Path, home: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "skilldeck.cli.main",
            "mcp",
            "serve",
            "--no-defaults",
            "--root",
            str(root),
            *extra,
        ],
        env={"SKILLDECK_HOME": str(home / ".skilldeck"), "HOME": str(home)},
        cwd=home,
    )


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_stdio_server_end_to_end(root: Path, tmp_path: Path, mode: str) -> None:
    params = serve_params(root, tmp_path, "--poll-interval", "0.1")
    with anyio.fail_after(60):
        async with Client(params, mode=mode) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"list_skills", "load_skill", "read_skill_resource"}
            listing = json.loads(text_of(await client.call_tool("list_skills", {})))
            assert [s["name"] for s in listing["skills"]] == ["demo", "echo-script"]
            loaded = await client.call_tool("load_skill", {"name": "demo", "args": "x"})
            assert "Demo body: x" in text_of(loaded)
            guide = await client.read_resource("skill://demo/references/guide.md")
            assert isinstance(guide.contents[0], types.TextResourceContents)
            assert guide.contents[0].text == "# Guide\n"
            escape = await client.call_tool(
                "read_skill_resource", {"name": "demo", "path": "../../../etc/passwd"}
            )
            assert escape.is_error and "escapes" in text_of(escape)
            with pytest.raises(ProtocolError):
                await client.read_resource("skill://demo/..%2F..%2F..%2Fetc%2Fpasswd")
            refused = await client.call_tool("run_skill_script", {"name": "echo-script"})
            assert refused.is_error and "disabled" in text_of(refused)
            assert {p.name for p in (await client.list_prompts()).prompts} == {
                "demo",
                "echo-script",
            }


async def test_stdio_run_script_when_allowed(root: Path, tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with Client(serve_params(root, tmp_path, "--allow-scripts")) as client:
            result = await client.call_tool(
                "run_skill_script", {"name": "echo-script", "input": {"n": 7}}
            )
    assert not result.is_error, text_of(result)
    assert json.loads(text_of(result)) == {"echo": {"n": 7}}


async def test_stdio_list_changed_after_a_new_skill_appears(root: Path, tmp_path: Path) -> None:
    params = serve_params(root, tmp_path, "--poll-interval", "0.1")
    with anyio.fail_after(60):
        async with Client(params) as client:
            async with client.listen(tools_list_changed=True) as sub:
                write_skill(root, "fresh")
                async for event in sub:
                    assert type(event).__name__ == "ToolsListChanged"
                    break
            listing = json.loads(text_of(await client.call_tool("list_skills", {})))
    assert "fresh" in [s["name"] for s in listing["skills"]]


async def test_stdio_list_changed_for_a_handshake_era_client(root: Path, tmp_path: Path) -> None:
    got = anyio.Event()

    async def on_message(message: Any) -> None:
        if getattr(message, "method", "") == "notifications/tools/list_changed":
            got.set()

    params = serve_params(root, tmp_path, "--poll-interval", "0.1")
    with anyio.fail_after(60):
        async with Client(params, mode="legacy", message_handler=on_message) as client:
            await client.list_tools()
            write_skill(root, "fresh")
            await got.wait()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server(root: Path, tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    env = {**os.environ, "SKILLDECK_HOME": str(tmp_path / ".skilldeck")}
    cmd = [sys.executable, "-m", "skilldeck.cli.main", "mcp", "serve", "--no-defaults"]
    cmd += ["--root", str(root), "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if proc.poll() is not None:
                raise AssertionError(proc.stderr.read().decode() if proc.stderr else "exited")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stderr:
            proc.stderr.close()


async def test_http_transport_through_skilldeck_mcp_client(
    http_server: str, tmp_path: Path
) -> None:
    settings = load_settings(workspace=tmp_path, home=tmp_path / "home")
    ctx = ToolContext(session_id="t", workspace=tmp_path, settings=settings)
    with anyio.fail_after(60):
        async with MCPToolset({"deck": MCPServerConfig(url=http_server)}) as toolset:
            tools = {t.name: t for t in toolset.tools}
            assert set(tools) == {
                "mcp__deck__list_skills",
                "mcp__deck__load_skill",
                "mcp__deck__read_skill_resource",
            }
            loaded = await tools["mcp__deck__load_skill"].call({"name": "demo", "args": "y"}, ctx)
    assert "Demo body: y" in loaded.content


def test_http_transport_refuses_a_foreign_host_or_origin(http_server: str) -> None:
    import http.client
    import json as _json
    from urllib.parse import urlsplit

    url = urlsplit(http_server)
    body = _json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
    )
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    for extra, status in (
        ({"Host": "evil.example"}, 421),
        ({"Origin": "http://evil.example"}, 403),
    ):
        conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=10)
        conn.request("POST", url.path, body=body, headers={**headers, **extra})
        assert conn.getresponse().status == status, extra
        conn.close()


def test_http_transport_listens_on_this_machine_only(tmp_path: Path) -> None:
    env = {**os.environ, "SKILLDECK_HOME": str(tmp_path / ".skilldeck")}
    cmd = [sys.executable, "-m", "skilldeck.cli.main", "mcp", "serve", "--no-defaults"]
    cmd += ["--root", str(tmp_path), "--transport", "http", "--host", "0.0.0.0"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "listens on this machine only" in done.stderr
