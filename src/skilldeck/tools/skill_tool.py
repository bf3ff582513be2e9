"""The ``Skill`` tool: how the model loads, runs and searches skills.

One tool, four behaviours, and the first line of the result says which happened:

* ``{"skill": "x"}`` on a **prompt skill** → "Loaded skill x (prompt)" and its level 2
  (base directory, body with substitutions and dynamic context, list of files);
* ``{"skill": "x", "args": …}`` on a **script skill** → "Ran script skill x" and the
  script's JSON output; without ``args`` → its instructions (level 2), so the model
  learns the parameters before calling again;
* ``{"skill": "x", "args": …}`` on a **code skill** → "Ran code skill x" and what its
  ``execute(ctx)`` returned;
* ``{"query": "…"}`` → the best-matching skills (name, description, score), for the
  skills that did not fit in the ``<available_skills>`` block.

The description carries the ``<available_skills>`` block, and the input schema lists
the invocable skill names as an enum (when there are not too many). Unknown,
disabled and unavailable skills come back as error results with suggestions. The
result's ``data`` holds the skill's ``allowed_tools``/``forbidden_tools`` so the
permission layer can pre-approve (or forbid) what the skill needs.

Under a read-only gate (``--permission-mode plan``, a plan sub-agent: the gate's
``read_only`` attribute, or ``services["read_only"]``) the tool only *loads* text: a
script skill's entrypoint, a code skill (even its import) and dynamic-context
commands are refused with "plan mode: this skill runs code; leave plan mode to run
it." — plan mode runs nothing but read-only tools.

What a result carries is capped at ``agent.tool_output_limit`` characters (a note
says where the rest is): a 150 MB skill body must not reach the model, nor be stored
whole in the session database as the "full output" of a truncated result.

Collaborators come from ``ToolContext.services`` (the agent wires them):
``"llm"`` (an LLMClient for code skills), ``"tool_dispatcher"`` (``call(name, input)``
through the permission gate, for code skills), ``"permission_check"``
(``(tool, input) -> reason | None``) or ``"tool_gate"`` (the loop's gate), used to
vet dynamic-context commands as ``Bash`` calls.
"""

from __future__ import annotations

import contextvars
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from skilldeck.errors import SkilldeckError, SkillNotFoundError, SkillUnavailableError
from skilldeck.llm.messages import ToolSpec
from skilldeck.sandbox import Sandbox
from skilldeck.skills.code import (
    SkillContext,
    keyword_score,
    load_code_skill,
    run_code_skill,
)
from skilldeck.skills.execution import (
    PLAN_REFUSAL,
    LoadStatus,
    ScriptRunner,
    render_available_skills,
)
from skilldeck.skills.model.skill import Skill, SkillKind
from skilldeck.skills.model.spec import call_name
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.routing import registry_matches
from skilldeck.tools.base import Tool, ToolContext, ToolRegistry, ToolResult
from skilldeck.tools.skill_results import args_given, cap_text, plan_refusal, skill_result
from skilldeck.tools.skill_session import (
    ContextGate,
    GatedDispatcher,
    already_loaded,
    context_runner,
    load_in_context,
    remember_load,
    runs_read_only,
)

__all__ = [
    "PLAN_REFUSAL",
    "ContextGate",
    "SkillInput",
    "SkillTool",
    "context_runner",
    "load_in_context",
    "runs_read_only",
]

#: above this many invocable skills the schema carries no enum (use ``query``)
ENUM_LIMIT = 256
#: default deadline of a code skill without a ``timeout`` field (it may call a model)
CODE_SKILL_TIMEOUT = 600.0
_MAX_DEPTH = 4
#: how deep code skills calling Skill are nested, per task (a context variable, so
#: parallel tool calls of one turn do not count against each other)
_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("skilldeck_skill_depth", default=0)

_BASE_DESCRIPTION = """\
Use a skill: load its instructions, run it, or search for one.

Skills are folders of instructions, scripts and resources for specialised tasks. When a \
task matches a skill's description, call this tool with {"skill": "<name>"} BEFORE \
doing the task yourself, then follow the instructions it returns (paths in them are \
relative to the skill's base directory). Pass "args" to give arguments: a string for \
prompt skills; an object for script and code skills (a script skill called without \
"args" returns its instructions, with its parameters). Use {"query": "<what you \
need>"} to search skills that are not listed below. Do not call a skill that is \
already loaded in this conversation."""


class SkillInput(BaseModel):
    skill: str | None = Field(default=None, description="The skill's name, e.g. 'pdf'.")
    args: str | dict[str, Any] | list[Any] | None = Field(
        default=None,
        description="Arguments: a string for prompt skills, a JSON object for script/code skills.",
    )
    query: str | None = Field(
        default=None, description="Search the skills by what you need instead of naming one."
    )


class SkillTool(Tool):
    name: ClassVar[str] = "Skill"
    description: ClassVar[str] = _BASE_DESCRIPTION
    Input: ClassVar[type[BaseModel]] = SkillInput

    def __init__(
        self,
        registry: SkillRegistry,
        *,
        tools: ToolRegistry | None = None,
        runner: ScriptRunner | None = None,
        available_tools: set[str] | None = None,
        list_in_description: bool = True,
    ) -> None:
        self.registry = registry
        self.settings = registry.settings
        self.tools = tools
        self._runner = runner
        #: the agent's tool names, for ``requires-tools`` gating (None = unknown)
        self.available_tools = available_tools
        if available_tools is None and tools is not None:
            self.available_tools = {*tools.names(), self.name}
        self.list_in_description = list_in_description

    # ---- what the model sees -------------------------------------------------------

    def invocable(self) -> list[Skill]:
        """Skills the model may call: enabled, not gated for this agent's tools (computed
        here, never written on the shared skills), model-invocable."""
        skills = self.registry.usable(tools=self.available_tools)
        return [s for s in skills if not s.metadata.disable_model_invocation]

    def describe(self) -> str:
        if not self.list_in_description:  # an agent's: the catalog is in its system prompt
            return _BASE_DESCRIPTION.replace("not listed below", "not listed in the prompt")
        block = render_available_skills(self.invocable(), budget=self.settings.skills.prompt_budget)
        return f"{_BASE_DESCRIPTION}\n\n{block}" if block else _BASE_DESCRIPTION

    def input_schema(self) -> dict[str, Any]:
        schema = super().input_schema()
        names = sorted(s.name for s in self.invocable())
        if names and len(names) <= ENUM_LIMIT:
            schema["properties"]["skill"] = {
                "anyOf": [{"type": "string", "enum": names}, {"type": "null"}],
                "default": None,
                "description": "The skill's name (one of the available skills).",
            }
        return schema

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name, description=self.describe(), input_schema=self.input_schema()
        )

    # ---- dispatch --------------------------------------------------------------------

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        args: SkillInput = input
        if not args.skill:
            if args.query:
                return self._search(args.query)
            return ToolResult.error('Give "skill" (a skill name) or "query" (what you need).')
        try:
            skill = self.lookup(args.skill)
        except (SkillNotFoundError, SkillUnavailableError) as e:
            return ToolResult.error(str(e))
        return await self.invoke(skill, args.args, ctx)

    async def invoke(
        self, skill: Skill, raw_args: Any, ctx: ToolContext, *, run_without_args: bool = False
    ) -> ToolResult:
        """Load or run ``skill`` (see the module docstring). ``run_without_args`` runs a
        script skill even without arguments (``skilldeck skills run``)."""
        depth = _DEPTH.get()
        if depth >= _MAX_DEPTH:
            return ToolResult.error(f"Skills nested too deep (>{_MAX_DEPTH}) at {skill.name!r}.")
        token = _DEPTH.set(depth + 1)
        runs = skill.kind is SkillKind.CODE or (
            skill.kind is SkillKind.SCRIPT and (run_without_args or args_given(raw_args))
        )
        try:
            if runs and runs_read_only(ctx):
                what = "a code skill" if skill.kind is SkillKind.CODE else "its script"
                return plan_refusal(skill, f"{skill.name!r} would run {what}")
            if skill.kind is SkillKind.CODE:
                return await self._run_code(skill, raw_args, ctx)
            if runs:
                return await self._run_script(skill, raw_args, ctx)
            return await self._load(skill, raw_args, ctx)
        except SkilldeckError as e:
            return skill_result(
                skill, f"Skill {skill.name!r} failed: {e}", error=True, mode="failed"
            )
        finally:
            _DEPTH.reset(token)

    def lookup(self, raw: str) -> Skill:
        """The skill the model means by ``raw`` (``/name`` accepted); raises
        SkillNotFoundError / SkillUnavailableError with the reason."""
        name = call_name(raw)  # the same name Skill(...) permission rules match
        skill = self.registry.get(name)
        reason = self.registry.why_unavailable(skill, tools=self.available_tools)
        if reason:
            raise SkillUnavailableError(skill.name, reason)
        if skill.metadata.disable_model_invocation:
            raise SkillUnavailableError(
                skill.name, "it can only be invoked by the user (disable-model-invocation)"
            )
        return skill

    def _search(self, query: str) -> ToolResult:
        ranked = [(s, score) for s, score in self._rank(query) if s in self.invocable()]
        if not ranked:
            return ToolResult(content=f"No skill matches {query!r}.", data={"matches": []})
        lines = [f"Skills matching {query!r} (best first):"]
        lines += [f"- {s.name} ({score:.2f}): {s.description}" for s, score in ranked]
        lines.append('Load one with {"skill": "<name>"}.')
        matches = [
            {"name": s.name, "score": score, "description": s.description} for s, score in ranked
        ]
        return ToolResult(content="\n".join(lines), data={"matches": matches})

    def _rank(self, query: str, k: int = 10) -> list[tuple[Skill, float]]:
        """BM25 ranking (the matcher is imported on the first search); keyword overlap
        when it cannot be imported."""
        try:
            matches = registry_matches(self.registry, query, k=k)
        except ImportError:
            scored = [
                (s, keyword_score(query, f"{s.name.replace('-', ' ')} {s.description}"))
                for s in self.invocable()
            ]
            scored.sort(key=lambda pair: -pair[1])
            return [(s, score) for s, score in scored[:k] if score > 0]
        return [(m.skill, m.score) for m in matches]

    # ---- the three kinds ---------------------------------------------------------------

    async def _load(self, skill: Skill, raw_args: Any, ctx: ToolContext) -> ToolResult:
        repeated = already_loaded(skill, raw_args, ctx)
        if repeated is not None:  # its body is in the conversation already
            return skill_result(skill, repeated, mode="already_loaded")
        loaded = await load_in_context(skill, raw_args, ctx, settings=self.settings)
        if loaded.status is LoadStatus.REFUSED:
            return skill_result(skill, loaded.error or PLAN_REFUSAL, error=True, mode="refused")
        if not loaded.ok:
            message = f"Skill {skill.name!r} failed: {loaded.error}"
            return skill_result(
                skill, message, error=True, mode="failed", warnings=list(loaded.warnings)
            )
        head = f"Loaded skill {skill.name} ({skill.kind.value})"
        if skill.kind is SkillKind.SCRIPT:
            head += (
                f'\nThis is a script skill: run it with {{"skill": "{skill.name}", "args": '
                "{...}} using the parameters described below."
            )
        limit = self.settings.agent.tool_output_limit
        text, cut = cap_text(loaded.text, limit - len(head) - 2, source=str(skill.skill_md))
        remember_load(skill, raw_args, ctx)
        return skill_result(
            skill,
            f"{head}\n\n{text}",
            mode="loaded",
            warnings=list(loaded.warnings),
            extra={"text": text, **cut},
            limit=limit,
        )

    async def _run_script(self, skill: Skill, raw_args: Any, ctx: ToolContext) -> ToolResult:
        runner = self._runner or ScriptRunner(
            self.settings, sandbox=Sandbox.for_state(ctx.state, self.settings)
        )
        result = await runner.run(
            skill, raw_args, session_id=ctx.session_id, workspace=ctx.workspace
        )
        if result.ok:
            content = f"Ran script skill {skill.name}\n{result.render()}"
        else:
            content = f"Script skill {skill.name} failed\n{result.render()}"
        return skill_result(
            skill,
            content,
            error=not result.ok,
            mode="ran",
            limit=self.settings.agent.tool_output_limit,
            warnings=result.warnings,
            extra={
                "result": result.value,
                "exit_code": result.exit_code,
                "sandboxed": result.sandboxed,
            },
        )

    async def _run_code(self, skill: Skill, raw_args: Any, ctx: ToolContext) -> ToolResult:
        box = Sandbox.for_state(ctx.state, self.settings)  # untrusted: runs in it
        instance = load_code_skill(skill, settings=self.settings, sandbox=box)
        per_skill = ctx.state.setdefault("code_skill_state", {}).setdefault(skill.name, {})
        skill_ctx = SkillContext(
            tools=self._dispatcher(skill, ctx),
            llm=ctx.services.get("llm"),
            session=ctx.session_id,
            user_message=str(ctx.state.get("user_message", "")),
            config=self.settings.skill_settings(skill.name),
            args=raw_args,
            skill_dir=skill.folder,
            workspace=ctx.workspace,
            state=per_skill,
        )
        timeout = float(skill.metadata.timeout or CODE_SKILL_TIMEOUT)
        outcome = await run_code_skill(instance, skill_ctx, timeout=timeout)
        verb = "Ran code skill" if outcome.success else "Code skill failed:"
        return skill_result(
            skill,
            f"{verb} {skill.name}\n{outcome.render()}",
            error=not outcome.success,
            mode="ran",
            extra={"result": outcome.to_dict(), "prompt_injection": outcome.prompt_injection},
            limit=self.settings.agent.tool_output_limit,
        )

    # ---- collaborators -----------------------------------------------------------------

    def _dispatcher(self, skill: Skill, ctx: ToolContext) -> Any:
        wired = ctx.services.get("tool_dispatcher")
        if wired is not None:
            return wired
        return GatedDispatcher(self._tool_registry(), ctx, self, skill)

    def _tool_registry(self) -> ToolRegistry:
        """The tools a code skill may call: the agent's registry, or (a Skill tool used
        alone, as ``skills run`` does) the built-in tools, imported only then — they
        bring httpx and the web and Bash tools, ~80 ms that the integrations and a
        plain skill's ``skills run`` never need."""
        if self.tools is None:
            from skilldeck.tools.builtin import builtin_tools  # lazy: httpx, web/Bash tools

            self.tools = ToolRegistry([*builtin_tools(), self])
        return self.tools
