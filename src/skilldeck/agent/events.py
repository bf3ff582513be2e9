"""Typed events: every step of a run, for renderers, the session store and callers.

``--json`` prints ``event.model_dump_json()`` one per line; the rich renderer
switches on ``type``. Events of a sub-agent carry ``is_sub_agent=True`` and its
``task_id``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

from skilldeck.llm.messages import Usage


class _Event(BaseModel):
    is_sub_agent: bool = False
    task_id: str | None = None

    def to_json(self) -> str:
        return self.model_dump_json(exclude_defaults=False)


class TextEvent(_Event):
    type: Literal["text"] = "text"
    text: str


class TextDeltaEvent(_Event):
    type: Literal["text_delta"] = "text_delta"
    text: str


class ModelCallEvent(_Event):
    type: Literal["model_call"] = "model_call"
    turn: int
    model: str


class ModelRetryEvent(_Event):
    """A model call failed and is retried after ``delay`` seconds (``llm/retry.py``):
    attempt ``attempt`` of ``attempts`` failed with ``reason``."""

    type: Literal["model_retry"] = "model_retry"
    model: str
    attempt: int
    attempts: int
    delay: float
    reason: str


class ToolCallEvent(_Event):
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    input: dict[str, Any]


class ToolResultEvent(_Event):
    type: Literal["tool_result"] = "tool_result"
    id: str
    name: str
    is_error: bool
    content: str


class AskUserEvent(_Event):
    type: Literal["ask_user"] = "ask_user"
    questions: list[dict[str, Any]]


class PermissionRequestEvent(_Event):
    type: Literal["permission_request"] = "permission_request"
    tool: str
    input: dict[str, Any]
    reason: str = ""


class UsageEvent(_Event):
    type: Literal["usage"] = "usage"
    turn: int
    usage: Usage


class ContextTrimmedEvent(_Event):
    type: Literal["context_trimmed"] = "context_trimmed"
    omitted: int


class SkillHintEvent(_Event):
    type: Literal["skill_hint"] = "skill_hint"
    skills: list[str]


class SubagentStartEvent(_Event):
    type: Literal["subagent_start"] = "subagent_start"
    subagent_type: str
    description: str = ""
    background: bool = False


class SubagentEndEvent(_Event):
    type: Literal["subagent_end"] = "subagent_end"
    subagent_type: str
    status: str
    result: str = ""


class WarningEvent(_Event):
    type: Literal["warning"] = "warning"
    message: str


class LoopDetectedEvent(_Event):
    """The model repeated a tool call with the same arguments and the same result
    (``agent/loopguard.py``): ``stop`` when the run ends ``stuck`` because of it."""

    type: Literal["loop_detected"] = "loop_detected"
    tool: str
    input: dict[str, Any]
    count: int
    stop: bool = False


class ToolCallRecoveredEvent(_Event):
    """A reply whose text was only a tool call, taken as that call (``llm/textcalls.py``)."""

    type: Literal["tool_call_recovered"] = "tool_call_recovered"
    id: str
    name: str
    text: str


class DoneEvent(_Event):
    type: Literal["done"] = "done"
    session_id: str
    #: completed | paused | max_turns | stuck | error | limit | cancelled
    status: str
    reason: str | None = None
    text: str = ""


Event = Annotated[
    TextEvent
    | TextDeltaEvent
    | ModelCallEvent
    | ModelRetryEvent
    | ToolCallEvent
    | ToolResultEvent
    | AskUserEvent
    | PermissionRequestEvent
    | UsageEvent
    | ContextTrimmedEvent
    | SkillHintEvent
    | SubagentStartEvent
    | SubagentEndEvent
    | WarningEvent
    | LoopDetectedEvent
    | ToolCallRecoveredEvent
    | DoneEvent,
    Field(discriminator="type"),
]
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
