"""The skilldeck MCP server, driven in-process by the official MCP client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from skill_fixtures import write_demo_catalog, write_skill
from skilldeck.config import Settings, load_settings
from skilldeck.mcp.server import SCRIPTS_DISABLED, SkillMCPServer, build_server
from skilldeck.skills.registry import SkillRegistry

pytestmark = pytest.mark.anyio


def make_catalog(root: Path) -> None:
    write_demo_catalog(root, guide="# Guide\nstep one\n", **{"argument-hint": '"[topic]"'})
    write_skill(root, "internal", "Not for users.", **{"user-invocable": "false"})


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    make_catalog(root)
    return root


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    ws = tmp_path / "ws"
    ws.mkdir()
    return load_settings(workspace=ws, home=tmp_path / "home")


def server_for(
    root: Path, settings: Settings, *, allow_scripts: bool | None = None, poll: float = 0
) -> SkillMCPServer:
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True, use_cache=False)
    return build_server(registry, allow_scripts=allow_scripts, poll_interval=poll)


@pytest.fixture
async def client(root: Path, settings: Settings) -> AsyncIterator[Client]:
    async with Client(server_for(root, settings)) as c:
        yield c


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def test_tools_and_catalog_in_the_load_skill_description(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"list_skills", "load_skill", "read_skill_resource"}
    description = tools["load_skill"].description or ""
    assert "<name>demo</name>" in description
    assert "<name>echo-script</name>" in description
    assert tools["load_skill"].input_schema["required"] == ["name"]
    assert tools["list_skills"].annotations is not None
    assert tools["list_skills"].annotations.read_only_hint is True


async def test_list_skills_plain_and_ranked(client: Client) -> None:
    listing = json.loads(text_of(await client.call_tool("list_skills", {})))
    assert [s["name"] for s in listing["skills"]] == ["demo", "echo-script", "internal"]
    assert listing["total"] == 3
    ranked = json.loads(text_of(await client.call_tool("list_skills", {"query": "echo script"})))
    assert ranked["skills"][0]["name"] == "echo-script"
    assert "score" in ranked["skills"][0]


async def test_load_skill_renders_level_two(client: Client) -> None:
    result = await client.call_tool("load_skill", {"name": "demo", "args": "testing"})
    text = text_of(result)
    assert not result.is_error
    assert "Demo body: testing" in text
    assert "Base directory for this skill:" in text
    assert "references/guide.md" in text


async def test_unknown_skill_is_an_error_result_with_suggestions(client: Client) -> None:
    result = await client.call_tool("load_skill", {"name": "dmeo"})
    assert result.is_error
    assert "demo" in text_of(result)


async def test_read_skill_resource_and_a_refused_escape(client: Client, tmp_path: Path) -> None:
    ok = await client.call_tool(
        "read_skill_resource", {"name": "demo", "path": "references/guide.md"}
    )
    assert text_of(ok) == "# Guide\nstep one\n"
    (tmp_path / "secret.txt").write_text("top secret", encoding="utf-8")
    for path in ("../../secret.txt", str(tmp_path / "secret.txt"), "../echo-script/SKILL.md"):
        bad = await client.call_tool("read_skill_resource", {"name": "demo", "path": path})
        assert bad.is_error, path
        assert "top secret" not in text_of(bad)


async def test_a_symlink_out_of_the_skill_is_refused(
    root: Path, settings: Settings, tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("top secret", encoding="utf-8")
    (root / "demo" / "references" / "leak.md").symlink_to(tmp_path / "secret.txt")
    async with Client(server_for(root, settings)) as c:
        bad = await c.call_tool(
            "read_skill_resource", {"name": "demo", "path": "references/leak.md"}
        )
    assert bad.is_error
    assert "escapes" in text_of(bad)


async def test_run_skill_script_is_refused_unless_enabled(client: Client) -> None:
    result = await client.call_tool("run_skill_script", {"name": "echo-script", "input": {"x": 1}})
    assert result.is_error
    assert SCRIPTS_DISABLED in text_of(result)


async def test_run_skill_script_when_enabled(root: Path, settings: Settings) -> None:
    async with Client(server_for(root, settings, allow_scripts=True)) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        result = await c.call_tool("run_skill_script", {"name": "echo-script", "input": {"x": 1}})
        not_script = await c.call_tool("run_skill_script", {"name": "demo", "input": {}})
    assert "run_skill_script" in names
    assert not result.is_error, text_of(result)
    assert json.loads(text_of(result)) == {"echo": {"x": 1}}
    assert not_script.is_error


async def test_allow_scripts_comes_from_config(root: Path, tmp_path: Path) -> None:
    settings = load_settings(workspace=tmp_path, home=tmp_path / "h", mcp={"allow_scripts": True})
    assert server_for(root, settings).allow_scripts is True


async def test_resources_list_and_read(client: Client) -> None:
    uris = {r.uri for r in (await client.list_resources()).resources}
    assert {"skill://demo/SKILL.md", "skill://demo/references/guide.md"} <= uris
    skill_md = await client.read_resource("skill://demo/SKILL.md")
    content = skill_md.contents[0]
    assert isinstance(content, types.TextResourceContents)
    assert content.text.startswith("---\nname: demo")
    guide = await client.read_resource("skill://demo/references/guide.md")
    assert isinstance(guide.contents[0], types.TextResourceContents)
    assert guide.contents[0].text == "# Guide\nstep one\n"
    templates = (await client.list_resource_templates()).resource_templates
    assert templates[0].uri_template == "skill://{name}/{path}"


@pytest.mark.parametrize(
    "uri",
    ["skill://demo/..%2F..%2Fsecret.txt", "skill://demo/%2Fetc%2Fpasswd", "skill://nope/SKILL.md"],
)
async def test_resource_escape_or_unknown_is_a_protocol_error(client: Client, uri: str) -> None:
    with pytest.raises(MCPError):
        await client.read_resource(uri)


async def test_user_invocable_skills_are_prompts(client: Client) -> None:
    prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    assert set(prompts) == {"demo", "echo-script"}  # "internal" is not user-invocable
    assert prompts["demo"].arguments is not None
    assert prompts["demo"].arguments[0].description == "[topic]"
    got = await client.get_prompt("demo", {"arguments": "release notes"})
    message = got.messages[0]
    assert message.role == "user"
    assert isinstance(message.content, types.TextContent)
    assert "Demo body: release notes" in message.content.text
    with pytest.raises(MCPError):
        await client.get_prompt("internal", {})


async def test_check_for_changes_reports_only_real_changes(root: Path, settings: Settings) -> None:
    server = server_for(root, settings)
    assert await server.check_for_changes() is False
    write_skill(root, "fresh")
    assert await server.check_for_changes() is True
    assert await server.check_for_changes() is False


async def test_list_changed_reaches_a_listening_client(root: Path, settings: Settings) -> None:
    server = server_for(root, settings, poll=0.05)
    async with Client(server) as c:
        async with c.listen(
            tools_list_changed=True, resources_list_changed=True, prompts_list_changed=True
        ) as sub:
            write_skill(root, "fresh")
            seen: set[str] = set()
            with anyio.fail_after(10):
                async for event in sub:
                    seen.add(type(event).__name__)
                    if len(seen) == 3:
                        break
        assert seen == {"ToolsListChanged", "ResourcesListChanged", "PromptsListChanged"}
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert "<name>fresh</name>" in (tools["load_skill"].description or "")
        assert "fresh" in {p.name for p in (await c.list_prompts()).prompts}


async def test_list_changed_reaches_a_handshake_era_client(root: Path, settings: Settings) -> None:
    server = server_for(root, settings, poll=0.05)
    got: list[str] = []
    done = anyio.Event()

    async def on_message(message: Any) -> None:
        method = getattr(message, "method", "")
        if isinstance(method, str) and method.endswith("list_changed"):
            got.append(method)
            if len(got) >= 3:
                done.set()

    async with Client(server, mode="legacy", message_handler=on_message) as c:
        assert c.server_capabilities.tools is not None
        assert c.server_capabilities.tools.list_changed is True
        await c.list_tools()
        write_skill(root, "fresh")
        with anyio.fail_after(10):
            await done.wait()
    assert set(got) >= {
        "notifications/tools/list_changed",
        "notifications/resources/list_changed",
        "notifications/prompts/list_changed",
    }
    assert server.notifier.connections == {}  # the closed connection was forgotten
