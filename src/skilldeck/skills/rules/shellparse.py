"""A bash command line as bash itself will read it, from the tree-sitter-bash grammar.

The permission rules (:mod:`skilldeck.skills.rules.shellrules`) must agree with bash about
what a command line runs; a home-made lexer did not (``git diff x#;touch M`` looked
like one command with a comment). This module parses the line with a real bash
grammar and reduces it to two answers, both failing closed:

* :attr:`ParsedLine.simple` — the line's simple commands as the argv bash would pass,
  **only** when the whole line is made of understood, literal parts (plain, single-
  and double-quoted words without expansions; ``;``, ``&&``, ``||``, ``|``, newlines;
  the harmless redirections ``2>&1``, ``>&2``, ``>/dev/null``, ``2>/dev/null``,
  ``</dev/null``). Anything else leaves it ``None`` with :attr:`ParsedLine.refusal`
  saying why: an allow rule can then never approve the line.
* :attr:`ParsedLine.invocations` — every command anywhere in the tree (inside
  ``$(…)``, subshells, functions, loop bodies, here-documents…), with ``None`` for a
  word bash only knows at run time, and :attr:`ParsedLine.hazard` when the line can
  run code the tree does not show (parse errors, arithmetic on names, ``${x@P}``…).
  Deny rules are matched against these (see :mod:`skilldeck.skills.rules.shellprograms`).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from skilldeck.skills.rules.shellwords import RUNTIME, Argv, assignment_word, literal, option_word

__all__ = ["MAX_COMMAND", "RUNTIME", "Argv", "ParsedLine", "parse_line"]

#: the longest command line analysed (longer ones are neither approved nor understood)
MAX_COMMAND = 100_000

_JOINED_LINES = re.compile(r"(?<![ \t])\\\n")
_GAP = re.compile(r"(?:[ \t\n]|\\\n)*")
_SEPARATORS = frozenset({";", "&&", "||", "|", "|&"})
_LITERAL_NODES = frozenset({"word", "number", "raw_string", "string", "concatenation"})
_ARITHMETIC = frozenset(
    {"arithmetic_expansion", "subscript", "c_style_for_statement", "postfix_expression"}
)
_PLAIN_EXPANSION = re.compile(r"\$\{#?[A-Za-z_][A-Za-z0-9_]*(?::?[-=+?].*)?\}", re.DOTALL)
_ARITH_COMPARE = re.compile(r"\s-(?:eq|ne|lt|le|gt|ge|v|R)\s")
#: nodes that hold a command's argv (``export``/``unset`` have node types of their own)
_COMMAND_NODES = frozenset({"command", "declaration_command", "unset_command"})


@dataclass(frozen=True, slots=True)
class ParsedLine:
    """What one command line runs, as far as its text shows (see the module doc)."""

    simple: tuple[tuple[str, ...], ...] | None
    refusal: str
    invocations: tuple[Argv, ...]
    assignments: tuple[tuple[str, str | None], ...]
    hazard: str | None


_PARSER: Any = None
_PARSE_LOCK = threading.Lock()


def _parser() -> Any:
    """The tree-sitter parser, built once per process (building it costs more than
    parsing a typical command line)."""
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_bash

        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _PARSER


def parse_line(command: str) -> ParsedLine:
    """Parse ``command`` once (cached: the same line is judged by many rules). A line
    longer than :data:`MAX_COMMAND` is not analysed: nothing approves it and deny
    rules treat it as unknown (analysing megabytes would stall every tool call)."""
    if len(command) > MAX_COMMAND:
        why = f"it is longer than {MAX_COMMAND} characters, too long to analyse"
        return ParsedLine(None, why, (), (), why)
    return _parse_line(command)


@lru_cache(maxsize=1024)
def _parse_line(command: str) -> ParsedLine:
    try:
        source = command.encode("utf-8")
    except UnicodeEncodeError:
        return ParsedLine(None, "it is not valid text", (), (), "it is not valid text")
    if "\x00" in command:
        return ParsedLine(None, "it contains a NUL byte", (), (), "it contains a NUL byte")
    with _PARSE_LOCK:  # one parser per process; sub-agents may check from threads
        root = _parser().parse(source).root_node
    walker = _Walker()
    if _JOINED_LINES.search(command):
        # bash deletes `\⏎` before it splits words (`r\⏎m` is `rm`); the grammar
        # reads it as a space. They agree only after a space or tab.
        walker.flag("a backslash-newline inside a word, which bash joins into one word")
    walker.walk(root)
    refusal = _refuse_controls(command) or walker.hazard or _approvable(root, source)
    simple = None if refusal else tuple(_top_level_argvs(root))
    return ParsedLine(
        simple=simple,
        refusal=refusal or "",
        invocations=tuple(walker.invocations),
        assignments=tuple(walker.assignments),
        hazard=walker.hazard,
    )


def _refuse_controls(command: str) -> str | None:
    if any(ord(ch) < 32 and ch not in "\t\n" for ch in command) or "\x7f" in command:
        return "it contains control characters"
    return None


# ---- every command in the tree (deny side) -------------------------------------------


class _Walker:
    """Collects every command of the tree and the first hazard, without recursion
    (a line nested thousands deep must not crash the permission check)."""

    def __init__(self) -> None:
        self.invocations: list[Argv] = []
        self.assignments: list[tuple[str, str | None]] = []
        self.hazard: str | None = None
        #: commands already taken with their redirected_statement
        self.seen: set[int] = set()

    def flag(self, why: str) -> None:
        if self.hazard is None:
            self.hazard = why

    def walk(self, root: Any) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            self.visit(node)
            stack.extend(reversed(node.children))

    def visit(self, node: Any) -> None:
        kind = node.type
        if node.is_missing or kind == "ERROR":
            self.flag("bash syntax the parser does not understand")
        elif kind == "redirected_statement":
            body = node.child_by_field_name("body")
            if body is not None and body.type == "command":
                extra = [w for r in node.children[1:] for w in _redirect_extra_words(r)]
                self.invocations.append(_argv(body) + tuple(literal(w) for w in extra))
                self.seen.add(body.id)
        elif kind in _COMMAND_NODES and node.id not in self.seen:
            self.invocations.append(_argv(node))
        elif kind == "variable_assignment":
            self._assignment(node)
        elif kind == "expansion" and not _PLAIN_EXPANSION.fullmatch(node.text.decode()):
            self.flag("a ${…} expansion that can run or build commands at run time")
        elif _arithmetic(node):
            self.flag("arithmetic on names, which can run commands hidden in variables")

    def _assignment(self, node: Any) -> None:
        name_node = node.child_by_field_name("name") or node.children[0]
        value_node = node.child_by_field_name("value")
        name = name_node.text.decode()
        if value_node is not None and value_node.type == "array" and b"[" in value_node.text:
            self.flag("an array assignment with subscripts, which can run hidden commands")
        value = "" if value_node is None else literal(value_node)
        self.assignments.append((name, value))


def _arithmetic(node: Any) -> bool:
    """Arithmetic that reads variables: bash evaluates ``a[$(cmd)]`` found in a value."""
    kind: str = node.type
    text: str = node.text.decode("utf-8", "replace")
    if kind in _ARITHMETIC:
        return re.search(r"[A-Za-z_$`\[]", text) is not None
    if kind == "compound_statement":
        return text.startswith("((")
    return kind == "test_command" and text.startswith("[[") and bool(_ARITH_COMPARE.search(text))


def _argv(node: Any) -> Argv:
    """The argv of one command node: its name and arguments, no assignments or
    redirections (words tree-sitter files under a redirection are arguments to bash)."""
    words: list[str | None] = []
    if node.type != "command":  # export / declare / local / unset …
        for child in node.children:
            if not child.is_named:
                words.append(child.type)
            elif child.type == "variable_assignment":
                words.append(assignment_word(child))
            else:
                words.append(literal(child))
        return tuple(words)
    for child in node.children:
        if child.type == "variable_assignment" or not child.is_named:
            continue
        if child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            words.extend(literal(w) for w in _redirect_extra_words(child))
            continue
        target = child.children[0] if child.type == "command_name" else child
        words.append(literal(target) if target.type != "concatenation" else option_word(target))
    return tuple(words)


def _redirect_extra_words(redirect: Any) -> list[Any]:
    """tree-sitter hangs ``arg`` of ``ls >x arg`` under the redirection; bash passes
    it to ``ls``. Every named child after the destination is such an argument."""
    if redirect.type != "file_redirect":
        return []
    named = [c for c in redirect.named_children if c.type != "file_descriptor"]
    return named[1:]


# ---- the whole line, for allow rules -------------------------------------------------


def _approvable(root: Any, source: bytes) -> str | None:
    """None when the line is only literal simple commands joined by understood
    separators; otherwise why an allow rule cannot vouch for it."""
    end = 0
    for leaf in _leaves(root):
        if not _GAP.fullmatch(source[end : leaf.start_byte].decode("utf-8", "replace")):
            return "the parser skipped part of it"
        end = leaf.end_byte
    if not _GAP.fullmatch(source[end:].decode("utf-8", "replace")):
        return "the parser skipped part of it"
    stack = list(root.children)
    while stack:
        node = stack.pop()
        if node.type in ("list", "pipeline"):
            stack.extend(node.children)
        elif not node.is_named:
            if node.type not in _SEPARATORS:
                return f"it uses `{node.type}`"
        elif node.type == "redirected_statement":
            why = _redirected_ok(node)
            if why:
                return why
        elif node.type == "command":
            why = _command_ok(node)
            if why:
                return why
        else:
            return _describe(node)
    return None


def _leaves(root: Any) -> list[Any]:
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.child_count == 0 or node.type in ("raw_string", "string", "word"):
            out.append(node)
        else:
            stack.extend(reversed(node.children))
    return out


def _describe(node: Any) -> str:
    names = {
        "comment": "a comment",
        "subshell": "a subshell",
        "function_definition": "a function definition",
        "variable_assignment": "a variable assignment",
        "negated_command": "`!`",
    }
    return f"it contains {names.get(node.type, node.type.replace('_', ' '))}"


def _redirected_ok(node: Any) -> str | None:
    body = node.child_by_field_name("body") or node.children[0]
    if body.type != "command":
        return _describe(body)
    for child in node.children[1:]:
        why = _redirect_ok(child)
        if why:
            return why
    return _command_ok(body)


def _redirect_ok(node: Any) -> str | None:
    """Only redirections that cannot write a file: ``2>&1``, ``>&2``, to or from
    ``/dev/null``."""
    if node.type != "file_redirect":
        return "it contains a here-document or here-string"
    parts = [c for c in node.children if c.type != "file_descriptor"]
    fds = [c.text for c in node.children if c.type == "file_descriptor"]
    if fds and fds != [b"1"] and fds != [b"2"]:
        return "it redirects an unusual file descriptor"
    if len(parts) != 2:
        return "it redirects with arguments the rules do not follow"
    op, target = parts[0].type, literal(parts[1])
    if op == ">&" and target in ("1", "2"):
        return None
    if op in (">", ">>", "&>", "<") and target == "/dev/null":
        return None
    return "it redirects to or from a file"


def _command_ok(node: Any) -> str | None:
    for child in node.children:
        if child.type == "variable_assignment":
            return "it sets a variable for the command (`VAR=value cmd`)"
        if child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            why = _redirect_ok(child)
            if why:
                return why
            continue
        target = child.children[0] if child.type == "command_name" else child
        if target.type not in _LITERAL_NODES or literal(target) is None:
            shown = target.text.decode("utf-8", "replace")[:60]
            return f"`{shown}` is not a plain literal word (expansion, quoting or glob)"
    return None


def _top_level_argvs(root: Any) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "command":
            out.append(tuple(w or "" for w in _argv(node)))
        else:
            stack.extend(reversed(node.named_children))
    return out
