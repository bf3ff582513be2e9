"""The tools as the compact profile shows them to small and local models: one short
sentence per tool and smaller input schemas.

A 1.5B model on a CPU pays for every token of the first request before it writes
one (the default tool schemas are ~20 KB of JSON). The full descriptions stay the
reference — they carry the limits and the edge cases a large model uses — and this
table says the same thing in the fewest words a small model still acts on. The
schemas keep every required property and the few optional ones a small model uses
(:data:`COMPACT_PROPERTIES`), with their types, enums and ``required`` (so a call
that validates against the short schema validates against the real one), and lose
titles, ``null`` alternatives, long enums (the ``Skill`` tool's list of names: the
skills block names the relevant ones) and all but the first sentence of each
description.
"""

from __future__ import annotations

import re
from typing import Any

from skilldeck.llm.messages import ToolSpec

__all__ = ["COMPACT_DESCRIPTIONS", "COMPACT_PROPERTIES", "compact_schema", "compact_spec"]

COMPACT_DESCRIPTIONS: dict[str, str] = {
    "Read": "Read a text file (numbered lines; offset/limit for long files).",
    "Write": "Write a whole file (creates folders). Read an existing file first.",
    "Edit": "Replace old_string with new_string in a file (exact, unique match).",
    "MultiEdit": "Several Edit replacements in one file, all or none.",
    "Glob": 'Find files by name pattern, e.g. "**/*.py".',
    "Grep": "Search file contents with a regular expression.",
    "Bash": "Run a bash command; returns its output.",
    "WebFetch": "Fetch a URL as Markdown.",
    "WebSearch": "Search the web: titles, URLs, snippets.",
    "TodoWrite": "Replace the task list (for work with several steps).",
    "AskUserQuestion": "Ask the user multiple-choice questions and wait.",
    "Skill": (
        'Load a skill\'s instructions: {"skill": "<name>"}, then follow them. '
        '{"query": "..."} searches skills. Never load the same skill twice.'
    ),
    "Memory": "Read or write your notes that persist between sessions.",
    "Task": "Start a sub-agent for a separate task; it returns its result.",
    "TaskOutput": "Get the result of a background sub-agent by its task_id.",
}

#: the optional properties the compact schema keeps, for tools with many (required
#: ones are always kept; a call using a left-out property still validates: the tool
#: checks calls against its full schema)
COMPACT_PROPERTIES: dict[str, tuple[str, ...]] = {
    "Grep": ("path", "glob", "output_mode", "-i"),
    "Bash": ("timeout",),
    "WebSearch": (),
    "Task": ("subagent_type", "skills"),
}

#: a property description is cut to its first sentence, at most this long
_DESCRIPTION_CHARS = 80
#: an enum longer than this is left out (its type stays)
_ENUM_VALUES = 16
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")


def compact_spec(spec: ToolSpec) -> ToolSpec:
    """``spec`` with its compact description (when the table has one) and schema."""
    schema = spec.input_schema
    if spec.name in COMPACT_PROPERTIES:
        schema = _only(schema, COMPACT_PROPERTIES[spec.name])
    return ToolSpec(
        name=spec.name,
        description=COMPACT_DESCRIPTIONS.get(spec.name, _first_sentence(spec.description, 200)),
        input_schema=compact_schema(schema),
    )


def _only(schema: dict[str, Any], optional: tuple[str, ...]) -> dict[str, Any]:
    """``schema`` with its required properties and the ``optional`` ones."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    keep = {*schema.get("required", ()), *optional}
    return {**schema, "properties": {k: v for k, v in properties.items() if k in keep}}


def compact_schema(schema: Any) -> Any:
    """A JSON Schema without titles, ``null`` alternatives or long descriptions."""
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" or (key == "default" and value is None):
            continue
        if key == "enum" and isinstance(value, list) and len(value) > _ENUM_VALUES:
            continue  # e.g. every skill name: the tool's error lists the close ones
        if key in _SCHEMA_MAPS and isinstance(value, dict):  # names → schemas
            out[key] = {name: compact_schema(sub) for name, sub in value.items()}
        elif key == "description" and isinstance(value, str):
            out[key] = _first_sentence(value, _DESCRIPTION_CHARS)
        else:
            out[key] = compact_schema(value)
    return _without_null(out)


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """``{"anyOf": [X, {"type": "null"}]}`` → X (the property is optional anyway)."""
    options = schema.get("anyOf")
    if not isinstance(options, list):
        return schema
    kept = [o for o in options if o != {"type": "null"}]
    if len(kept) != 1 or len(kept) == len(options) or not isinstance(kept[0], dict):
        return schema
    merged = {k: v for k, v in schema.items() if k != "anyOf"}
    merged.update(kept[0])
    return merged


def _first_sentence(text: str, limit: int) -> str:
    first = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"
