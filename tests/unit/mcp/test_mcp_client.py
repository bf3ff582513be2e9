"""The MCP client: remote tools as skilldeck Tools, start-up and shutdown, failures."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from skilldeck.config import MCPServerConfig, Settings, load_settings
from skilldeck.errors import MCPError
from skilldeck.mcp.client import MCPToolset, convert_result, mcp_tools, remote_tool, tool_name
from skilldeck.tools.base import ToolContext, ToolRegistry

pytestmark = pytest.mark.anyio

TINY_SERVER = textwrap.dedent(
    '''
    import sys
    from mcp.server.mcpserver import MCPServer
    from mcp_types import ToolAnnotations

    app = MCPServer("tiny")

    @app.tool(annotations=ToolAnnotations(read_only_hint=True))
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @app.tool(name="shout.loud")
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    @app.tool()
    def fail(reason: str) -> str:
        """Always fails."""
        raise ValueError(reason)

    if __name__ == "__main__":
        print("tiny server starting", file=sys.stderr)
        app.run()
    '''
)


@pytest.fixture
def tiny(tmp_path: Path) -> MCPServerConfig:
    script = tmp_path / "tiny_server.py"
    script.write_text(TINY_SERVER, encoding="utf-8")
    return MCPServerConfig(command=sys.executable, args=[str(script)])


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(workspace=tmp_path, home=tmp_path / "home")


@pytest.fixture
def ctx(settings: Settings, tmp_path: Path) -> ToolContext:
    return ToolContext(session_id="t", workspace=tmp_path, settings=settings)


def test_tool_names_are_prefixed_and_sanitised() -> None:
    assert tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert tool_name("my server", "do.thing/now") == "mcp__my_server__do_thing_now"
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == 64
    assert long != tool_name("s" * 40, "t" * 39 + "u")


def test_convert_result_joins_text_and_flags_errors() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(text="line one"),
            types.ImageContent(data="aGVsbG8=", mime_type="image/png"),
            types.TextContent(text="line two"),
        ],
        is_error=True,
    )
    converted = convert_result(result)
    assert converted.is_error
    assert converted.content == "line one\n[image: image/png, 6 bytes]\nline two"
    structured = convert_result(types.CallToolResult(content=[], structured_content={"a": 1}))
    assert structured.content == '{"a": 1}'
    assert structured.data == {"a": 1}


async def test_remote_tool_against_an_in_process_server(ctx: ToolContext) -> None:
    app = MCPServer("inproc")

    @app.tool()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"hello {name}"

    async with Client(app) as client:
        listed = (await client.list_tools()).tools
        tool = remote_tool("inproc", listed[0], client)
        assert tool.name == "mcp__inproc__greet"
        assert tool.input_schema()["required"] == ["name"]
        ok = await tool.call({"name": "ada"}, ctx)
        bad = await tool.call({}, ctx)
    assert (ok.content, ok.is_error) == ("hello ada", False)
    assert bad.is_error


async def test_toolset_starts_lists_calls_and_stops_a_stdio_server(
    tiny: MCPServerConfig, ctx: ToolContext
) -> None:
    async with MCPToolset({"tiny": tiny}) as toolset:
        registry = ToolRegistry(toolset.tools)
        assert sorted(registry.names()) == [
            "mcp__tiny__add",
            "mcp__tiny__fail",
            "mcp__tiny__shout_loud",
        ]
        assert registry.get("mcp__tiny__add").read_only  # type: ignore[union-attr]
        add = await registry.dispatch("mcp__tiny__add", {"a": 2, "b": 3}, ctx)
        shout = await registry.dispatch("mcp__tiny__shout_loud", {"text": "hi"}, ctx)
        fail = await registry.dispatch("mcp__tiny__fail", {"reason": "nope"}, ctx)
        bad_args = await registry.dispatch("mcp__tiny__add", {"a": "x"}, ctx)
        exported = {t["function"]["name"] for t in registry.to_openai()}
    assert (add.content, add.is_error) == ("5", False)
    assert shout.content == "HI"
    assert fail.is_error
    assert bad_args.is_error
    assert "mcp__tiny__add" in exported
    assert toolset.tools == []


async def test_mcp_tools_reads_servers_from_config(tiny: MCPServerConfig, tmp_path: Path) -> None:
    (tmp_path / ".skilldeck").mkdir()
    (tmp_path / ".skilldeck" / "config.toml").write_text(
        f'[mcp.servers.tiny]\ncommand = {sys.executable!r}\nargs = ["{tiny.args[0]}"]\n'
        'env = { TINY_MODE = "${HOME}" }\n',
        encoding="utf-8",
    )
    settings = load_settings(workspace=tmp_path, home=tmp_path / "home")
    tools, close = await mcp_tools(settings)
    try:
        assert {t.name for t in tools} >= {"mcp__tiny__add"}
    finally:
        await close()
    await close()  # idempotent


async def test_a_missing_command_is_a_clear_error() -> None:
    with pytest.raises(MCPError) as info:
        async with MCPToolset({"ghost": MCPServerConfig(command="skilldeck-no-such-command")}):
            pass
    message = str(info.value)
    assert "'ghost'" in message
    assert "skilldeck-no-such-command" in message
    assert "command not found" in message
    assert "[mcp.servers.ghost]" in message


async def test_a_server_that_exits_at_once_shows_its_stderr(tiny: MCPServerConfig) -> None:
    dying = MCPServerConfig(
        command=sys.executable, args=["-c", "import sys; print('bad token', file=sys.stderr)"]
    )
    with pytest.raises(MCPError) as info:
        async with MCPToolset({"dying": dying, "tiny": tiny}, startup_timeout=20):
            pass
    message = str(info.value)
    assert "'dying'" in message and "bad token" in message
    assert "'tiny'" not in message  # the healthy one started and was shut down cleanly


async def test_a_silent_server_times_out() -> None:
    silent = MCPServerConfig(command=sys.executable, args=["-c", "import time; time.sleep(60)"])
    with anyio.fail_after(20), pytest.raises(MCPError, match=r"no answer within 0\.5s"):
        async with MCPToolset({"silent": silent}, startup_timeout=0.5):
            pass


async def test_a_server_without_command_or_url_is_a_clear_error() -> None:
    with pytest.raises(MCPError, match="neither `command` nor `url`"):
        async with MCPToolset({"empty": MCPServerConfig()}):
            pass
