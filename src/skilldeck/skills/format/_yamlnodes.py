"""libyaml nodes → Python values, for the frontmatters the line parser gives up on.

libyaml composes the document into nodes; this module types the scalars itself
(PyYAML's resolver and constructor are pure Python and about three times slower)
and records what a validator needs: the line of every top-level key, the source text
of scalars YAML 1.1 retypes (``1.10`` → ``1.1``) down to depth two, duplicate keys.
It also bounds what a hostile file can cost: alias expansion ("billion laughs") is
capped at MAX_NODES and nesting at MAX_DEPTH, checked on the flat event stream
before composing, because libyaml's composer recurses in C and a few hundred
thousand nested brackets would crash the interpreter.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from skilldeck.errors import SkillParseError
from skilldeck.skills.format._yamlerrors import yaml_error

try:  # the C parser; PyYAML without libyaml falls back to the pure-Python one
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - every supported wheel ships libyaml
    from yaml.composer import Composer
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _Parser(Reader, Scanner, Parser, Composer):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)
            Composer.__init__(self)


__all__ = ["MAX_DEPTH", "MAX_NODES", "Result", "compose_mapping", "plain_value"]

#: Upper bound on YAML nodes after alias expansion (SD007).
MAX_NODES = 10_000
#: Upper bound on collection nesting (SD007); real frontmatter nests two or three deep.
MAX_DEPTH = 200

SD_NOT_MAPPING = "SD004"
SD_TOO_COMPLEX = "SD007"

#: PyYAML 1.1 implicit resolvers, keyed by first character; copied so that other code
#: calling ``add_implicit_resolver`` on the shared class cannot change our parsing.
_IMPLICIT: dict[str | None, list[tuple[str, re.Pattern[str]]]] = {
    k: list(v) for k, v in Resolver.yaml_implicit_resolvers.items()
}
_PLAIN = "!plain"  # tag our resolver gives untagged plain scalars: resolved in _scalar()
_T = "tag:yaml.org,2002:"
_BOOL = SafeConstructor.bool_values
_SAFE = SafeConstructor()
#: Characters whose presence makes the depth/size pre-check worthwhile.
_STRUCTURE = ("[", "{", "-", "?", "\n")

Path_ = tuple[str | int, ...]
#: (data, key_lines, source_text, duplicate_keys)
Result = tuple[dict[str, Any], dict[str, int], dict[Path_, str], list[tuple[str, int]]]


def compose_mapping(text: str, *, path: Path, first_line: int) -> Result:
    """Parse ``text`` (file line ``first_line`` onwards) that must be a mapping."""
    node = _compose(text, path=path, first_line=first_line)
    if node is None:
        return {}, {}, {}, []
    if not isinstance(node, MappingNode):
        kind = "a list" if isinstance(node, SequenceNode) else "a single value"
        raise SkillParseError(
            f"frontmatter must be a YAML mapping of `key: value` lines, found {kind}",
            path=path,
            line=node.start_mark.line + first_line,
            code=SD_NOT_MAPPING,
        )
    return _Builder(text, path=path, first_line=first_line).top_level(node)


class _Composer(_Parser):
    """libyaml composer with a trivial resolver: tags untagged plain scalars ``!plain``
    and leaves typing to :func:`_scalar` (PyYAML's resolver costs a Python call with
    regex matching per scalar; ours is a constant)."""

    def resolve(self, kind: type[Node], value: str | None, implicit: Any) -> str:
        if kind is ScalarNode:
            return _PLAIN if implicit[0] else _T + "str"
        return _T + "seq" if kind is SequenceNode else _T + "map"

    def descend_resolver(self, *args: Any) -> None:
        return None

    def ascend_resolver(self, *args: Any) -> None:
        return None


def _compose(text: str, *, path: Path, first_line: int) -> Node | None:
    if sum(text.count(c) for c in _STRUCTURE) >= MAX_DEPTH:
        _check_depth(text, path=path, first_line=first_line)
    loader = _Composer(text)
    try:
        return loader.get_single_node()
    except yaml.YAMLError as e:
        raise yaml_error(e, text=text, path=path, first_line=first_line) from e
    finally:
        loader.dispose()


def _check_depth(text: str, *, path: Path, first_line: int) -> None:
    """Refuse nesting deeper than MAX_DEPTH before composing (events are flat)."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.CBaseLoader if _has_c() else yaml.BaseLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise SkillParseError(
                        f"frontmatter nests collections more than {MAX_DEPTH} levels deep",
                        path=path,
                        line=_line_of(event.start_mark, first_line),
                        code=SD_TOO_COMPLEX,
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as e:
        raise yaml_error(e, text=text, path=path, first_line=first_line) from e


def _line_of(mark: Any, first_line: int) -> int:
    return int(mark.line) + first_line if mark is not None else first_line


def _has_c() -> bool:
    return bool(getattr(yaml, "__with_libyaml__", False))


class _Builder:
    """Turns a node tree into Python values, bounding alias expansion and recording
    the source text of retyped scalars (see the module docstring)."""

    def __init__(self, text: str, *, path: Path, first_line: int) -> None:
        self.text = text
        self.path = path
        self.first_line = first_line
        self.anchors = "&" in text  # without anchors, no node can be visited twice
        self.memo: dict[int, Any] = {}
        self.sizes: dict[int, int] = {}
        self.source: dict[Path_, str] = {}

    def top_level(self, node: MappingNode) -> Result:
        if self.anchors:
            self._check_size(node)
        data: dict[str, Any] = {}
        lines: dict[str, int] = {}
        duplicates: list[tuple[str, int]] = []
        first = self.first_line
        for key_node, value_node in node.value:
            key = self._key(key_node)
            line = key_node.start_mark.line + first
            if key == "<<" and key_node.tag == _PLAIN:
                self._merge(value_node, data, lines, line)
                continue
            if key in data:
                duplicates.append((key, line))
            data[key] = self._value(value_node, (key,))
            lines[key] = line
        return data, lines, self.source, duplicates

    def _merge(self, node: Node, data: dict[str, Any], lines: dict[str, int], line: int) -> None:
        merged = self.build(node)
        sources = merged if isinstance(merged, list) else [merged]
        for source in sources:
            if isinstance(source, dict):
                for key, value in source.items():
                    if key not in data:
                        data[key] = value
                        lines[key] = line

    def _key(self, node: Node) -> str:
        if isinstance(node, ScalarNode):
            return str(node.value)
        return self.text[node.start_mark.index : node.end_mark.index]

    def _value(self, node: Node, where: Path_) -> Any:
        """Build a top-level value, recording source text down to depth two."""
        value = self.build(node)
        if isinstance(node, ScalarNode):
            if not isinstance(value, str) and node.value != "":
                self.source[where] = str(node.value)
        elif getattr(node, "flow_style", False):
            self.source[where] = self.text[node.start_mark.index : node.end_mark.index]
        if len(where) == 1 and not isinstance(node, ScalarNode):
            children: Any = (
                ((self._key(k), v) for k, v in node.value)
                if isinstance(node, MappingNode)
                else enumerate(node.value)
            )
            for sub, child in children:
                if isinstance(child, ScalarNode):
                    if _retyped(child):
                        self.source[(*where, sub)] = str(child.value)
                elif getattr(child, "flow_style", False):
                    text = self.text[child.start_mark.index : child.end_mark.index]
                    self.source[(*where, sub)] = text
        return value

    def build(self, node: Node) -> Any:
        if isinstance(node, ScalarNode):
            return _scalar(node)
        if self.anchors:
            known = self.memo.get(id(node))
            if known is not None:
                return known
        if isinstance(node, SequenceNode):
            items: list[Any] = []
            if self.anchors:
                self.memo[id(node)] = items
            items.extend(self.build(child) for child in node.value)
            return items
        mapping: dict[str, Any] = {}
        if self.anchors:
            self.memo[id(node)] = mapping
        for key_node, value_node in node.value:
            key = self._key(key_node)
            if key == "<<" and key_node.tag == _PLAIN:
                merged = self.build(value_node)
                for source in merged if isinstance(merged, list) else [merged]:
                    if isinstance(source, dict):
                        for k, v in source.items():
                            mapping.setdefault(k, v)
                continue
            mapping[key] = self.build(value_node)
        return mapping

    def _check_size(self, root: Node) -> None:
        """Count nodes as if every alias were expanded; refuse more than MAX_NODES."""
        active: set[int] = set()

        def size(node: Node) -> int:
            ident = id(node)
            known = self.sizes.get(ident)
            if known is not None:
                return known
            if ident in active:
                raise SkillParseError(
                    "frontmatter contains a recursive YAML alias",
                    path=self.path,
                    line=node.start_mark.line + self.first_line,
                    code=SD_TOO_COMPLEX,
                )
            total = 1
            if not isinstance(node, ScalarNode):
                active.add(ident)
                children = (
                    [c for pair in node.value for c in pair]
                    if isinstance(node, MappingNode)
                    else node.value
                )
                for child in children:
                    total += size(child)
                    if total > MAX_NODES:
                        raise SkillParseError(
                            f"frontmatter expands to more than {MAX_NODES} YAML nodes "
                            "(aliases that multiply); write the values out instead",
                            path=self.path,
                            line=node.start_mark.line + self.first_line,
                            code=SD_TOO_COMPLEX,
                        )
                active.discard(ident)
            self.sizes[ident] = total
            return total

        size(root)


#: First characters with which a plain scalar may be typed as something other than
#: text (see :func:`plain_value`); any other plain scalar is a string as it stands.
RETYPABLE_FIRST = frozenset(k for k in _IMPLICIT if k)


def _retyped(node: ScalarNode) -> bool:
    """True when YAML would type this scalar as something other than a string."""
    value: str = node.value
    if node.tag == _T + "str" or not value:
        return False
    if node.tag == _PLAIN and value[0] not in _IMPLICIT:
        return False
    return not isinstance(_scalar(node), str)


def _scalar(node: ScalarNode) -> Any:
    """Type a scalar the way PyYAML's SafeLoader would, except timestamps (kept as text)."""
    tag = node.tag
    value: str = node.value
    if tag == _PLAIN:
        return plain_value(value)
    return _typed(tag, value, node)


def plain_value(value: str) -> Any:
    """An untagged plain scalar, typed by YAML 1.1's implicit resolvers."""
    if not value:
        return None
    resolvers = _IMPLICIT.get(value[0])
    if resolvers is None:
        return value
    for tag, regexp in resolvers:
        if regexp.match(value):
            return _typed(tag, value, None)
    return value


def _typed(tag: str, value: str, node: ScalarNode | None) -> Any:
    if tag == _T + "str":
        return value
    try:
        if tag == _T + "bool":
            return _BOOL.get(value.lower(), value)
        if tag == _T + "int":
            return _SAFE.construct_yaml_int(node or ScalarNode(tag, value))
        if tag == _T + "float":
            return _SAFE.construct_yaml_float(node or ScalarNode(tag, value))
        if tag == _T + "null":
            return None
    except (ValueError, yaml.YAMLError):
        return value
    return value  # timestamps, !!binary, unknown tags: the text as written
