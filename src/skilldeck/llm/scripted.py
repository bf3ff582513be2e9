"""A deterministic model that plays a JSONL script of assistant turns.

This is the basis of every offline test and demo. Each non-blank, non-``#`` line of
the file is one assistant turn::

    {"text": "Let me write it.", "tool_calls": [{"id": "c1", "name": "Write",
     "input": {"file_path": "a.txt", "content": "hi"}}]}
    {"for": "summarise", "text": "sub-agent answer"}
    {"text": "Done."}

Keys: ``text``, ``tool_calls`` (each ``id`` optional, ``name``, ``input``), ``for``,
``usage`` (``{"input_tokens": .., "output_tokens": ..}``), ``error`` (raise a
``ModelError`` with that message, to script a failing model) and ``comment``.

Which line answers is derived from the conversation alone — never from in-memory
state — so a paused session resumed in another process continues at the right line:
the Nth assistant turn of a conversation plays the Nth line of the subsequence that
serves it. A ``for`` line serves only conversations whose first user message contains
its text; a conversation no ``for`` matches is served by the lines without one.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck._safefs import open_regular
from skilldeck.errors import (
    ModelConfigError,
    ModelError,
    ResourceAccessError,
    ScriptExhaustedError,
)
from skilldeck.llm.messages import (
    AssistantMessage,
    Message,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSpec,
    TurnComplete,
    Usage,
    UserMessage,
)
from skilldeck.llm.wire import estimate_usage

__all__ = ["ScriptLine", "ScriptedModel", "ScriptedRequest", "load_script"]

_KNOWN_KEYS = frozenset({"text", "tool_calls", "for", "usage", "error", "comment"})
_MARKER_RE = re.compile(r"^\[\d+ earlier messages? omitted\]")


@dataclass(frozen=True)
class ScriptLine:
    """One parsed assistant turn of a script; ``lineno`` is 1-based in the file."""

    lineno: int
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    for_: str | None = None
    usage: Usage | None = None
    error: str | None = None


@dataclass(frozen=True)
class ScriptedRequest:
    """What the scripted model was shown for one turn, and which line answered.

    The lists are snapshots; the message objects in them are shared with the caller.
    """

    messages: list[Message]
    tools: list[ToolSpec]
    lineno: int | None = None

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]


def load_script(path: Path) -> list[ScriptLine]:
    """Parse a script file; any problem is a ``ModelConfigError`` naming ``file:line``."""
    try:
        with open_regular(path) as fh:  # a FIFO in its place would hang a plain open
            raw_lines = fh.read().decode("utf-8").splitlines()
    except FileNotFoundError as e:
        raise ModelConfigError(
            f"Scripted model file not found: {path}. Use scripted:<path to a .jsonl file>."
        ) from e
    except ResourceAccessError as e:
        raise ModelConfigError(
            f"Cannot read scripted model file: {e} Use scripted:<path to a .jsonl file>."
        ) from e
    except OSError as e:
        raise ModelConfigError(
            f"Cannot read scripted model file {path}: {e.strerror or e}. "
            "Use scripted:<path to a .jsonl file>."
        ) from e
    except UnicodeDecodeError as e:
        raise ModelConfigError(f"Cannot read scripted model file {path}: {e}") from e
    lines: list[ScriptLine] = []
    counter = [0]  # tool calls without an id get call_<n>, n counted across the file
    for lineno, raw in enumerate(raw_lines, start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        lines.append(_parse_line(stripped, path=path, lineno=lineno, counter=counter))
    return lines


def _parse_line(raw: str, *, path: Path, lineno: int, counter: list[int]) -> ScriptLine:
    where = f"{path}:{lineno}"
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ModelConfigError(f"{where}: invalid JSON in script line ({e.msg}).") from e
    except RecursionError as e:
        raise ModelConfigError(f"{where}: invalid JSON in script line (nested too deeply).") from e
    if not isinstance(data, dict):
        raise ModelConfigError(f"{where}: each script line must be a JSON object.")
    unknown = sorted(set(data) - _KNOWN_KEYS)
    if unknown:
        raise ModelConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(sorted(_KNOWN_KEYS))}."
        )
    text = _optional_str(data, "text", where) or ""
    for_ = _optional_str(data, "for", where)
    error = _optional_str(data, "error", where)
    usage = None
    if "usage" in data:
        try:
            usage = Usage.model_validate(data["usage"])
        except ValueError as e:
            raise ModelConfigError(
                f'{where}: \'usage\' must be {{"input_tokens": int, "output_tokens": int}}.'
            ) from e
    calls = _parse_tool_calls(data.get("tool_calls"), where=where, counter=counter)
    return ScriptLine(lineno, text, calls, for_, usage, error)


def _optional_str(data: dict[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ModelConfigError(f"{where}: {key!r} must be a string.")
    return value


def _parse_tool_calls(raw: Any, *, where: str, counter: list[int]) -> tuple[ToolCall, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ModelConfigError(f"{where}: 'tool_calls' must be a list.")
    calls: list[ToolCall] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ModelConfigError(f"{where}: tool_calls[{i}] needs a string 'name'.")
        call_input = item.get("input", {})
        if not isinstance(call_input, dict):
            raise ModelConfigError(f"{where}: tool_calls[{i}].input must be a JSON object.")
        counter[0] += 1
        call_id = item.get("id") or f"call_{counter[0]}"
        if not isinstance(call_id, str):
            raise ModelConfigError(f"{where}: tool_calls[{i}].id must be a string.")
        calls.append(ToolCall(id=call_id, name=item["name"], input=call_input))
    return tuple(calls)


def _first_user_text(messages: Sequence[Message]) -> str:
    """The task: the first user message the user typed (skilldeck's own notes skipped)."""
    users = [m for m in messages if isinstance(m, UserMessage)]
    typed = [m for m in users if m.meta is None]
    chosen = typed or users
    return chosen[0].content if chosen else ""


def _is_trimmed(messages: Sequence[Message]) -> bool:
    return any(
        isinstance(m, UserMessage)
        and (m.meta == "context-marker" or bool(_MARKER_RE.match(m.content)))
        for m in messages
    )


def _same_turn(message: AssistantMessage, line: ScriptLine) -> bool:
    return message.text == line.text and [c.id for c in message.tool_calls] == [
        c.id for c in line.tool_calls
    ]


@dataclass
class ScriptedModel:
    """Plays ``path`` turn by turn; ``requests`` records every request in order."""

    path: Path
    name: str = ""
    requests: list[ScriptedRequest] = field(default_factory=list)
    lines: list[ScriptLine] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        if not self.name:
            self.name = f"scripted:{self.path}"
        if not self.lines and str(self.path) != "<inline>":
            self.lines = load_script(self.path)

    @classmethod
    def from_lines(
        cls, lines: Sequence[dict[str, Any] | str], *, name: str = "scripted:inline"
    ) -> ScriptedModel:
        """Build from in-memory turns (dicts or JSON strings), handy in tests."""
        counter = [0]
        parsed = [
            _parse_line(
                item if isinstance(item, str) else json.dumps(item),
                path=Path("<inline>"),
                lineno=i,
                counter=counter,
            )
            for i, item in enumerate(lines, start=1)
        ]
        return cls(path=Path("<inline>"), name=name, lines=parsed)

    def select_lines(self, messages: Sequence[Message]) -> tuple[list[ScriptLine], str | None]:
        """The lines serving this conversation and the ``for`` text that chose them."""
        task = _first_user_text(messages)
        matched = [ln for ln in self.lines if ln.for_ is not None and ln.for_ in task]
        if matched:
            fors = sorted({ln.for_ for ln in matched if ln.for_ is not None})
            return matched, ", ".join(repr(f) for f in fors)
        return [ln for ln in self.lines if ln.for_ is None], None

    def turn_index(self, messages: Sequence[Message], lines: Sequence[ScriptLine]) -> int:
        """0-based index of the line to play: assistant turns already in the history.

        When context trimming dropped earlier turns (a marker message is present), the
        count undercounts; the last assistant message is then located in the script.
        """
        assistants = [m for m in messages if isinstance(m, AssistantMessage)]
        count = len(assistants)
        if count and _is_trimmed(messages):
            last = assistants[-1]
            for idx in range(count - 1, len(lines)):
                if _same_turn(last, lines[idx]):
                    return idx + 1
        return count

    def _pick(self, messages: list[Message], tools: list[ToolSpec]) -> ScriptLine:
        lines, chosen_for = self.select_lines(messages)
        index = self.turn_index(messages, lines)
        record = ScriptedRequest(  # copies of the lists: the caller keeps appending to its own
            messages=list(messages),
            tools=list(tools),
            lineno=lines[index].lineno if index < len(lines) else None,
        )
        self.requests.append(record)
        if index >= len(lines):
            which = (
                f'the lines with "for" {chosen_for}' if chosen_for else 'the lines without "for"'
            )
            task = _first_user_text(messages)
            preview = task if len(task) <= 80 else task[:77] + "..."
            raise ScriptExhaustedError(
                f"Scripted model {self.path} ran out of lines: this conversation "
                f"(first user message {preview!r}) asked for assistant turn {index + 1}, "
                f"but {which} give only {len(lines)}. Add lines to the script."
            )
        line = lines[index]
        if line.error is not None:
            raise ModelError(f"{self.path}:{line.lineno}: scripted error: {line.error}")
        return line

    def _turn(
        self, line: ScriptLine, messages: list[Message], tools: list[ToolSpec]
    ) -> AssistantMessage:
        turn = AssistantMessage(
            text=line.text,
            tool_calls=[c.model_copy(deep=True) for c in line.tool_calls],
            usage=line.usage,
            model=self.name,
            stop_reason="tool_use" if line.tool_calls else "end_turn",
        )
        if turn.usage is None:
            turn.usage = estimate_usage(messages, tools, turn)
        return turn

    async def respond(self, messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage:
        return self._turn(self._pick(messages, tools), messages, tools)

    async def stream(
        self, messages: list[Message], tools: list[ToolSpec]
    ) -> AsyncIterator[StreamEvent]:
        """Text in word-sized deltas, then each tool call as one delta, then the turn."""
        turn = self._turn(self._pick(messages, tools), messages, tools)
        for chunk in re.findall(r"\S+\s*|\s+", turn.text):
            yield TextDelta(text=chunk)
        for index, call in enumerate(turn.tool_calls):
            yield ToolCallDelta(
                index=index, id=call.id, name=call.name, arguments_fragment=json.dumps(call.input)
            )
        yield TurnComplete(message=turn)
