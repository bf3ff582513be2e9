"""Adapter for `Pydantic AI <https://ai.pydantic.dev>`_: skilldeck tools as ``pydantic_ai.Tool``.

Install the extra: ``pip install "skilldeck[pydantic-ai]"`` (it pulls ``pydantic-ai-slim``).

::

    from pydantic_ai import Agent
    from skilldeck.integrations.pydanticai import skill_tools_for_pydantic_ai

    agent = Agent("openai:gpt-4.1-mini", tools=skill_tools_for_pydantic_ai())
    agent.run_sync("Write release notes for v2 using the changelog skill")

Each skilldeck tool keeps its name, description and JSON Schema (Pydantic AI's
``Tool.from_schema``); a skilldeck error result is raised as ``ToolFailed``, which
Pydantic AI hands back to the model as a failed tool result without spending the
tool's retry budget — the same "model mistakes go back to the model" contract.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

try:
    from pydantic_ai import Tool as PydanticAITool
    from pydantic_ai.exceptions import ToolFailed
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "skilldeck.integrations.pydanticai needs Pydantic AI: "
        'pip install "skilldeck[pydantic-ai]" (or pydantic-ai-slim).'
    ) from e

from skilldeck.config import Settings
from skilldeck.integrations.toolkit import Toolkit
from skilldeck.llm.messages import ToolSpec
from skilldeck.tools.base import Tool, ToolContext, ToolRegistry

if TYPE_CHECKING:
    from skilldeck.skills.discovery.roots import RootPaths

__all__ = ["skill_tools_for_pydantic_ai", "to_pydantic_ai"]


def to_pydantic_ai(
    tools: ToolRegistry | Sequence[Tool] | Toolkit,
    *,
    ctx: ToolContext | None = None,
    settings: Settings | None = None,
) -> list[PydanticAITool[Any]]:
    """Wrap skilldeck tools (a registry, a list, or a toolkit) as Pydantic AI tools."""
    kit = tools if isinstance(tools, Toolkit) else Toolkit(tools, ctx=ctx, settings=settings)
    return [_wrap(kit, spec) for spec in kit.registry.specs()]


def skill_tools_for_pydantic_ai(
    settings: Settings | None = None,
    *,
    roots: RootPaths = (),
    no_defaults: bool = False,
    scripts: bool = False,
    extra_tools: Sequence[Tool] = (),
) -> list[PydanticAITool[Any]]:
    """Discover skills and return the catalog tools (``load_skill`` …) for an Agent."""
    kit = Toolkit.from_skills(
        settings, roots=roots, no_defaults=no_defaults, scripts=scripts, extra_tools=extra_tools
    )
    return to_pydantic_ai(kit)


def _wrap(kit: Toolkit, spec: ToolSpec) -> PydanticAITool[Any]:
    async def call(**kwargs: Any) -> str:
        result = await kit.call(spec.name, kwargs)
        if result.is_error:
            raise ToolFailed(result.content)
        return result.content

    call.__name__ = spec.name
    return PydanticAITool.from_schema(
        call, name=spec.name, description=spec.description, json_schema=spec.input_schema
    )
