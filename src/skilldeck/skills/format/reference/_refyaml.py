"""Read YAML exactly as the spec's reference library does, without its dependency.

skills-ref parses frontmatter with ``strictyaml.load(text).data``: every scalar is a
string, and flow collections (``[a, b]``), tags, anchors, duplicate keys and nested
mappings indented differently from their siblings are errors whose text (built by
strictyaml's vendored ruamel.yaml) ends up in skills-ref's messages. Two users need
that behaviour: :mod:`skilldeck.compat.skills_ref` (identical results and messages)
and strict validation (everything the reference validator rejects is rejected).

strictyaml is pure Python and slow, so this module has two paths. The fast path
composes with libyaml and only accepts documents with none of the features above;
anything else goes to the slow path, which runs PyYAML's pure-Python scanner, parser
and composer (ruamel.yaml's ancestors, which raise the same errors at the same
marks) with strictyaml's token checks, and renders errors with ruamel's snippet
format. Merge keys (``<<``), the one feature whose strictyaml semantics are odd
(merged keys vanish from ``.data``), are handed to strictyaml itself when it is
importable. Building the value from the slow path's nodes is
:mod:`._refconstruct`; the error texts are :mod:`._refmarks`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.scanner import Scanner
from yaml.tokens import (
    AnchorToken,
    FlowMappingStartToken,
    FlowSequenceStartToken,
    TagToken,
)

from skilldeck.skills.format.reference._refconstruct import MERGE, construct_document
from skilldeck.skills.format.reference._refmarks import (
    Mark,
    ReferenceYAMLError,
    marked,
)

_FastParser: type[Any] | None
try:
    from yaml._yaml import CParser as _FastParser
except ImportError:  # pragma: no cover - every supported wheel ships libyaml
    _FastParser = None

__all__ = ["load_reference_yaml"]

_DISALLOWED_TOKENS = (TagToken, AnchorToken)


class _Slow(Exception):
    """The fast path met something only the slow path may judge."""

    def __init__(self, *, syntax_error: bool = False) -> None:
        super().__init__()
        self.syntax_error = syntax_error


def load_reference_yaml(text: str, *, delegate: bool = True) -> Any:
    """What ``strictyaml.load(text).data`` returns; raises :class:`ReferenceYAMLError`.

    A document that is not a mapping or a sequence yields ``text`` itself (strictyaml
    validates the whole string as one scalar). Unprintable control characters raise
    ``AttributeError`` exactly like strictyaml 1.7 does (it reads ``context_mark``
    from a ``ReaderError`` that has none); callers that want identical behaviour let
    it propagate.

    Documents libyaml cannot parse (genuine syntax errors) and merge keys are handed
    to strictyaml when it is importable and ``delegate`` is true: ruamel.yaml's
    scanner reports some syntax errors at other places than PyYAML's does.
    """
    syntax_error = True
    if _FastParser is not None and "\t" not in text:  # tabs: libyaml and ruamel disagree
        try:
            return _fast(text)
        except _Slow as e:
            syntax_error = e.syntax_error
    if syntax_error and delegate:
        run = _delegate(text)
        if run is not None:
            return run()
    return _slow(text, delegate=delegate)


# ---- fast path -------------------------------------------------------------------


class _FastComposer(_FastParser or object):  # type: ignore[misc]
    def resolve(self, kind: type[Node], value: str | None, implicit: Any) -> str:
        return "?"

    def descend_resolver(self, *args: Any) -> None:
        return None

    def ascend_resolver(self, *args: Any) -> None:
        return None


def _fast(text: str) -> Any:
    loader = _FastComposer(text)
    try:
        node = loader.get_single_node()
    except yaml.YAMLError as e:
        raise _Slow(syntax_error=True) from e
    finally:
        loader.dispose()
    if node is None and not text.strip():
        return text
    if node is None or isinstance(node, ScalarNode):
        raise _Slow(syntax_error=True)  # never a frontmatter; let the exact path judge
    if ("!" in text or "&" in text) and _has_disallowed_tokens(text):
        raise _Slow
    try:
        return _fast_build(node)
    except _Flow as flow:
        raise _flow_error(text, flow.node) from None


def _has_disallowed_tokens(text: str) -> bool:
    try:
        return any(
            isinstance(token, _DISALLOWED_TOKENS)
            for token in yaml.scan(text, Loader=yaml.CBaseLoader)
        )
    except yaml.YAMLError:
        return True


class _Flow(Exception):
    """The first flow collection in document order: what strictyaml rejects first."""

    def __init__(self, node: Node) -> None:
        super().__init__()
        self.node = node


def _flow_error(text: str, node: Node) -> ReferenceYAMLError:
    """strictyaml's FlowMappingDisallowed for the ``[``/``{`` that opens ``node``.

    Only used once libyaml parsed the whole document and no tag or anchor precedes
    it, so this is the first token strictyaml's scanner check trips on.
    """
    buffer = text + "\0"
    mark = node.start_mark
    start = Mark(buffer, mark.index, mark.line, mark.column)
    end = Mark(buffer, mark.index + 1, mark.line, mark.column + 1)
    return marked(
        "While scanning",
        start,
        "Found ugly disallowed JSONesque flow mapping "
        "(surround with ' and ' to make text appear literally)",
        end,
    )


def _fast_build(node: Node) -> Any:
    if isinstance(node, ScalarNode):
        return node.value
    if getattr(node, "flow_style", False):
        raise _Flow(node)
    if isinstance(node, SequenceNode):
        return [_fast_build(child) for child in node.value]
    data: dict[str, Any] = {}
    column: int | None = None
    for key_node, value_node in node.value:
        if not isinstance(key_node, ScalarNode) or (key_node.value == "<<" and not key_node.style):
            raise _Slow
        value = _fast_build(value_node)
        if key_node.value in data:
            raise _Slow
        data[key_node.value] = value
        if isinstance(value_node, MappingNode):
            if column is None:
                column = value_node.start_mark.column
            elif value_node.start_mark.column != column:
                raise _Slow
    return data


# ---- slow path: strictyaml's checks on PyYAML's pure-Python loader -----------------


def _token_check(token: Any) -> None:
    """strictyaml's StrictYAMLScanner.check_token, for the token about to be used."""
    if isinstance(token, TagToken):
        raise marked(
            "While scanning",
            token.end_mark,
            "Found disallowed tag tokens (do not specify types in markup)",
            token.start_mark,
        )
    if isinstance(token, FlowMappingStartToken | FlowSequenceStartToken):
        raise marked(
            "While scanning",
            token.start_mark,
            "Found ugly disallowed JSONesque flow mapping "
            "(surround with ' and ' to make text appear literally)",
            token.end_mark,
        )
    if isinstance(token, AnchorToken):
        raise marked(
            "While scanning",
            token.start_mark,
            "Found confusing disallowed anchor token "
            "(surround with ' and ' to make text appear literally)",
            token.end_mark,
        )


class _StrictLoader(Reader, Scanner, Parser, Composer):
    def __init__(self, stream: str) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        Composer.__init__(self)

    def check_token(self, *choices: Any) -> bool:
        while self.need_more_tokens():
            self.fetch_more_tokens()
        if self.tokens:
            if not choices:
                return True
            for choice in choices:
                if isinstance(self.tokens[0], choice):
                    _token_check(self.tokens[0])
                    return True
        return False

    def parse_document_end(self) -> Any:
        """YAML 1.2 (ruamel): a document may follow ``...`` without ``---``."""
        event = super().parse_document_end()
        self.state = self.parse_implicit_document_start
        return event

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is ScalarNode and implicit[0] and value == "<<":
            return "tag:yaml.org,2002:merge"
        return "?"

    def descend_resolver(self, *args: Any) -> None:
        return None

    def ascend_resolver(self, *args: Any) -> None:
        return None


def _slow(text: str, *, delegate: bool) -> Any:
    loader: _StrictLoader | None = None
    try:
        loader = _StrictLoader(text)
        node = loader.get_single_node()
    except ReferenceYAMLError:
        raise
    except yaml.reader.ReaderError as e:
        # strictyaml 1.7 reads e.context_mark, which a ReaderError does not have
        raise AttributeError("'ReaderError' object has no attribute 'context_mark'") from e
    except yaml.MarkedYAMLError as e:
        problem = e.problem
        if problem:  # ruamel's spelling
            problem = problem.replace("hexadecimal numbers", "hexdecimal numbers")
        raise marked(e.context, e.context_mark, problem, e.problem_mark, e.note) from e
    finally:
        if loader is not None:
            loader.dispose()
    if node is None or isinstance(node, ScalarNode):
        return text
    if delegate and _has_merge(node):
        delegated = _delegate(text)
        if delegated is not None:
            return delegated()
    return construct_document(node)


def _has_merge(node: Node) -> bool:
    if isinstance(node, ScalarNode):
        return False
    if isinstance(node, SequenceNode):
        return any(_has_merge(child) for child in node.value)
    return any(k.tag == MERGE or _has_merge(v) for k, v in node.value)


def _delegate(text: str) -> Callable[[], Any] | None:
    try:
        import strictyaml  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        return None

    def run() -> Any:
        try:
            return strictyaml.load(text).data
        except strictyaml.YAMLError as e:
            mark = getattr(e, "context_mark", None) or getattr(e, "problem_mark", None)
            raise ReferenceYAMLError(str(e), line=getattr(mark, "line", None)) from e

    return run
