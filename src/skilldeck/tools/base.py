"""What a tool is, what it gets, what it returns, and the registry that holds them.

A tool is one object: a name (Claude Code's, so skills written for it work), a
description, a pydantic input model (its JSON Schema is what the model sees) and an
async ``run``. Model mistakes — bad arguments, missing files — come back as
``ToolResult(is_error=True)`` the model can act on; only skilldeck's own bugs raise.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ValidationError

from skilldeck.errors import SkilldeckError, ToolError
from skilldeck.llm.messages import RAW_ARGUMENTS_KEY, LLMClient, ToolSpec

if TYPE_CHECKING:
    from skilldeck.config import Settings
    from skilldeck.skills.registry import SkillRegistry


@dataclass
class PauseRequest:
    """A tool asks the loop to stop and wait for a human (AskUserQuestion, an ``ask``
    permission in a non-interactive run). ``payload`` is shown and stored."""

    kind: str  # "ask_user" | "permission"
    payload: dict[str, Any]


@dataclass
class ToolResult:
    content: str
    is_error: bool = False
    #: structured result for programmatic callers (not shown to the model)
    data: Any = None
    pause: PauseRequest | None = None

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(content=message, is_error=True)


@dataclass(frozen=True)
class PathVerdict:
    """What the permission system says about one tool touching one (resolved) path:
    ``allow``, ``deny`` or ``ask`` (``reason`` names the rule, so a search whose own
    call was approved after an ``ask`` can tell the same rule from a narrower one)."""

    kind: Literal["allow", "deny", "ask"]
    reason: str = ""


#: ``(tool name, resolved path) -> PathVerdict``: set by the agent from its gate, so
#: Glob and Grep can leave out what the session's rules forbid while they walk
PathFilter = Callable[[str, Path], PathVerdict]


@dataclass
class ToolServices:
    """The collaborators a session's tools may call, by name and type.

    One object per session (the agent builds it; nothing is shared between
    sessions). Every field is optional: a tool falls back to its default when its
    collaborator is absent. The upper layers' types (the agent's gate, its event
    sink) are duck-typed here because tools/ never imports agent/.

    ``get``/``[]``/``[]=`` keep the old ``services["name"]`` spelling working; names
    that are not fields go to ``extra`` (a library's own collaborators).
    """

    #: one-shot completions for WebFetch's prompt and code skills (``LLMClient``)
    llm: LLMClient | None = None
    #: AskUserQuestion: questions -> the user's answer (absent: the session pauses)
    ask_user: Callable[[list[dict[str, Any]]], Awaitable[str]] | None = None
    #: the running turn's event sink (sub-agents' events reach the parent through it)
    emit_event: Callable[[Any], None] | None = None
    #: the agent's gate (``check(call, ctx)`` and ``read_only``): the Skill tool asks it
    tool_gate: Any = None
    #: ``(tool, input) -> reason | None`` (may be awaitable); wins over ``tool_gate``
    permission_check: Callable[[str, dict[str, Any]], Any] | None = None
    #: how a code skill calls tools (default: the agent's tools behind its gate)
    tool_dispatcher: Any = None
    #: the session may only read (plan mode) even if its gate does not say so
    read_only: bool = False
    #: httpx2 transport for WebFetch (tests swap in a mock)
    http_transport: Any = None
    #: WebSearch backend (``search(query, max_results=...)``; default: ddgs)
    web_search: Any = None
    #: anything else a library wires in, by name
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, value: ToolServices | Mapping[str, Any] | None) -> ToolServices:
        """A fresh object from another one or from the old dict form."""
        if isinstance(value, ToolServices):
            return replace(value, extra=dict(value.extra))
        made = cls()
        for key, item in (value or {}).items():
            made[key] = item
        return made

    def with_(self, **changes: Any) -> ToolServices:
        """A copy with ``changes`` (field names or extra names)."""
        made = ToolServices.of(self)
        for key, item in changes.items():
            made[key] = item
        return made

    def overlay(self, other: ToolServices | Mapping[str, Any] | None) -> ToolServices:
        """A copy where what ``other`` sets (not None) wins."""
        made = ToolServices.of(self)
        theirs = ToolServices.of(other)
        for f in fields(ToolServices):
            value = getattr(theirs, f.name)
            if f.name == "extra":
                made.extra.update(value)
            elif value is not None and value is not False:
                setattr(made, f.name, value)
        return made

    # ---- the old dict spelling ------------------------------------------------------

    def get(self, key: str, default: Any = None) -> Any:
        if key in _SERVICE_FIELDS:
            value = getattr(self, key)
            return default if value is None else value
        return self.extra.get(key, default)

    def __getitem__(self, key: str) -> Any:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        if key in _SERVICE_FIELDS:
            setattr(self, key, value)
        else:
            self.extra[key] = value

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        value = self.get(key)
        return value is not None and value is not False  # an unset flag is absent

    def keys(self) -> list[str]:
        """The names set (so ``{**services}`` still gives the old dict)."""
        return [k for k in (*sorted(_SERVICE_FIELDS), *self.extra) if k in self]


_SERVICE_FIELDS = frozenset(f.name for f in fields(ToolServices)) - {"extra"}


@dataclass
class ToolContext:
    """Everything a tool may touch. One per session (shared by its tool calls)."""

    session_id: str
    workspace: Path
    settings: Settings
    #: directories file tools may touch; defaults to the workspace alone
    roots: list[Path] = field(default_factory=list)
    #: extra directories file tools may read but never write (e.g. skill folders
    #: outside the workspace); the folders of ``skills`` are readable as well
    read_roots: list[Path] = field(default_factory=list)
    skills: SkillRegistry | None = None
    agent_name: str = "main"
    #: per-session mutable state: Bash cwd, todos, files read…
    state: dict[str, Any] = field(default_factory=dict)
    #: injected collaborators (typed; a dict in the old form is converted)
    services: ToolServices = field(default_factory=ToolServices)
    #: the session's permission rules as a question about one path (None: no rules);
    #: file tools ask it about the resolved path, Glob/Grep about every entry walked
    path_filter: PathFilter | None = None
    #: ``time.monotonic()`` by which a tool must have stopped (the run's
    #: ``agent.max_wall_seconds``); None: only the per-call budget applies
    deadline: float | None = None
    #: seconds one Glob/Grep call may take at most (also capped by ``deadline``)
    call_budget: float = 30.0

    def __post_init__(self) -> None:
        if not self.roots:
            self.roots = [self.workspace]
        if not isinstance(self.services, ToolServices):  # the old dict form
            self.services = ToolServices.of(self.services)


class Tool(ABC):
    """Base class. Subclasses set ``name``, ``description``, ``Input`` and ``run``."""

    name: ClassVar[str]
    description: ClassVar[str]
    Input: ClassVar[type[BaseModel]]
    #: tools that never change anything (allowed in ``plan`` mode, by explore agents)
    read_only: ClassVar[bool] = False

    def input_schema(self) -> dict[str, Any]:
        schema = self.Input.model_json_schema()
        schema.pop("title", None)
        return schema

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name, description=self.description, input_schema=self.input_schema()
        )

    @abstractmethod
    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        """Do the work; ``input`` is an instance of ``Input``."""

    async def call(self, raw_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate ``raw_input`` and run; invalid input and ToolError become error results."""
        if set(raw_input) == {RAW_ARGUMENTS_KEY}:  # the model's arguments were not JSON
            return ToolResult.error(
                f"Invalid input for {self.name}: the arguments are not a JSON object "
                f"({str(raw_input[RAW_ARGUMENTS_KEY])[:200]!r}). Call the tool again with "
                "valid JSON arguments."
            )
        try:
            parsed = self.Input.model_validate(raw_input)
        except ValidationError as e:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}"
                for err in e.errors()
            )
            return ToolResult.error(f"Invalid input for {self.name}: {problems}")
        try:
            return await self.run(parsed, ctx)
        except ToolError as e:
            return ToolResult.error(str(e))
        except SkilldeckError as e:
            return ToolResult.error(f"{type(e).__name__}: {e}")


class ToolRegistry:
    """Holds tools by name; exports them for OpenAI and Anthropic; dispatches calls."""

    def __init__(self, tools: list[Tool] | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        self._aliases: dict[str, str] = {}
        for tool in tools or []:
            self.register(tool)

    def register(self, tool: Tool, *, aliases: tuple[str, ...] = ()) -> None:
        self._tools[tool.name] = tool
        for alias in aliases:
            self._aliases[alias] = tool.name

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)
        self._aliases = {a: t for a, t in self._aliases.items() if t != name}

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name) or self._tools.get(self._aliases.get(name, ""))

    def names(self) -> list[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __len__(self) -> int:
        return len(self._tools)

    def subset(self, names: set[str] | list[str]) -> ToolRegistry:
        """A registry holding only ``names`` (aliases follow their tool)."""
        keep = set(names)
        sub = ToolRegistry([t for n, t in self._tools.items() if n in keep])
        sub._aliases = {a: t for a, t in self._aliases.items() if t in keep}
        return sub

    def specs(self) -> list[ToolSpec]:
        return [t.spec() for t in self._tools.values()]

    def to_openai(self) -> list[dict[str, Any]]:
        """Tools in OpenAI function-calling form (chat completions ``tools=``)."""
        return [
            {
                "type": "function",
                "function": {
                    "name": s.name,
                    "description": s.description,
                    "parameters": s.input_schema,
                },
            }
            for s in self.specs()
        ]

    def to_anthropic(self) -> list[dict[str, Any]]:
        """Tools in Anthropic messages form (``tools=``)."""
        return [
            {"name": s.name, "description": s.description, "input_schema": s.input_schema}
            for s in self.specs()
        ]

    async def dispatch(self, name: str, raw_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        tool = self.get(name)
        if tool is None:
            return ToolResult.error(
                f"Unknown tool {name!r}. Available tools: {', '.join(sorted(self._tools))}."
            )
        return await tool.call(raw_input, ctx)
