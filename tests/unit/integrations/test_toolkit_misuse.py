"""The OpenAI and Anthropic toolkits given the wrong shapes: the obvious single-call
forms are accepted; what is not a tool call is an IntegrationError naming what was
expected, never an empty result the provider's API would then refuse."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from anthropic.types import ToolUseBlock
from mcp import Client
from openai.types.chat import ChatCompletionMessage, ChatCompletionMessageFunctionToolCall
from openai.types.chat.chat_completion_message_function_tool_call import Function

from skill_fixtures import write_demo_catalog
from skilldeck.config import Settings, load_settings
from skilldeck.errors import IntegrationError
from skilldeck.integrations.anthropic_tools import AnthropicToolkit
from skilldeck.integrations.openai_tools import OpenAIToolkit
from skilldeck.mcp.server import build_server
from skilldeck.skills.registry import SkillRegistry

_BAD_YAML = "---\nname: csv-clean\ndescription: Clean CSV files: dedupe rows, fix headers.\n---\n"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    ws = tmp_path / "ws"
    ws.mkdir()
    return load_settings(workspace=ws, home=tmp_path / "home")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = write_demo_catalog(tmp_path / "skills")
    (root / "csv-clean").mkdir()
    (root / "csv-clean" / "SKILL.md").write_text(_BAD_YAML, encoding="utf-8")
    return root


@pytest.fixture
def kit(settings: Settings, root: Path) -> OpenAIToolkit:
    return OpenAIToolkit.from_skills(settings, roots=[str(root)], no_defaults=True)


@pytest.fixture
def akit(settings: Settings, root: Path) -> AnthropicToolkit:
    return AnthropicToolkit.from_skills(settings, roots=root, no_defaults=True)


def _chat(call_id: str, arguments: str = '{"name": "demo"}') -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "load_skill", "arguments": arguments},
    }


# ---- OpenAI -------------------------------------------------------------------------


def test_from_skills_takes_str_roots_and_one_path(
    kit: OpenAIToolkit, akit: AnthropicToolkit
) -> None:
    assert "<name>demo</name>" in kit.tools()[1]["function"]["description"]
    assert "<name>demo</name>" in akit.tools()[1]["description"]


def test_one_chat_call_alone_is_a_list_of_one(kit: OpenAIToolkit) -> None:
    (reply,) = kit.dispatch_sync(_chat("call_1"))
    assert reply["tool_call_id"] == "call_1" and "Demo body" in reply["content"]
    sdk = ChatCompletionMessageFunctionToolCall(
        id="call_2", type="function", function=Function(name="load_skill", arguments="{}")
    )
    (reply,) = kit.dispatch_sync(sdk)
    assert reply["tool_call_id"] == "call_2" and reply["content"].startswith("Error:")


def test_a_flattened_call_is_accepted(kit: OpenAIToolkit) -> None:
    flat = {"id": "call_9", "name": "load_skill", "arguments": '{"name": "demo"}'}
    (reply,) = kit.dispatch_sync(flat)
    assert reply == {"role": "tool", "tool_call_id": "call_9", "content": reply["content"]}
    assert "Demo body" in reply["content"]
    (reply,) = kit.dispatch_sync([{**flat, "call_id": "fc_9"}])
    assert reply["type"] == "function_call_output" and reply["call_id"] == "fc_9"


def test_the_assistant_message_itself_is_accepted(kit: OpenAIToolkit) -> None:
    message = ChatCompletionMessage(
        role="assistant",
        content=None,
        tool_calls=[
            ChatCompletionMessageFunctionToolCall(
                id="call_3",
                type="function",
                function=Function(name="load_skill", arguments='{"name": "demo"}'),
            )
        ],
    )
    (reply,) = kit.dispatch_sync(message)
    assert reply["tool_call_id"] == "call_3"
    (reply,) = kit.dispatch_sync({"role": "assistant", "tool_calls": [_chat("call_4")]})
    assert reply["tool_call_id"] == "call_4"


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (None, "no tool calls to run"),
        ({"role": "assistant", "content": "Done.", "tool_calls": None}, "no tool calls to run"),
        ("load_skill", "not a tool call"),
        ({"name": "load_skill"}, "not a tool call"),
        (42, "not a tool call"),
        ([_chat("call_1"), "load_skill"], "among the tool calls"),
        ([{"id": "x"}], "among the tool calls"),
    ],
)
def test_what_is_not_a_tool_call_is_refused(kit: OpenAIToolkit, value: Any, says: str) -> None:
    with pytest.raises(IntegrationError, match=says) as caught:
        kit.dispatch_sync(value)
    assert "message.tool_calls" in str(caught.value)


def test_responses_output_without_calls_needs_no_answer(kit: OpenAIToolkit) -> None:
    assert kit.dispatch_sync([{"type": "message", "role": "assistant", "content": []}]) == []
    assert kit.dispatch_sync([]) == []


@pytest.mark.parametrize(
    ("arguments", "kind"),
    [('"demo"', "a string"), ("[1]", "an array"), ("5", "a number"), ("null", "null")],
)
def test_arguments_that_are_not_an_object_say_so(
    kit: OpenAIToolkit, arguments: str, kind: str
) -> None:
    (reply,) = kit.dispatch_sync([_chat("c", arguments)])
    assert f'must be a JSON object such as {{"name": "..."}}, not {kind}' in reply["content"]
    assert "Field required" not in reply["content"]


def test_load_skill_of_an_invalid_skill_says_why(kit: OpenAIToolkit, root: Path) -> None:
    (reply,) = kit.dispatch_sync([_chat("c", '{"name": "csv-clean"}')])
    assert reply["content"].startswith("Error: Skill 'csv-clean' is invalid: ")
    assert f"{root / 'csv-clean' / 'SKILL.md'}:3: SD003" in reply["content"]
    assert "Did you mean" not in reply["content"]


@pytest.mark.anyio
async def test_dispatch_sync_inside_an_event_loop_says_to_await(
    kit: OpenAIToolkit, akit: AnthropicToolkit
) -> None:
    with pytest.raises(IntegrationError, match=r"await toolkit\.dispatch\(\.\.\.\)"):
        kit.dispatch_sync([_chat("c")])
    with pytest.raises(IntegrationError, match=r"AnthropicToolkit\.dispatch_sync"):
        akit.dispatch_sync([{"type": "tool_use", "id": "t", "name": "list_skills", "input": {}}])
    (reply,) = await kit.dispatch([_chat("c")])  # what the message says to do
    assert "Demo body" in reply["content"]


# ---- Anthropic ----------------------------------------------------------------------


def test_one_tool_use_block_alone_and_the_message_itself(akit: AnthropicToolkit) -> None:
    block = ToolUseBlock(id="tu_1", type="tool_use", name="load_skill", input={"name": "demo"})
    message = akit.dispatch_sync(block)
    (result,) = message["content"]
    assert result["tool_use_id"] == "tu_1" and "Demo body" in result["content"]
    whole = {"role": "assistant", "content": [{"type": "text", "text": "hi"}, block]}
    assert akit.dispatch_sync(whole)["content"][0]["tool_use_id"] == "tu_1"


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ([{"type": "text", "text": "Done."}], r"no tool_use block \(text\)"),
        ([], r"no tool_use block \(nothing\)"),
        ("Done.", "not content blocks"),
        (None, "not content blocks"),
        ({"id": "tu_1", "name": "load_skill"}, "not content blocks"),
        (["load_skill"], "among the content blocks"),
    ],
)
def test_content_without_a_tool_use_is_refused(
    akit: AnthropicToolkit, content: Any, says: str
) -> None:
    with pytest.raises(IntegrationError, match=says) as caught:
        akit.dispatch_sync(content)
    assert "response.content" in str(caught.value)


def test_tool_use_input_as_json_text_or_not_an_object(akit: AnthropicToolkit) -> None:
    content = [
        {"type": "tool_use", "id": "a", "name": "load_skill", "input": '{"name": "demo"}'},
        {"type": "tool_use", "id": "b", "name": "load_skill", "input": '["demo"]'},
    ]
    ok, bad = akit.dispatch_sync(content)["content"]
    assert "Demo body" in ok["content"] and "is_error" not in ok
    assert bad["is_error"] is True and "must be a JSON object" in bad["content"]
    assert "Field required" not in bad["content"]


def test_anthropic_load_skill_of_an_invalid_skill(akit: AnthropicToolkit) -> None:
    use = {"type": "tool_use", "id": "a", "name": "load_skill", "input": {"name": "csv-clean"}}
    (result,) = akit.dispatch_sync([use])["content"]
    assert result["is_error"] is True
    assert (
        result["content"].startswith("Skill 'csv-clean' is invalid: ")
        and "SD003" in result["content"]
    )


# ---- MCP ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_mcp_load_skill_of_an_invalid_skill(settings: Settings, root: Path) -> None:
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True, use_cache=False)
    async with Client(build_server(registry, poll_interval=0)) as client:
        result = await client.call_tool("load_skill", {"name": "csv-clean"})
    assert result.is_error
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    assert "Skill 'csv-clean' is invalid: " in block.text and ":3: SD003" in block.text
    assert "Did you mean" not in block.text
