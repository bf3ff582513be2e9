"""An MCP server that exposes a skill catalog to any MCP client (official SDK v2).

What a client sees:

* tools — ``list_skills`` (optionally ranked by ``query``), ``load_skill`` (level 2:
  the body with placeholders filled and the file list; its description carries the
  ``<available_skills>`` block, so a model knows the catalog without a call),
  ``read_skill_resource`` (level 3, confined to the skill folder) and, only when
  enabled, ``run_skill_script`` (the sandboxed script runner);
* resources — ``skill://<name>/SKILL.md`` and ``skill://<name>/<path>`` (and the
  template ``skill://{name}/{path}``);
* prompts — every user-invocable skill, taking its ``arguments`` string.

Everything is computed from the :class:`~skilldeck.skills.registry.registry.SkillRegistry` at
request time, so nothing goes stale. A watcher (in the server's lifespan) calls
``registry.refresh()`` every ``poll_interval`` seconds and, when a skill appeared,
changed or went away, sends the list-changed notifications (:mod:`.changes`): on the
2026-07-28 protocol through the ``subscriptions/listen`` bus, on the handshake-era
protocol (today's desktop clients) straight down each connected session.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

import anyio
import anyio.to_thread
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import (
    ResourceNotFoundError,
    ToolError,
    UnexpectedToolError,
)
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    PromptMessage,
    TextContent,
    ToolAnnotations,
)
from mcp_types import Prompt as MCPPrompt
from mcp_types import Resource as MCPResource
from mcp_types import ResourceTemplate as MCPResourceTemplate
from mcp_types import Tool as MCPTool
from pydantic import ValidationError
from pydantic.networks import AnyUrl

from skilldeck import __version__
from skilldeck.errors import SkilldeckError
from skilldeck.mcp.arguments import (
    Limit,
    Query,
    ResourcePath,
    ScriptInput,
    SkillArgs,
    SkillName,
    argument_error,
)
from skilldeck.mcp.catalog import (
    LOAD_SKILL_INTRO,
    list_skills_payload,
    resource_text,
    skill_prompt,
    skill_resources,
)
from skilldeck.mcp.changes import ListChangedNotifier, poll_for_changes
from skilldeck.mcp.stdio import stdio_transport
from skilldeck.skills.execution import (
    LoadedSkill,
    ScriptRunner,
    load_skill_for_use,
    render_available_skills,
)
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.registry import SkillRegistry

log = logging.getLogger(__name__)
T = TypeVar("T")

SCRIPTS_DISABLED = (
    "run_skill_script is disabled on this server. Start it with `skilldeck mcp serve "
    "--allow-scripts` or set `[mcp] allow_scripts = true` in the skilldeck config."
)
INSTRUCTIONS = (
    "This server provides Agent Skills: folders of expert instructions and scripts. "
    "Before a task that matches a skill, call load_skill with its name and follow the "
    "instructions it returns; read the files they mention with read_skill_resource. "
    "list_skills (with a query) finds skills by topic."
)


class SkillMCPServer(MCPServer[dict[str, Any]]):
    """``MCPServer`` whose tools, resources and prompts come from a skill registry."""

    def __init__(
        self,
        registry: SkillRegistry,
        *,
        allow_scripts: bool | None = None,
        poll_interval: float = 1.0,
        name: str = "skilldeck",
    ) -> None:
        self.registry = registry
        settings = registry.settings
        self.allow_scripts = settings.mcp.allow_scripts if allow_scripts is None else allow_scripts
        self.poll_interval = poll_interval
        self._registry_lock = anyio.Lock()
        #: list-changed notifications to clients of either protocol era
        self.notifier = ListChangedNotifier()
        super().__init__(
            name,
            version=__version__,
            instructions=INSTRUCTIONS,
            lifespan=_lifespan,
            subscriptions=self.notifier.bus,
            log_level="WARNING",
        )
        self.notifier.attach(self)
        self._add_tools()

    # ---- wiring ----------------------------------------------------------------------

    def _add_tools(self) -> None:
        read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
        self.add_tool(self.list_skills, annotations=read_only, structured_output=False)
        self.add_tool(self.load_skill, annotations=read_only, structured_output=False)
        self.add_tool(self.read_skill_resource, annotations=read_only, structured_output=False)
        if self.allow_scripts:
            self.add_tool(
                self.run_skill_script,
                annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True),
                structured_output=False,
            )

    # ---- registry access -------------------------------------------------------------

    async def _off_loop(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` in a worker thread, never alongside a refresh of the registry.

        Scanning a large catalog, building the search index or walking skill folders
        can take seconds; doing it on the event loop would stall every connection.
        """
        async with self._registry_lock:
            return await anyio.to_thread.run_sync(fn, *args)

    def _load(self, skill: Skill, args: str | None) -> LoadedSkill:
        """The one load operation (in a worker thread). The server has no permission
        gate, so a body with dynamic context is refused with the reason, never run."""
        settings = self.registry.settings
        return anyio.run(
            partial(
                load_skill_for_use,
                skill,
                arguments=args,
                session_id="mcp",
                workspace=settings.workspace,
                gate=None,
                run_command=None,
                dynamic=settings.skills.dynamic_context,
                where="the MCP server",
            )
        )

    def _skill(self, name: str) -> Skill:
        try:
            skill = self.registry.get(name)
        except SkilldeckError as e:
            raise ToolError(str(e)) from e
        why = self.registry.why_unavailable(skill)
        if why:
            raise ToolError(f"Skill {name!r} is unavailable here: {why}")
        return skill

    # ---- tools -----------------------------------------------------------------------

    async def list_skills(self, query: Query = None, limit: Limit = 50) -> str:
        """List the available skills (name, description, version) as JSON. With a
        `query`, the skills most relevant to it come first, best first."""

        def payload() -> str:
            data = list_skills_payload(self.registry, query=query, limit=max(1, min(limit, 500)))
            return json.dumps(data, ensure_ascii=False, indent=2)

        return await self._off_loop(payload)

    async def load_skill(self, name: SkillName, args: SkillArgs = None) -> str:
        """Load a skill's instructions (its SKILL.md body with `args` substituted for
        $ARGUMENTS) and the list of its files."""

        def level2() -> str:
            loaded = self._load(self._skill(name), args)
            if not loaded.ok:
                raise ToolError(loaded.error or f"Skill {name!r} was not loaded.")
            return loaded.text

        return await self._off_loop(level2)

    async def read_skill_resource(self, name: SkillName, path: ResourcePath) -> str:
        """Read one file of a skill, `path` relative to the skill folder (e.g.
        references/guide.md). Paths outside the skill folder are refused."""

        def read() -> str:
            try:
                return resource_text(self._skill(name), path)
            except SkilldeckError as e:
                raise ToolError(str(e)) from e

        return await self._off_loop(read)

    async def run_skill_script(self, name: SkillName, input: ScriptInput = None) -> str:
        """Run a script skill's entry point with `input` (JSON) and return its JSON
        result. Runs sandboxed, with a timeout and a scrubbed environment."""
        if not self.allow_scripts:
            raise ToolError(SCRIPTS_DISABLED)
        skill = await self._off_loop(self._skill, name)
        runner = ScriptRunner(self.registry.settings, session_id="mcp")
        try:
            result = await runner.run(skill, input)
        except SkilldeckError as e:
            raise ToolError(str(e)) from e
        if not result.ok:
            raise ToolError(result.render())
        return result.render()

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        if name == "run_skill_script" and not self.allow_scripts:
            raise ToolError(SCRIPTS_DISABLED)
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            names = ", ".join(t.name for t in self._tool_manager.list_tools())
            raise ToolError(f"Unknown tool {name!r}; this server's tools are: {names}.")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            # pydantic's multi-line report on bad arguments, said in one sentence; a
            # crash in the tool's body (UnexpectedToolError, a ValidationError of its
            # own or not) goes on to the SDK, which logs it and tells the client less
            if isinstance(e.__cause__, ValidationError) and not isinstance(e, UnexpectedToolError):
                raise ToolError(argument_error(name, tool.parameters, e.__cause__)) from e.__cause__
            raise

    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        catalog = await self._off_loop(
            lambda: render_available_skills(
                self.registry.usable(), budget=self.registry.settings.skills.prompt_budget
            )
        )
        return [
            t.model_copy(update={"description": f"{LOAD_SKILL_INTRO}\n\n{catalog}"})
            if t.name == "load_skill"
            else t
            for t in tools
        ]

    # ---- resources -------------------------------------------------------------------

    async def list_resources(self) -> list[MCPResource]:
        return await self._off_loop(lambda: skill_resources(self.registry.usable()))

    async def list_resource_templates(self) -> list[MCPResourceTemplate]:
        return [
            MCPResourceTemplate(
                uri_template="skill://{name}/{path}",
                name="skill-file",
                description="A file of a skill: SKILL.md or a path relative to its folder.",
            )
        ]

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[Any, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        parts = urlsplit(str(uri))
        name, path = unquote(parts.netloc), unquote(parts.path).lstrip("/")
        if parts.scheme != "skill" or not name or not path:
            raise ResourceNotFoundError(
                f"Unknown resource {uri}; skill resources look like skill://<name>/SKILL.md."
            )

        def read() -> str:
            skill = self.registry.find(name)
            if skill is None:
                raise ResourceNotFoundError(
                    f"No skill named {name!r} on this server; resources/list shows its skills."
                )
            try:
                return resource_text(skill, path)
            except SkilldeckError as e:
                # the client's mistake (no such file, a path out of the skill): -32602,
                # not the -32603 internal error the SDK gives a plain ResourceError
                raise ResourceNotFoundError(str(e)) from e

        text = await self._off_loop(read)
        mime = "text/markdown" if path.endswith(".md") else "text/plain"
        return [ReadResourceContents(content=text, mime_type=mime)]

    # ---- prompts ---------------------------------------------------------------------

    def _prompt_skills(self) -> list[Skill]:
        return [s for s in self.registry.usable() if s.metadata.user_invocable]

    async def list_prompts(self) -> list[MCPPrompt]:
        return [skill_prompt(s) for s in await self._off_loop(self._prompt_skills)]

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        context: Context[Any, Any] | None = None,
    ) -> GetPromptResult | InputRequiredResult:
        args = (arguments or {}).get("arguments")

        def render() -> tuple[Skill, LoadedSkill] | None:
            skill = next((s for s in self._prompt_skills() if s.name == name), None)
            if skill is None:
                return None
            return skill, self._load(skill, str(args) if args is not None else None)

        rendered = await self._off_loop(render)
        if rendered is None:
            raise MCPError(INVALID_PARAMS, f"No user-invocable skill named {name!r}.")
        skill, loaded = rendered
        if not loaded.ok:
            raise MCPError(INVALID_PARAMS, loaded.error or f"Skill {name!r} was not loaded.")
        text = loaded.text
        return GetPromptResult(
            description=skill.description,
            messages=[PromptMessage(role="user", content=TextContent(text=text))],
        )

    # ---- transport -------------------------------------------------------------------

    async def run_stdio_async(self) -> None:
        """Serve on stdin/stdout, as the SDK does, but a line that is not a JSON-RPC
        message is answered (-32700 / -32600) instead of dropped (:mod:`.stdio`)."""
        lowlevel = self._lowlevel_server
        async with stdio_transport() as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    # ---- following the disk ----------------------------------------------------------

    async def check_for_changes(self) -> bool:
        """Re-scan once; on any change notify every client. Returns whether it did."""
        result = await self._off_loop(self.registry.refresh)
        if not result.any:
            return False
        log.info("skills changed: +%s ~%s -%s", result.added, result.changed, result.removed)
        await self.notify_catalog_changed()
        return True

    async def notify_catalog_changed(self) -> None:
        await self.notifier.notify()

    async def watch(self) -> None:
        """Poll the registry forever (run inside the server's lifespan), with the
        back-off of :func:`~skilldeck.mcp.changes.poll_for_changes`."""
        await poll_for_changes(self.check_for_changes, self.poll_interval)


@asynccontextmanager
async def _lifespan(server: MCPServer[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    assert isinstance(server, SkillMCPServer)
    async with anyio.create_task_group() as tg:
        if server.poll_interval > 0:
            tg.start_soon(server.watch)
        try:
            yield {}
        finally:
            tg.cancel_scope.cancel()


def build_server(
    registry: SkillRegistry, *, allow_scripts: bool | None = None, poll_interval: float = 1.0
) -> SkillMCPServer:
    """The skilldeck MCP server for ``registry`` (``allow_scripts`` None = from config)."""
    return SkillMCPServer(registry, allow_scripts=allow_scripts, poll_interval=poll_interval)
