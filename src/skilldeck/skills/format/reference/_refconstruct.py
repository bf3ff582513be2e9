"""strictyaml's ``.data`` from a composed document: ruamel's construction, its checks.

ruamel.yaml (inside strictyaml) builds a round-trip document depth first, handles
merge keys (``<<``: one per mapping, a mapping or a list of mappings, merged keys
left out of strictyaml's ``.data``, the root's merges built last), and strictyaml
adds its own checks: a duplicate key after its value is built, sibling mappings
indented alike. The same order here, so the first error raised is the one
strictyaml would raise, with its text (:mod:`._refmarks`).
"""

from __future__ import annotations

from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from skilldeck.skills.format.reference._refmarks import DuplicateKeyError, marked

__all__ = ["MERGE", "construct_document"]

MERGE = "tag:yaml.org,2002:merge"
_DUPLICATE_NOTE = """
To suppress this check see:
   http://yaml.readthedocs.io/en/latest/api.html#duplicate-keys
"""
_DUPLICATE_WARN = """Duplicate keys will become an error in future releases, and are errors
by default when using the new API.
"""


def construct_document(node: Node) -> Any:
    """The root's merged mappings are built last: ruamel defers them (``deep=False``)."""
    deferred: list[Node] = []
    data = _construct(node, deferred)
    for merged in deferred:
        _construct(merged)
    return data


def _construct(node: Node, deferred: list[Node] | None = None) -> Any:
    """ruamel's round-trip construction order (depth first), with strictyaml's checks:
    merge keys first, a duplicate key after its value is built, the indentation of
    sibling mappings after the whole mapping."""
    if isinstance(node, ScalarNode):
        return node.value
    if isinstance(node, SequenceNode):
        return [_construct(child) for child in node.value]
    pairs = [(k, v) for k, v in node.value if k.tag != MERGE]
    if len(pairs) < len(node.value):
        _check_merges(node, deferred)  # merged keys are not part of strictyaml's .data
    data: dict[Any, Any] = {}
    for key_node, value_node in pairs:
        key = _construct(key_node)
        if isinstance(key, list):
            key = tuple(key)
        if isinstance(key, dict):
            raise marked(
                "while constructing a mapping",
                node.start_mark,
                "found unhashable key",
                key_node.start_mark,
            )
        value = _construct(value_node)
        if key in data:
            raise marked(
                "While parsing",
                key_node.start_mark,
                f"Duplicate key '{key}' found",
                key_node.end_mark,
            )
        data[key] = value
    column: int | None = None
    for _key_node, value_node in pairs:
        if isinstance(value_node, MappingNode):
            if column is None:
                column = value_node.start_mark.column
            elif value_node.start_mark.column != column:
                raise marked(
                    "While parsing",
                    value_node.start_mark,
                    "Found mapping with indentation inconsistent with previous mapping",
                    value_node.end_mark,
                )
    return data


def _check_merges(node: Node, deferred: list[Node] | None) -> None:
    """ruamel's flatten_mapping: one ``<<`` per mapping, whose value is a mapping or a
    list of mappings (built now, or later when ``deferred`` collects them)."""

    def build(merged: Node) -> None:
        if deferred is None:
            _construct(merged)
        else:
            deferred.append(merged)

    seen = False
    for key_node, value_node in node.value:
        if key_node.tag != MERGE:
            continue
        if seen:
            raise DuplicateKeyError(
                str(
                    marked(
                        "while constructing a mapping",
                        node.start_mark,
                        'found duplicate key "<<"',
                        key_node.start_mark,
                        _DUPLICATE_NOTE,
                        _DUPLICATE_WARN,
                    )
                )
            )
        seen = True
        if isinstance(value_node, MappingNode):
            build(value_node)
        elif isinstance(value_node, SequenceNode):
            for sub in value_node.value:
                if not isinstance(sub, MappingNode):
                    raise marked(
                        "while constructing a mapping",
                        node.start_mark,
                        f"expected a mapping for merging, but found {sub.id}",
                        sub.start_mark,
                    )
                build(sub)
        else:
            raise marked(
                "while constructing a mapping",
                node.start_mark,
                f"expected a mapping or list of mappings for merging, but found {value_node.id}",
                value_node.start_mark,
            )
