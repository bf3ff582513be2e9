"""Rendering agent events: rich for people, one JSON object per line for programs.

Both renderers take the same typed events (``agent/events.py``); neither holds any
logic about the run. :class:`RichRenderer` shows a spinner while the model thinks,
streams text as it arrives, and draws each tool call as a small card with its
result underneath. :class:`JsonRenderer` prints ``event.model_dump_json()`` per line
(text deltas left out: the whole ``text`` event follows them).
"""

from __future__ import annotations

import json
import sys
from typing import IO, Any, Protocol

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel
from rich.status import Status
from rich.text import Text

from skilldeck.agent.events import (
    AskUserEvent,
    ContextTrimmedEvent,
    DoneEvent,
    Event,
    LoopDetectedEvent,
    ModelCallEvent,
    ModelRetryEvent,
    PermissionRequestEvent,
    SkillHintEvent,
    SubagentEndEvent,
    SubagentStartEvent,
    TextDeltaEvent,
    TextEvent,
    ToolCallEvent,
    ToolCallRecoveredEvent,
    ToolResultEvent,
    WarningEvent,
)
from skilldeck.agent.pending import Pending, resume_command
from skilldeck.agent.permissions import Approval, ApprovalRequest
from skilldeck.cli.termtext import printable

#: exit codes of ``run``/``resume``: paused is a normal stop (the user resumes it);
#: ``stuck`` (the model repeated itself) is stopped by a limit, like ``max_turns``
EXIT_CODES = {
    "completed": 0,
    "paused": 0,
    "error": 1,
    "max_turns": 3,
    "stuck": 3,
    "limit": 3,
    "cancelled": 130,
}
#: statuses that stop a run short of its task (shown in yellow: resumable)
_STOPPED = {"paused", "max_turns", "stuck", "limit"}
#: the argument shown on a tool card, by tool
_KEY_ARGS = (
    "file_path",
    "command",
    "pattern",
    "path",
    "url",
    "query",
    "skill",
    "description",
    "key",
)
_RESULT_LINES = 6


def exit_code(status: str) -> int:
    return EXIT_CODES.get(status, 1)


class Renderer(Protocol):
    def handle(self, event: Event) -> None: ...

    def close(self) -> None: ...


class JsonRenderer:
    """One JSON object per line on ``out``; flushes every line for pipes."""

    def __init__(self, out: IO[str] | None = None) -> None:
        self.out = out or sys.stdout

    def handle(self, event: Event) -> None:
        if isinstance(event, TextDeltaEvent):
            return
        self.out.write(event.to_json() + "\n")
        self.out.flush()

    def close(self) -> None:
        self.out.flush()


def summarize_input(name: str, tool_input: dict[str, Any], *, limit: int = 120) -> str:
    """The one argument that says what a call does (``file_path``, ``command``…)."""
    for key in _KEY_ARGS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            text = value.splitlines()[0] if value.strip() else value
            return _clip(text, limit)
    return _clip(json.dumps(tool_input, ensure_ascii=False, default=str), limit)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class RichRenderer:
    """Human output: spinner on model calls, streamed text, tool cards."""

    def __init__(
        self,
        console: Console | None = None,
        *,
        show_usage: bool = False,
        error_line: bool = True,
        show_retries: bool = False,
    ) -> None:
        self.console = console or Console()
        self.show_usage = show_usage
        #: print ``model_retry`` events; off by default: the CLI already wrote each one
        #: to stderr when it happened (``retry_reporter``), and the stream's copy comes
        #: after the call it retried — printing it here would show every retry twice
        self.show_retries = show_retries
        #: print ``[error: reason]`` at the end; off where the caller prints the error
        #: itself (``run`` writes it to stderr, once)
        self.error_line = error_line
        self._status: Status | None = None
        self._streaming = False

    def handle(self, event: Event) -> None:
        if isinstance(event, ModelRetryEvent) and not self.show_retries:
            return
        event = printable_event(event)
        if not isinstance(event, ModelCallEvent):
            self._stop_spinner()
        prefix = "  ↳ " if event.is_sub_agent else ""
        if isinstance(event, ModelCallEvent):
            self._start_spinner(f"{prefix}Thinking… (turn {event.turn})")
        elif isinstance(event, TextDeltaEvent):
            self._streaming = True
            self.console.print(event.text, end="", markup=False, highlight=False)
        elif isinstance(event, TextEvent):
            self._text(event)
        elif isinstance(event, ToolCallEvent):
            self._tool_call(event, prefix)
        elif isinstance(event, ToolResultEvent):
            self._tool_result(event, prefix)
        else:
            self._other(event, prefix)

    def close(self) -> None:
        self._stop_spinner()
        if self._streaming:
            self.console.print()
            self._streaming = False

    # ---- pieces -------------------------------------------------------------------

    def _start_spinner(self, label: str) -> None:
        if self.console.is_terminal:
            self._status = self.console.status(label, spinner="dots")
            self._status.start()

    def _stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def _text(self, event: TextEvent) -> None:
        if self._streaming:  # already shown delta by delta
            self.console.print()
            self._streaming = False
            return
        self.console.print(Markdown(event.text))

    def _tool_call(self, event: ToolCallEvent, prefix: str) -> None:
        title = Text(f"{prefix}⏺ {event.name}", style="bold cyan")
        body = Text(summarize_input(event.name, event.input), style="white")
        self.console.print(Panel(body, title=title, title_align="left", expand=False))

    def _tool_result(self, event: ToolResultEvent, prefix: str) -> None:
        lines = event.content.splitlines() or [""]
        shown = lines[:_RESULT_LINES]
        if len(lines) > _RESULT_LINES:
            shown.append(f"… ({len(lines) - _RESULT_LINES} more lines)")
        style = "red" if event.is_error else "dim"
        label = "✗" if event.is_error else "⎿"
        text = Text(f"{prefix}  {label} ", style=style)
        text.append("\n     ".join(_clip(line, 200) for line in shown), style=style)
        self.console.print(text)

    def _other(self, event: Event, prefix: str) -> None:
        if isinstance(event, AskUserEvent):
            self.console.print(
                Panel(
                    questions_text(event.questions),
                    title="Question",
                    title_align="left",
                    border_style="yellow",
                )
            )
        elif isinstance(event, PermissionRequestEvent):
            self.console.print(
                Text(f"{prefix}? approval asked: {event.reason or event.tool}", style="yellow")
            )
        elif isinstance(event, SkillHintEvent):
            self.console.print(Text(f"hint: skills {', '.join(event.skills)}", style="dim"))
        elif isinstance(event, ContextTrimmedEvent):
            self.console.print(
                Text(f"context trimmed: {event.omitted} older messages hidden", style="dim")
            )
        elif isinstance(event, WarningEvent):
            self.console.print(Text(f"warning: {event.message}", style="yellow"))
        elif isinstance(event, LoopDetectedEvent | ToolCallRecoveredEvent):
            if isinstance(event, ToolCallRecoveredEvent) and self._streaming:
                self.console.print()  # the streamed text was the call: end its line
                self._streaming = False
            self.console.print(loop_line(event, prefix))
        elif isinstance(event, ModelRetryEvent):
            self.console.print(Text(prefix + retry_line(event), style="yellow"))
        elif isinstance(event, SubagentStartEvent):
            self.console.print(
                Text(f"↳ sub-agent ({event.subagent_type}) {event.description}", style="magenta")
            )
        elif isinstance(event, SubagentEndEvent):
            self.console.print(
                Text(f"↳ sub-agent ({event.subagent_type}) {event.status}", style="magenta")
            )
        elif isinstance(event, DoneEvent) and not event.is_sub_agent:
            self._done(event)

    def _done(self, event: DoneEvent) -> None:
        if event.status == "completed" or (event.status == "error" and not self.error_line):
            return
        style = "yellow" if event.status in _STOPPED else "red"
        reason = f": {event.reason}" if event.reason else ""
        self.console.print(Text(f"[{event.status}{reason}]", style=style))
        if event.status == "stuck":  # resumable: say how
            self.console.print(
                Text(
                    f"Continue with `skilldeck resume {event.session_id}`, or give new "
                    f"directions with `skilldeck chat --session {event.session_id}`.",
                    style="dim",
                )
            )


def loop_line(event: LoopDetectedEvent | ToolCallRecoveredEvent, prefix: str = "") -> Text:
    """One line for the loop guard: a repeated call, or a tool call written as text."""
    if isinstance(event, ToolCallRecoveredEvent):
        return Text(f"{prefix}recovered a {event.name} call the model wrote as text", style="dim")
    what = f"{prefix}loop: {event.tool} {summarize_input(event.tool, event.input, limit=32)}"
    then = "run stopped (stuck)" if event.stop else "model told"
    return Text(f"{what} ×{event.count}, same result: {then}", style="yellow")


def retry_line(event: ModelRetryEvent) -> str:
    """One line for a retried model call (the CLI writes it to stderr)."""
    return (
        f"retry: {event.model} attempt {event.attempt + 1} of {event.attempts} in "
        f"{event.delay:.1f}s ({event.reason})"
    )


def printable_event(event: Event) -> Event:
    """``event`` with every string in it through :func:`printable` (newlines kept):
    model text, tool input and output, questions, warnings and sub-agent tasks can
    carry what a fetched page or a file told the model, and none of it may drive the
    terminal. One pass here covers every kind of event the renderer shows."""
    fields = type(event).model_fields
    updates = {
        name: _printable_value(value)
        for name in fields
        if isinstance(value := getattr(event, name), str | list | dict)
    }
    return event.model_copy(update=updates) if updates else event


def _printable_value(value: Any) -> Any:
    if isinstance(value, str):
        return printable(value, lines=True)
    if isinstance(value, list):
        return [_printable_value(v) for v in value]
    if isinstance(value, dict):
        return {printable(str(k)): _printable_value(v) for k, v in value.items()}
    return value


def questions_text(questions: list[dict[str, Any]]) -> Text:
    questions = _printable_value(questions)
    text = Text()
    for i, q in enumerate(questions, start=1):
        if i > 1:
            text.append("\n")
        text.append(f"{q.get('question', '')}\n", style="bold")
        for option in q.get("options", []):
            text.append(f"  • {option.get('label', '')}", style="cyan")
            if option.get("description"):
                text.append(f" — {option['description']}")
            text.append("\n")
        if q.get("multiSelect"):
            text.append("  (several may be chosen)\n", style="dim")
    return text


def paused_help(session_id: str, pending: dict[str, Any] | None) -> str:
    """What to type to continue a paused session."""
    parsed = Pending.from_dict(pending) if pending else None
    return f"Session {session_id} is paused. Continue with:\n  {resume_command(session_id, parsed)}"


APPROVAL_CHOICES = "[y] allow once  [a] allow always (this session)  [n] deny"


def approval_panel(request: ApprovalRequest) -> Panel:
    """What a human sees before approving a call: the tool, why it asks, the input."""
    preview = request.payload.get("preview") or summarize_input(
        request.call.name, request.call.input, limit=300
    )
    body = Text()
    body.append(printable(request.call.name), style="bold cyan")
    if request.reason:
        body.append(f"  ({printable(request.reason)})", style="dim")
    body.append("\n")
    body.append(printable(str(preview), lines=True))
    return Panel(body, title="Permission needed", title_align="left", border_style="yellow")


def approval_prompt(request: ApprovalRequest) -> str:
    preview = request.payload.get("preview") or summarize_input(
        request.call.name, request.call.input, limit=300
    )
    reason = f" ({printable(request.reason)})" if request.reason else ""
    return (
        f"Allow {printable(request.call.name)}{reason}?\n  {printable(str(preview))}\n"
        "[y] allow once  [a] allow always  [n] deny: "
    )


def parse_approval(answer: str) -> Approval:
    """``y``/``yes`` → allow once, ``a``/``always`` → always, anything else → deny."""
    word = answer.strip().lower()
    if word in {"y", "yes", "allow", "ok"}:
        return Approval.ALLOW
    if word in {"a", "always"}:
        return Approval.ALWAYS
    return Approval.DENY
