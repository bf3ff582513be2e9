"""Function-calling export: the skill catalog tools, OpenAI and Anthropic toolkits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from anthropic.types import TextBlock, ToolUseBlock
from openai.types.chat import ChatCompletionMessageFunctionToolCall
from openai.types.chat.chat_completion_message_function_tool_call import Function
from openai.types.responses import ResponseFunctionToolCall

from skill_fixtures import write_demo_catalog, write_skill
from skilldeck.config import Settings, load_settings
from skilldeck.integrations.anthropic_tools import AnthropicToolkit
from skilldeck.integrations.openai_tools import OpenAIToolkit
from skilldeck.integrations.skill_tools import skill_tools
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import ToolContext


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    root = tmp_path / "skills"
    write_demo_catalog(root)
    ws = tmp_path / "ws"
    ws.mkdir()
    return load_settings(workspace=ws, home=tmp_path / "home")


@pytest.fixture
def root(settings: Settings, tmp_path: Path) -> Path:
    return tmp_path / "skills"


@pytest.fixture
def kit(settings: Settings, root: Path) -> OpenAIToolkit:
    return OpenAIToolkit.from_skills(settings, roots=[root], no_defaults=True)


def test_skill_tools_follow_the_registry(settings: Settings, root: Path) -> None:
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True, use_cache=False)
    tools = {t.name: t for t in skill_tools(registry)}
    assert set(tools) == {"list_skills", "load_skill", "read_skill_resource"}
    assert "<name>demo</name>" in tools["load_skill"].spec().description
    write_skill(root, "later", "Later.")
    registry.refresh()
    assert "<name>later</name>" in tools["load_skill"].spec().description
    assert "run_skill_script" in {t.name for t in skill_tools(registry, scripts=True)}


def test_openai_export_shapes(kit: OpenAIToolkit) -> None:
    chat = {t["function"]["name"]: t for t in kit.tools()}
    assert set(chat) == {"list_skills", "load_skill", "read_skill_resource"}
    assert chat["load_skill"]["type"] == "function"
    assert chat["load_skill"]["function"]["parameters"]["required"] == ["name"]
    flat = {t["name"]: t for t in kit.response_tools()}
    assert flat["read_skill_resource"]["parameters"]["required"] == ["name", "path"]


def test_openai_chat_tool_calls_as_sdk_objects_and_dicts(kit: OpenAIToolkit) -> None:
    calls = [
        ChatCompletionMessageFunctionToolCall(
            id="call_1",
            type="function",
            function=Function(name="load_skill", arguments='{"name": "demo", "args": "v2"}'),
        ),
        {
            "id": "call_2",
            "type": "function",
            "function": {
                "name": "read_skill_resource",
                "arguments": '{"name": "demo", "path": "../../etc/passwd"}',
            },
        },
        {"id": "call_3", "type": "function", "function": {"name": "nope", "arguments": "{}"}},
        {"id": "call_4", "type": "function", "function": {"name": "load_skill", "arguments": "{"}},
    ]
    replies = kit.dispatch_sync(calls)
    assert [r["tool_call_id"] for r in replies] == ["call_1", "call_2", "call_3", "call_4"]
    assert all(r["role"] == "tool" for r in replies)
    assert "Demo body: v2" in replies[0]["content"]
    assert replies[1]["content"].startswith("Error:") and "escapes" in replies[1]["content"]
    assert "Unknown tool 'nope'" in replies[2]["content"]
    assert "not valid JSON" in replies[3]["content"]


def test_openai_responses_function_calls(kit: OpenAIToolkit) -> None:
    items = [
        {"type": "reasoning", "id": "r1", "summary": []},
        ResponseFunctionToolCall(
            type="function_call", call_id="fc_1", name="list_skills", arguments="{}"
        ),
    ]
    (reply,) = kit.dispatch_sync(items)
    assert reply["type"] == "function_call_output" and reply["call_id"] == "fc_1"
    assert [s["name"] for s in json.loads(reply["output"])["skills"]] == ["demo", "echo-script"]


def test_anthropic_tool_use_round_trip(settings: Settings, root: Path) -> None:
    kit = AnthropicToolkit.from_skills(settings, roots=[root], no_defaults=True, scripts=True)
    assert {t["name"] for t in kit.tools()} >= {"load_skill", "run_skill_script"}
    assert "input_schema" in kit.tools()[0]
    content = [
        TextBlock(type="text", text="Let me load it."),
        ToolUseBlock(id="tu_1", type="tool_use", name="load_skill", input={"name": "demo"}),
        {"type": "tool_use", "id": "tu_2", "name": "load_skill", "input": {"name": "ghost"}},
        {"type": "tool_use", "id": "tu_3", "name": "run_skill_script",
         "input": {"name": "echo-script", "input": {"k": "v"}}},
    ]  # fmt: skip
    message = kit.dispatch_sync(content)
    assert message["role"] == "user"
    first, second, third = message["content"]
    assert first == {
        "type": "tool_result",
        "tool_use_id": "tu_1",
        "content": first["content"],
    }
    assert "Demo body:" in first["content"]
    assert second["is_error"] is True and "ghost" in second["content"]
    assert json.loads(third["content"]) == {"echo": {"k": "v"}}


@pytest.mark.anyio
async def test_load_skill_dynamic_context_needs_the_hosts_gate(tmp_path: Path) -> None:
    """Issue 16: the integrations' load_skill is the one load operation: without a
    gate a body with dynamic context is refused; with the host's gate it expands."""
    root = tmp_path / "dyn"
    write_skill(root, "stamp", "Now: !`echo STAMPED`\n")
    ws = tmp_path / "ws2"
    ws.mkdir()
    settings = load_settings(workspace=ws, home=tmp_path / "home2")
    settings.sandbox.mode = "off"
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True, use_cache=False)
    ctx = ToolContext(session_id="x", workspace=ws, settings=settings)

    class Gate:
        read_only = False

        async def check_command(self, skill: Skill, command: str) -> str | None:
            return None if command == "echo STAMPED" else "no"

    refused = await {t.name: t for t in skill_tools(registry)}["load_skill"].call(
        {"name": "stamp"}, ctx
    )
    assert refused.is_error and "no gate was given" in refused.content
    gated = {t.name: t for t in skill_tools(registry, gate=Gate())}["load_skill"]
    loaded = await gated.call({"name": "stamp"}, ctx)
    assert not loaded.is_error and "Now: STAMPED" in loaded.content
