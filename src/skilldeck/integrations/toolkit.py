"""What the provider-specific toolkits share: a tool registry, a context, parallel calls.

:class:`Toolkit` is the provider-neutral half: it owns a
:class:`~skilldeck.tools.base.ToolRegistry` and the
:class:`~skilldeck.tools.base.ToolContext` the tools run with, and runs a batch of
calls concurrently, keeping their order. The OpenAI and Anthropic toolkits only
translate wire formats around it.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Self, TypeVar

import anyio

from skilldeck.config import Settings, load_settings
from skilldeck.errors import IntegrationError
from skilldeck.integrations.skill_tools import skill_tools
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import Tool, ToolContext, ToolRegistry, ToolResult

if TYPE_CHECKING:
    from skilldeck.skills.discovery.roots import RootPaths

T = TypeVar("T")


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
        roots: RootPaths = (),
        no_defaults: bool = False,
        scripts: bool = False,
        extra_tools: Sequence[Tool] = (),
    ) -> Self:
        """Discover skills and expose the catalog tools (plus ``extra_tools``).
        ``roots`` (scanned first) are paths, ``str`` or ``os.PathLike``, in a list or
        one alone; a relative one is resolved against ``settings.workspace``."""
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


def shown(value: Any) -> str:
    """``value`` for an error message: its type and the start of its repr."""
    return f"{type(value).__name__} {value!r:.100}"


def run_sync(go: Callable[[], Awaitable[T]], toolkit: object) -> T:
    """``anyio.run(go)`` for ``dispatch_sync``; inside a running event loop (async code,
    a notebook) it cannot run, and the IntegrationError says to await instead."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(go)
    name = type(toolkit).__name__
    raise IntegrationError(
        f"{name}.dispatch_sync() was called inside a running event loop, where it cannot "
        f"run; in async code use `await toolkit.dispatch(...)` instead."
    )


def arguments_of(name: str, raw: Any) -> tuple[dict[str, Any], str | None]:
    """A tool call's arguments as a dict, or an error the model reads: a dict as it is,
    an SDK object dumped, a JSON string parsed; empty means no arguments. Anything
    else (a JSON array, string, number) says it must be a JSON object."""
    if hasattr(raw, "model_dump"):
        raw = raw.model_dump()
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as e:
            return {}, f"Arguments for {name} are not valid JSON ({e}); send a JSON object."
    if isinstance(value, dict):
        return value, None
    shown = json.dumps(value, default=repr)[:80]
    return {}, (
        f'Arguments for {name} must be a JSON object such as {{"name": "..."}}, '
        f"not {_json_kind(value)}: {shown}."
    )


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list | tuple) else type(value).__name__
