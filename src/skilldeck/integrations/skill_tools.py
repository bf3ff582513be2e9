"""The skill catalog as four plain tools, for agents that are not skilldeck's own.

The same surface the MCP server offers, as :class:`~skilldeck.tools.base.Tool`\\ s so
they export to OpenAI/Anthropic function calling and to other frameworks:

* ``list_skills(query?, limit?)`` — the catalog as JSON, ranked when given a query;
* ``load_skill(name, args?)`` — level 2 through the one load operation
  (:func:`skilldeck.skills.execution.loading.load_skill_for_use`): instructions with
  ``$ARGUMENTS`` filled in and the file list; its description carries the
  ``<available_skills>`` block, so the model sees the catalog (level 1) without
  calling anything. Dynamic context (`` !`cmd` ``) runs only through a permission
  gate the host passes (``skill_tools(registry, gate=...)``, a
  :class:`~skilldeck.skills.execution.loading.CommandGate`); without one, a body that has
  it is refused with the reason — its commands are never run unvetted;
* ``read_skill_resource(name, path)`` — level 3, confined to the skill folder;
* ``run_skill_script(name, input?)`` — the sandboxed script runner; only included
  when asked for (``scripts=True``), like ``--allow-scripts`` on the MCP server.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from skilldeck.errors import SkilldeckError
from skilldeck.llm.messages import ToolSpec
from skilldeck.mcp.catalog import LOAD_SKILL_INTRO, list_skills_payload, resource_text
from skilldeck.skills.execution import (
    CommandGate,
    ScriptRunner,
    load_skill_for_use,
    render_available_skills,
)
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import Tool, ToolContext, ToolResult
from skilldeck.tools.skill_tool import context_runner


class _CatalogTool(Tool):
    """Base: holds the registry; turns skilldeck errors into error results."""

    def __init__(self, registry: SkillRegistry) -> None:
        self.registry = registry

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        """An unknown or unavailable skill, a path outside it, a refused script: the
        model's mistake to correct, so an error result rather than an exception."""
        try:
            return await self.answer(input, ctx)
        except SkilldeckError as e:
            return ToolResult.error(str(e))

    @abstractmethod
    async def answer(self, input: Any, ctx: ToolContext) -> ToolResult:
        """The tool's work; may raise :class:`SkilldeckError`."""

    def _skill(self, name: str) -> Skill:
        skill = self.registry.get(name)
        why = self.registry.why_unavailable(skill)
        if why:
            raise SkilldeckError(f"Skill {name!r} is unavailable here: {why}")
        return skill


class ListSkillsInput(BaseModel):
    query: str | None = Field(None, description="Words describing the task; ranks skills.")
    limit: int = Field(50, ge=1, le=500, description="How many skills to return at most.")


class ListSkillsTool(_CatalogTool):
    name: ClassVar[str] = "list_skills"
    description: ClassVar[str] = (
        "List the available skills (name, description, version) as JSON. With a query, "
        "the skills most relevant to it come first."
    )
    Input: ClassVar[type[BaseModel]] = ListSkillsInput
    read_only: ClassVar[bool] = True

    async def answer(self, input: Any, ctx: ToolContext) -> ToolResult:
        payload = list_skills_payload(self.registry, query=input.query, limit=input.limit)
        return ToolResult(json.dumps(payload, ensure_ascii=False, indent=2), data=payload)


class LoadSkillInput(BaseModel):
    name: str = Field(description="The skill's name, from the list of available skills.")
    args: str | None = Field(None, description="Arguments for the skill ($ARGUMENTS).")


class LoadSkillTool(_CatalogTool):
    name: ClassVar[str] = "load_skill"
    description: ClassVar[str] = LOAD_SKILL_INTRO
    Input: ClassVar[type[BaseModel]] = LoadSkillInput
    read_only: ClassVar[bool] = True

    def spec(self) -> ToolSpec:
        """The description carries the current catalog (it follows the registry)."""
        catalog = render_available_skills(
            self.registry.usable(), budget=self.registry.settings.skills.prompt_budget
        )
        return ToolSpec(
            name=self.name,
            description=f"{self.description}\n\n{catalog}",
            input_schema=self.input_schema(),
        )

    def __init__(self, registry: SkillRegistry, *, gate: CommandGate | None = None) -> None:
        super().__init__(registry)
        #: the host's permission gate for dynamic context (None: refused)
        self.gate = gate

    async def answer(self, input: Any, ctx: ToolContext) -> ToolResult:
        skill = self._skill(input.name)
        settings = self.registry.settings
        loaded = await load_skill_for_use(
            skill,
            arguments=input.args,
            session_id=ctx.session_id,
            workspace=ctx.workspace,
            gate=self.gate,
            run_command=context_runner(ctx, settings) if self.gate is not None else None,
            dynamic=settings.skills.dynamic_context,
            where="this integration (no gate was given to skill_tools)",
        )
        if not loaded.ok:
            raise SkilldeckError(loaded.error or f"Skill {skill.name!r} was not loaded.")
        data: dict[str, Any] = {"skill": skill.name, "folder": str(skill.folder)}
        if loaded.warnings:
            data["warnings"] = list(loaded.warnings)
        return ToolResult(loaded.text, data=data)


class ReadSkillResourceInput(BaseModel):
    name: str = Field(description="The skill's name.")
    path: str = Field(description="A file path relative to the skill folder, or SKILL.md.")


class ReadSkillResourceTool(_CatalogTool):
    name: ClassVar[str] = "read_skill_resource"
    description: ClassVar[str] = (
        "Read one file of a skill (a path relative to its folder, e.g. references/guide.md). "
        "Paths outside the skill folder are refused."
    )
    Input: ClassVar[type[BaseModel]] = ReadSkillResourceInput
    read_only: ClassVar[bool] = True

    async def answer(self, input: Any, ctx: ToolContext) -> ToolResult:
        return ToolResult(resource_text(self._skill(input.name), input.path))


class RunSkillScriptInput(BaseModel):
    name: str = Field(description="A script skill's name.")
    input: dict[str, Any] | list[Any] | str | None = Field(
        None, description="The script's JSON arguments."
    )


class RunSkillScriptTool(_CatalogTool):
    name: ClassVar[str] = "run_skill_script"
    description: ClassVar[str] = (
        "Run a script skill's entry point with JSON input and return its JSON result "
        "(sandboxed, with a timeout and a scrubbed environment)."
    )
    Input: ClassVar[type[BaseModel]] = RunSkillScriptInput

    async def answer(self, input: Any, ctx: ToolContext) -> ToolResult:
        skill = self._skill(input.name)
        runner = ScriptRunner(ctx.settings, session_id=ctx.session_id, workspace=ctx.workspace)
        result = await runner.run(skill, input.input)
        return ToolResult(result.render(), is_error=not result.ok, data=result.to_dict())


def skill_tools(
    registry: SkillRegistry, *, scripts: bool = False, gate: CommandGate | None = None
) -> list[Tool]:
    """``list_skills``, ``load_skill``, ``read_skill_resource`` (+ ``run_skill_script``).
    ``gate`` vets ``load_skill``'s dynamic-context commands (None: they are refused)."""
    tools: list[Tool] = [
        ListSkillsTool(registry),
        LoadSkillTool(registry, gate=gate),
        ReadSkillResourceTool(registry),
    ]
    if scripts:
        tools.append(RunSkillScriptTool(registry))
    return tools
