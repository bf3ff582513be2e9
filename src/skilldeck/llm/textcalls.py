"""Tool calls a model wrote as text: recognise them so the loop can run them.

Small local models served without a tool-call parser (or with a chat template the
server does not understand) often answer a tool request with the call *written out*
instead of a structured ``tool_calls`` entry — a 0.5B Qwen answered
``{ "name": "write", "arguments": {"file_path": "a.txt", "content": "hi"} }``, and the
run ended ``completed`` with nothing written. :func:`parse_text_tool_calls` turns such
a reply back into calls, and only when the *whole* text is calls:

* a JSON object naming a tool — ``{"name": …, "arguments": …}``,
  ``{"name": …, "parameters": …}``, ``{"tool": …, "parameters"|"arguments"|"input": …}``,
  ``{"function": {"name": …, "arguments": …}}`` (``arguments`` may be a JSON string) —
  or a JSON list of them, optionally in a ````` ```json ````` fence;
* one or more ``<tool_call>…</tool_call>`` blocks, as Qwen and Hermes templates emit.

A call counts only when it names a tool that was offered (matched exactly, else
case-insensitively: the 0.5B model wrote ``write`` for ``Write``) and its arguments
fit that tool's schema (every ``required`` key present; no key the schema does not
list when it lists ``properties``). Anything else — prose, a JSON answer that is not a
call, an unknown tool, one bad call among several — gives no calls: the text stays the
model's answer. The function is pure (no I/O, no agent imports); the loop decides when
to use it and records the recovery as an event.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from skilldeck.llm.messages import ToolSpec

__all__ = ["TextToolCall", "parse_text_tool_calls"]

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```$", re.DOTALL)
#: keys that name the tool, and keys that hold its arguments, in the shapes models emit
_NAME_KEYS = ("name", "tool", "tool_name", "function_name")
_ARG_KEYS = ("arguments", "parameters", "input", "args", "tool_input")


@dataclass(frozen=True)
class TextToolCall:
    """One recovered call: the offered tool's exact name and its arguments."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)


def parse_text_tool_calls(text: str, tools: Sequence[ToolSpec]) -> list[TextToolCall]:
    """The calls ``text`` consists of, or ``[]`` when it is anything but calls."""
    body = text.strip()
    if not body or not tools:
        return []
    chunks = _tagged_chunks(body)
    if chunks is None:
        fenced = _FENCE.match(body)
        chunks = [fenced.group(1).strip() if fenced else body]
    by_name = {t.name: t for t in tools}
    calls: list[TextToolCall] = []
    for chunk in chunks:
        values = _json_values(chunk)
        if not values:
            return []
        for value in values:
            call = _as_call(value, by_name)
            if call is None:
                return []
            calls.append(call)
    return calls


def _tagged_chunks(body: str) -> list[str] | None:
    """The insides of ``<tool_call>`` blocks when the text is only such blocks."""
    blocks = list(_TAGGED.finditer(body))
    if not blocks:
        return None
    if _TAGGED.sub("", body).strip():
        return []  # prose around the blocks: not only calls (the empty chunk list fails)
    return [m.group(1) for m in blocks]


def _json_values(chunk: str) -> list[Any]:
    """The chunk as JSON objects: one object, or a list of them; [] otherwise."""
    if not chunk.startswith(("{", "[")):
        return []
    try:
        value = json.loads(chunk)
    except ValueError:
        return []
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return value
    return []


def _as_call(value: dict[str, Any], tools: Mapping[str, ToolSpec]) -> TextToolCall | None:
    if isinstance(value.get("function"), dict) and len(value) <= 3:
        value = value["function"]  # OpenAI's {"type": "function", "function": {...}}
    name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    if name is None:
        return None
    args_key = next((k for k in _ARG_KEYS if k in value), None)
    if set(value) - {*_NAME_KEYS, *_ARG_KEYS, "id", "type"}:
        return None  # other keys: an answer that happens to hold a "name", not a call
    args = value.get(args_key, {}) if args_key else {}
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return None
    if not isinstance(args, dict):
        return None
    spec = _offered(name, tools)
    if spec is None or not _fits(args, spec.input_schema):
        return None
    return TextToolCall(spec.name, args)


def _offered(name: str, tools: Mapping[str, ToolSpec]) -> ToolSpec | None:
    if name in tools:
        return tools[name]
    folded = [spec for known, spec in tools.items() if known.lower() == name.lower()]
    return folded[0] if len(folded) == 1 else None


def _fits(args: dict[str, Any], schema: Mapping[str, Any]) -> bool:
    """Every required key present; no unknown key when the schema lists properties."""
    required = schema.get("required") or []
    if any(key not in args for key in required):
        return False
    properties = schema.get("properties")
    return not (isinstance(properties, dict) and properties and set(args) - set(properties))
