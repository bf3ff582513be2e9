"""A bad tool call to the MCP server is one clear sentence (an MCP tool error), not
pydantic's report; an unknown tool or resource is named with what exists."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from skill_fixtures import write_demo_catalog
from skilldeck.config import load_settings
from skilldeck.mcp.arguments import argument_error, expectation
from skilldeck.mcp.server import build_server
from skilldeck.skills.registry import SkillRegistry


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = load_settings(workspace=ws, home=tmp_path / "home")
    root = write_demo_catalog(tmp_path / "skills", guide="# Guide\n")
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True, use_cache=False)
    async with Client(build_server(registry, poll_interval=0)) as c:
        yield c


def error_text(result: types.CallToolResult) -> str:
    assert result.is_error
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    assert "\n" not in block.text and "validation error" not in block.text
    assert "pydantic" not in block.text
    return block.text


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            "read_skill_resource",
            {"name": "demo"},
            "read_skill_resource: argument 'path' is required (a string: a file inside "
            "the skill, relative to its folder, e.g. references/guide.md).",
        ),
        (
            "read_skill_resource",
            {"name": "demo", "path": 3},
            "read_skill_resource: argument 'path' got a number; expected a string: a file "
            "inside the skill, relative to its folder, e.g. references/guide.md.",
        ),
        (
            "load_skill",
            {},
            "load_skill: argument 'name' is required (a string: the skill's name, "
            "as list_skills shows it).",
        ),
        (
            "list_skills",
            {"limit": "lots"},
            "list_skills: argument 'limit' got a string; expected an integer: how many "
            "skills at most (1 to 500).",
        ),
        (
            "read_skill_resource",
            {"name": ["demo"], "path": None},
            "read_skill_resource: argument 'name' got a JSON array; expected a string: the "
            "skill's name, as list_skills shows it; check 'path' too.",
        ),
    ],
)
@pytest.mark.anyio
async def test_a_bad_argument_is_one_sentence_naming_tool_argument_and_type(
    client: Client, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    assert error_text(await client.call_tool(tool, arguments)) == expected
    # the session goes on
    ok = await client.call_tool("read_skill_resource", {"name": "demo", "path": "SKILL.md"})
    assert not ok.is_error


@pytest.mark.anyio
async def test_the_argument_descriptions_are_in_the_input_schema(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    path = tools["read_skill_resource"].input_schema["properties"]["path"]
    assert "a file inside the skill" in path["description"]


@pytest.mark.anyio
async def test_an_unknown_tool_names_the_tools_there_are(client: Client) -> None:
    text = error_text(await client.call_tool("read_skill_file", {"name": "demo"}))
    assert text == (
        "Unknown tool 'read_skill_file'; this server's tools are: "
        "list_skills, load_skill, read_skill_resource."
    )


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("uri", "says"),
    [
        ("skill://nope/SKILL.md", "No skill named 'nope' on this server; resources/list"),
        ("file:///etc/passwd", "skill resources look like skill://<name>/SKILL.md"),
        ("skill://demo/nope.md", "Skill 'demo' has no file 'nope.md'"),
        ("skill://demo/..%2F..%2Fsecret.txt", "escapes the folder of skill 'demo'"),
    ],
)
async def test_an_unknown_resource_is_a_clear_invalid_params_error(
    client: Client, uri: str, says: str
) -> None:
    with pytest.raises(MCPError) as caught:
        await client.read_resource(uri)
    assert says in str(caught.value)
    assert caught.value.code == types.INVALID_PARAMS  # the client's mistake, not -32603


class _Args(BaseModel):
    input: dict[str, Any] | list[Any] | str | None = None


def test_a_union_argument_lists_its_kinds_once() -> None:
    schema = _Args.model_json_schema()
    assert expectation(schema["properties"]["input"]) == "a JSON object, a JSON array or a string"
    with pytest.raises(ValidationError) as caught:
        _Args.model_validate({"input": 5})
    assert argument_error("run_skill_script", schema, caught.value) == (
        "run_skill_script: argument 'input' got a number; expected a JSON object, "
        "a JSON array or a string."
    )


@pytest.mark.anyio
async def test_a_validation_error_raised_in_a_tool_body_is_a_crash_not_an_argument_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = load_settings(workspace=ws, home=tmp_path / "home")
    root = write_demo_catalog(tmp_path / "skills")
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True, use_cache=False)
    server = build_server(registry, poll_interval=0)

    def parse_config(text: str) -> str:
        """A tool whose body checks data of its own with pydantic, and fails."""
        return str(_Args.model_validate({"input": 5}))

    server.add_tool(parse_config, structured_output=False)
    with caplog.at_level("ERROR"):
        async with Client(server) as c:
            result = await c.call_tool("parse_config", {"text": "x"})
    assert result.is_error
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    # the SDK's words for a crash, not a sentence blaming the caller's argument
    assert block.text == "Error executing tool parse_config"
    assert "argument" not in block.text
    crash = [r for r in caplog.records if "raised an unexpected exception" in r.getMessage()]
    assert crash and crash[0].exc_info is not None
