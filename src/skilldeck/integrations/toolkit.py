"""What the provider-specific toolkits share: a tool registry, a context, parallel calls.

:class:`Toolkit` is the provider-neutral half: it owns a
:class:`~skilldeck.tools.base.ToolRegistry` and the
:class:`~skilldeck.tools.base.ToolContext` the tools run with, and runs a batch of
calls concurrently, keeping their order. The OpenAI and Anthropic toolkits only
translate wire formats around it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

import anyio

from skilldeck.config import Settings, load_settings
from skilldeck.integrations.skill_tools import skill_tools
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import Tool, ToolContext, ToolRegistry, ToolResult


class Toolkit:
    """Tools plus the context they run in. Build one per conversation."""

    def __init__(
        self,
        tools: ToolRegistry | Sequence[Tool],
        *,
        ctx: ToolContext | None = None,
        settings: Settings | None = None,
        skills: SkillRegistry | None = None,
    ) -> None:
        self.registry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(list(tools))
        if ctx is None:
            settings = settings or (skills.settings if skills else load_settings())
            ctx = ToolContext(
                session_id=uuid.uuid4().hex[:12],
                workspace=settings.workspace,
                settings=settings,
                skills=skills,
            )
        self.ctx = ctx

    @classmethod
    def from_skills(
        cls,
        settings: Settings | None = None,
        *,
        roots: Sequence[Path] = (),
        no_defaults: bool = False,
        scripts: bool = False,
        extra_tools: Sequence[Tool] = (),
    ) -> Self:
        """Discover skills and expose the catalog tools (plus ``extra_tools``)."""
        settings = settings or load_settings()
        registry = SkillRegistry.discover(settings, roots=roots, no_defaults=no_defaults)
        tools = [*skill_tools(registry, scripts=scripts), *extra_tools]
        return cls(tools, settings=settings, skills=registry)

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        return await self.registry.dispatch(name, arguments, self.ctx)

    async def call_many(self, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[ToolResult]:
        """Run ``calls`` concurrently; results come back in the same order."""
        results: list[ToolResult | None] = [None] * len(calls)

        async def one(i: int, name: str, arguments: dict[str, Any]) -> None:
            results[i] = await self.call(name, arguments)

        async with anyio.create_task_group() as tg:
            for i, (name, arguments) in enumerate(calls):
                tg.start_soon(one, i, name, arguments)
        return [r if r is not None else ToolResult.error("tool did not run") for r in results]


def field(item: Any, name: str, default: Any = None) -> Any:
    """``item[name]`` for dicts, ``item.name`` for SDK objects (both shapes accepted)."""
    if isinstance(item, dict):
        return item.get(name, default)
    return getattr(item, name, default)
