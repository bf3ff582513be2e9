"""Small tools and a builder shared by the agent-loop unit tests."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar

import anyio
from pydantic import BaseModel

from skilldeck.agent.assembly import AgentParts
from skilldeck.agent.loop import Agent
from skilldeck.agent.permissions import ApprovalRequest, GateDecision
from skilldeck.agent.recorder import Limits
from skilldeck.agent.store import SessionStore
from skilldeck.config import Settings, load_settings
from skilldeck.errors import ToolError
from skilldeck.llm.messages import ToolCall
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.tools.base import Tool, ToolContext, ToolRegistry, ToolResult


class EchoInput(BaseModel):
    text: str


class Echo(Tool):
    name: ClassVar[str] = "Echo"
    description: ClassVar[str] = "Echo text back."
    Input: ClassVar[type[BaseModel]] = EchoInput

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        self.calls.append(input.text)
        return ToolResult(content=f"echo: {input.text}")


class SleepInput(BaseModel):
    seconds: float
    label: str


class Sleep(Tool):
    """Sleeps, recording (label, start, end) so tests can see overlap."""

    name: ClassVar[str] = "Sleep"
    description: ClassVar[str] = "Sleep a while."
    Input: ClassVar[type[BaseModel]] = SleepInput

    def __init__(self) -> None:
        self.spans: list[tuple[str, float, float]] = []

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        start = time.monotonic()
        await anyio.sleep(input.seconds)
        self.spans.append((input.label, start, time.monotonic()))
        return ToolResult(content=f"slept {input.label}")


class NoInput(BaseModel):
    pass


class Boom(Tool):
    name: ClassVar[str] = "Boom"
    description: ClassVar[str] = "Always raises."
    Input: ClassVar[type[BaseModel]] = NoInput

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        raise RuntimeError("kaboom")


class Refuse(Tool):
    name: ClassVar[str] = "Refuse"
    description: ClassVar[str] = "Raises ToolError."
    Input: ClassVar[type[BaseModel]] = NoInput

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        raise ToolError("file not found: nope.txt")


class BigInput(BaseModel):
    size: int


class Big(Tool):
    name: ClassVar[str] = "Big"
    description: ClassVar[str] = "Returns a long output."
    Input: ClassVar[type[BaseModel]] = BigInput

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        body = "".join(f"line {i:06d}\n" for i in range(input.size // 12 + 1))
        return ToolResult(content=body[: input.size])


class ScriptedGate:
    """A gate answering from a name → decision table; remembers "always" answers."""

    def __init__(self, table: dict[str, GateDecision]) -> None:
        self.table = table
        self.checked: list[str] = []
        self.remembered: list[str] = []

    async def check(self, call: ToolCall, ctx: ToolContext) -> GateDecision:
        self.checked.append(call.name)
        if call.name in self.remembered:
            return GateDecision.allow()
        return self.table.get(call.name, GateDecision.allow())

    def remember(self, call: ToolCall, ctx: ToolContext) -> None:
        self.remembered.append(call.name)


class RecordingApprover:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Any:
        self.requests.append(request)
        return self.answer


def call(name: str, cid: str, **input: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "input": input}


def make_settings(tmp_path: Path, **agent: Any) -> Settings:
    return load_settings(workspace=tmp_path, agent=agent or None)


def make_agent(
    tmp_path: Path,
    lines: list[dict[str, Any]],
    tools: list[Tool],
    *,
    store: SessionStore | None = None,
    settings: Settings | None = None,
    max_turns: int = 25,
    **kwargs: Any,
) -> Agent:
    settings = settings or make_settings(tmp_path)
    parts = AgentParts(
        model=kwargs.pop("model", None) or ScriptedModel.from_lines(lines),
        tools=ToolRegistry(tools),
        settings=settings,
        store=store or SessionStore(tmp_path / "sessions.db"),
        system_prompt=kwargs.pop("system_prompt", "You are a test agent."),
        cwd=tmp_path,
        limits=kwargs.pop("limits", None) or Limits.from_settings(settings, max_turns=max_turns),
        **kwargs,
    )
    return Agent(parts)
