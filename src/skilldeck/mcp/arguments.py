"""The MCP server's tool arguments: their descriptions, and their errors in one sentence.

The SDK checks a call's arguments with pydantic and hands the model pydantic's own
report ("1 validation error for read_skill_resourceArguments / path / Field required
[type=missing, …] For further information visit …"). :func:`argument_error` says the
same in one sentence, built from the tool's input schema: the tool, the argument and
what is expected, e.g. ``read_skill_resource: argument 'path' is required (a string:
a file inside the skill …)``. The descriptions below are the schema's, so the model
reads the same words in ``tools/list`` and in the error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field, ValidationError
from pydantic_core import ErrorDetails

SkillName = Annotated[str, Field(description="the skill's name, as list_skills shows it")]
ResourcePath = Annotated[
    str,
    Field(description="a file inside the skill, relative to its folder, e.g. references/guide.md"),
]
SkillArgs = Annotated[
    str | None, Field(description="the text that replaces $ARGUMENTS in the instructions")
]
Query = Annotated[str | None, Field(description="words describing the task, to rank skills")]
Limit = Annotated[int, Field(description="how many skills at most (1 to 500)")]
ScriptInput = Annotated[
    dict[str, Any] | list[Any] | str | None,
    Field(description="the script's input as JSON"),
]

_KINDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "a JSON object",
    "array": "a JSON array",
}


def argument_error(tool: str, schema: Mapping[str, Any], error: ValidationError) -> str:
    """One sentence for the model: what is wrong with the arguments of ``tool``
    (``schema`` is its input schema), the first problem named, the others counted."""
    by_argument: dict[str, ErrorDetails] = {}
    for problem in error.errors():
        loc = problem.get("loc") or ("",)
        by_argument.setdefault(str(loc[0]), problem)
    if not by_argument:
        return f"{tool}: the arguments are not valid; see the tool's input schema."
    (argument, problem), *others = by_argument.items()
    properties = schema.get("properties") or {}
    expected = expectation(properties.get(argument) or {}) if argument else ""
    if not argument:
        sentence = f"{tool}: the arguments must be a JSON object of named arguments"
    elif problem.get("type") == "missing":
        sentence = f"{tool}: argument {argument!r} is required ({expected})"
    else:
        got = json_kind(problem.get("input"))
        sentence = f"{tool}: argument {argument!r} got {got}; expected {expected}"
    if others:
        names = ", ".join(repr(name) for name, _ in others)
        sentence += f"; check {names} too"
    return sentence + "."


def expectation(prop: Mapping[str, Any]) -> str:
    """What an argument's schema asks for: ``a string: <its description>``."""
    options = prop.get("anyOf") or [prop]
    kinds = [_KINDS.get(str(o.get("type")), "") for o in options if o.get("type") != "null"]
    kinds = [k for k in dict.fromkeys(kinds) if k]
    if not kinds:
        phrase = "a value"
    elif len(kinds) == 1:
        phrase = kinds[0]
    else:
        phrase = f"{', '.join(kinds[:-1])} or {kinds[-1]}"
    description = prop.get("description")
    return f"{phrase}: {description}" if description else phrase


def json_kind(value: Any) -> str:
    """The JSON type of a value the caller sent, with its article (``a number``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a JSON array"
    return "a JSON object" if isinstance(value, dict) else "a value of the wrong type"
