"""The line parser must never disagree with the libyaml path it short-cuts."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skilldeck.errors import SkillParseError
from skilldeck.skills.format import _yamlnodes
from skilldeck.skills.format._fastyaml import parse_simple


def full(text: str) -> object:
    try:
        return _yamlnodes.compose_mapping(text, path=Path("SKILL.md"), first_line=2)
    except SkillParseError as e:
        return ("error", e.code)


def fast(text: str) -> object:
    """The line parser as the parser calls it; without the ``retypable`` shortcut
    (every plain scalar through the resolver) it must give the same."""
    result = parse_simple(text, 2, _yamlnodes.plain_value, _yamlnodes.RETYPABLE_FIRST)
    assert result == parse_simple(text, 2, _yamlnodes.plain_value)
    return result


GOOD_VALUES = st.sampled_from(
    [
        "x", "two words", "1.0", "1.10", "yes", "No", "~", "null", "-1", "-x", "0x1F", "1e3",
        ".5", "2024-01-01", "12:30", '"dq"', "'s''q'", "[a, b]", "[1.0, x]", "[]", "[a,]",
        "a:b", "x #c", "C#", '"q" # c', "R&D", "ü 🙂", "a :b", "x,y", "[a] #c", '"# not"',
        "'a'  ", "true", "Off", "0o17", "+1", "1_000", ".inf", "-.5", "x y #z",
    ]
)  # fmt: skip
KEYS = st.sampled_from(
    ["name", "description", "metadata", "tags", "a", "b", "1", "x.y", "yes", "on", "dup"]
)


def _entry(key: str, kind: str, indent: str, items: list[tuple[str, str]]) -> str:
    if kind == "scalar":
        return f"{key}: {items[0][1]}" if items else f"{key}:"
    if kind == "seq":
        return f"{key}:\n" + "\n".join(f"{indent}- {v}" for _, v in items)
    indent = indent or "  "
    return f"{key}:\n" + "\n".join(f"{indent}{k}: {v}" for k, v in items)


DOCS = st.lists(
    st.one_of(
        st.builds(
            _entry,
            KEYS,
            st.sampled_from(["scalar", "seq", "map"]),
            st.sampled_from(["", " ", "  ", "    "]),
            st.lists(st.tuples(KEYS, GOOD_VALUES), max_size=3),
        ),
        st.sampled_from(["", "# comment", "k: #c"]),
    ),
    max_size=7,
).map(lambda entries: "\n".join(entries) + "\n")

NOISE = st.lists(
    st.tuples(
        st.integers(0, 400),
        st.sampled_from(list(" \t\n:-#'\"[]{},&*!|>%@`?\\\r.~x1é\x85\u2028\ufeff")),
    ),
    min_size=1,
    max_size=3,
)


def _mutate(text: str, edits: list[tuple[int, str]]) -> str:
    for position, char in edits:
        position %= len(text) + 1
        text = text[:position] + char + text[position:]
    return text


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(DOCS)
def test_subset_documents_are_parsed_identically(text: str) -> None:
    result = fast(text)
    assert result is not None, "the generator only writes the supported subset"
    assert result == full(text)


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(DOCS, NOISE)
def test_mutated_documents_are_identical_or_left_to_libyaml(
    text: str, edits: list[tuple[int, str]]
) -> None:
    mutated = _mutate(text, edits)
    result = fast(mutated)
    if result is not None:
        assert result == full(mutated)


@pytest.mark.parametrize(
    "text",
    [
        "description: |\n  block\n",
        "description: >-\n  folded\n",
        "a: x\n  continued\n",
        'a: "esc\\n"\n',
        "a: &anchor x\n",
        "a: !!str x\n",
        "a:\n  b:\n    c: d\n",
        "a:\n  - x\n    - y\n",
        "a: b: c\n",
        "a:\tb\n",
        "- a\n",
        "? a\n: b\n",
        "a: 'unterminated\n",
        "a: [x, [y]]\n",
        "a: {x: y}\n",
        "...\n",
        "a: x\u2028y\n",
        "a: x\rb\n",
    ],
)
def test_gives_up_on_everything_else(text: str) -> None:
    assert fast(text) is None


def test_typical_frontmatter() -> None:
    text = (
        'name: pdf\ndescription: "Fill PDF forms: fast"  # c\nversion: 1.10\n'
        "requires:\n  mcp: [rube]\ntags:\n- a\n- 2\n"
    )
    data, lines, source, duplicates = fast(text)  # type: ignore[misc]
    assert data == {
        "name": "pdf",
        "description": "Fill PDF forms: fast",
        "version": 1.1,
        "requires": {"mcp": ["rube"]},
        "tags": ["a", 2],
    }
    assert lines == {"name": 2, "description": 3, "version": 4, "requires": 5, "tags": 7}
    assert source == {("version",): "1.10", ("requires", "mcp"): "[rube]", ("tags", 1): "2"}
    assert duplicates == []
