"""The Pydantic AI adapter, driven by Pydantic AI's own offline FunctionModel."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from skilldeck.config import load_settings
from skilldeck.integrations.pydanticai import (
    skill_tools_for_pydantic_ai,
    to_pydantic_ai,
)
from skilldeck.tools.base import ToolRegistry


@pytest.fixture
def settings(tmp_path: Path):  # type: ignore[no-untyped-def]
    folder = tmp_path / "skills" / "haiku"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: haiku\ndescription: Writes haiku. Use for short poems.\n---\n\n"
        "Write three lines about $ARGUMENTS: 5, 7, 5 syllables.\n",
        encoding="utf-8",
    )
    return load_settings(workspace=tmp_path, home=tmp_path / "home")


@pytest.mark.anyio
async def test_a_pydantic_ai_agent_loads_a_skill(settings) -> None:  # type: ignore[no-untyped-def]
    seen: dict[str, object] = {}

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen["tools"] = {t.name: t for t in info.function_tools}
        returns = [
            part
            for message in messages
            for part in getattr(message, "parts", [])
            if isinstance(part, ToolReturnPart)
        ]
        if not returns:
            return ModelResponse(
                parts=[
                    ToolCallPart("load_skill", {"name": "haiku", "args": "autumn"}, "c1"),
                    ToolCallPart("load_skill", {"name": "sonnet"}, "c2"),
                ]
            )
        seen["returns"] = {p.tool_call_id: p.model_response_str() for p in returns}
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(
        FunctionModel(model),
        tools=skill_tools_for_pydantic_ai(
            settings, roots=[settings.workspace / "skills"], no_defaults=True
        ),
    )
    result = await agent.run("write a poem")  # run_sync would leave an event loop open

    assert result.output == "done"
    tools = seen["tools"]
    assert set(tools) == {"list_skills", "load_skill", "read_skill_resource"}  # type: ignore[arg-type]
    assert "<name>haiku</name>" in tools["load_skill"].description  # type: ignore[index]
    returns = seen["returns"]
    assert "Write three lines about autumn" in returns["c1"]  # type: ignore[index]
    assert "sonnet" in returns["c2"]  # type: ignore[index]


def test_to_pydantic_ai_keeps_names_and_schemas(settings) -> None:  # type: ignore[no-untyped-def]
    from skilldeck.integrations.skill_tools import skill_tools
    from skilldeck.skills.registry import SkillRegistry

    registry = ToolRegistry(
        skill_tools(
            SkillRegistry.discover(
                settings, roots=[settings.workspace / "skills"], no_defaults=True
            ),
            scripts=True,
        )
    )
    wrapped = {t.name: t for t in to_pydantic_ai(registry, settings=settings)}
    assert set(wrapped) == set(registry.names())
    schema = wrapped["read_skill_resource"].tool_def.parameters_json_schema
    assert schema["required"] == ["name", "path"]
