"""tools/compact.py: the compact profile's tools keep what a call needs and lose the
rest (titles, null alternatives, long enums, long descriptions, rare options)."""

from __future__ import annotations

import json

from skilldeck.llm.messages import ToolSpec
from skilldeck.tools.builtin import builtin_tools
from skilldeck.tools.compact import (
    COMPACT_DESCRIPTIONS,
    COMPACT_PROPERTIES,
    compact_schema,
    compact_spec,
)


def test_every_builtin_tool_is_smaller_and_keeps_its_required_properties() -> None:
    for tool in builtin_tools():
        full, short = tool.spec(), compact_spec(tool.spec())
        assert short.name == full.name
        assert short.description == COMPACT_DESCRIPTIONS[full.name]
        assert len(json.dumps(short.model_dump())) < len(json.dumps(full.model_dump()))
        required = full.input_schema.get("required", [])
        assert short.input_schema.get("required", []) == required
        assert set(required) <= set(short.input_schema["properties"])
        assert '"title"' not in json.dumps(short.input_schema)


def test_a_property_named_description_is_not_mistaken_for_the_keyword() -> None:
    schema = {
        "type": "object",
        "title": "Option",
        "properties": {
            "label": {"type": "string", "title": "Label"},
            "description": {"type": "string", "description": "What it means. More words."},
        },
        "required": ["label", "description"],
    }
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {
            "label": {"type": "string"},
            "description": {"type": "string", "description": "What it means."},
        },
        "required": ["label", "description"],
    }


def test_null_alternatives_and_long_enums_go_short_enums_stay() -> None:
    names = [f"skill-{i}" for i in range(40)]
    schema = {
        "properties": {
            "skill": {"anyOf": [{"type": "string", "enum": names}, {"type": "null"}]},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        }
    }
    assert compact_schema(schema)["properties"] == {
        "skill": {"type": "string"},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    }


def test_rare_options_are_left_out_but_still_accepted() -> None:
    grep = next(t for t in builtin_tools() if t.name == "Grep")
    shown = compact_spec(grep.spec()).input_schema["properties"]
    assert set(shown) == {"pattern", *COMPACT_PROPERTIES["Grep"]}
    # the tool itself still takes what the compact schema does not show
    grep.Input.model_validate({"pattern": "x", "-C": 2, "multiline": True})


def test_unknown_tools_get_their_first_sentence() -> None:
    spec = ToolSpec(
        name="mcp__db__query",
        description="Runs a read-only SQL query. Results are capped at 100 rows.",
        input_schema={"type": "object", "properties": {}},
    )
    assert compact_spec(spec).description == "Runs a read-only SQL query."
