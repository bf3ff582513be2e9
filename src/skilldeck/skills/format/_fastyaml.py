"""A line parser for the YAML subset almost every SKILL.md frontmatter is written in.

Composing YAML with libyaml and turning nodes into values costs ~15 µs for a typical
frontmatter; this parser handles the common shapes in a few microseconds and gives
up (returns ``None``) on anything else, which then goes through the full path in
:mod:`skilldeck.skills.format.parse`. It must never *disagree* with that path: a property
test feeds both the same generated documents and the whole skill corpus and
compares data, key lines, source text and duplicates.

Accepted, line by line (column 0 unless stated):

* blank lines, and ``# comment`` lines at column 0;
* ``key: value`` where ``key`` is ``[A-Za-z0-9_][A-Za-z0-9_.-]*`` and ``value`` is
  a one-line plain scalar, a double-quoted string without backslashes, a
  single-quoted string, or a flow list of plain scalars (``[a, b]``), optionally
  followed by `` # comment``;
* ``key:`` followed by a block of lines indented the same, either all
  ``- value`` items or all ``sub: value`` pairs (values as above).

Everything else (block scalars, multi-line values, escapes, tabs, anchors, tags,
deeper nesting, unusual characters) returns ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container
from typing import Any

__all__ = ["parse_simple"]

Path_ = tuple[str | int, ...]
Result = tuple[dict[str, Any], dict[str, int], dict[Path_, str], list[tuple[str, int]]]

_KEY = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]*):(?: +|$)")
_ITEM = re.compile(r"( *)- +")
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
#: first characters :meth:`_Doc.scalar` does not treat as a plain scalar right away
_SPECIAL_FIRST = frozenset("\"'[")


class _Everything:
    """A container holding every character (no ``retypable`` set given)."""

    def __contains__(self, item: object) -> bool:
        return True


_EVERY_CHARACTER = _Everything()


class _GiveUp(Exception):
    pass


def parse_simple(
    text: str,
    first_line: int,
    resolve: Callable[[str], Any],
    retypable: Container[str] | None = None,
) -> Result | None:
    """``(data, key_lines, source_text, duplicates)`` or None when ``text`` is not
    in the subset. ``resolve`` types a plain scalar (YAML 1.1 rules); ``retypable``,
    when given, holds every first character with which ``resolve`` can return
    something other than the text itself (other scalars skip the call)."""
    lines = text.split("\n")
    if "\r" in text:
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    # tabs, odd line breaks (NEL, LS, PS, lone CR), BOMs, controls, surrogates and
    # unassigned code points are not printable: leave such text to libyaml
    if not all(map(str.isprintable, lines)):
        return None
    try:
        return _Doc(lines, first_line, resolve, retypable).parse()
    except _GiveUp:
        return None


class _Doc:
    def __init__(
        self,
        lines: list[str],
        first_line: int,
        resolve: Callable[[str], Any],
        retypable: Container[str] | None,
    ) -> None:
        self.lines = lines
        self.first_line = first_line
        self.resolve = resolve
        self.retypable = _EVERY_CHARACTER if retypable is None else retypable
        self.data: dict[str, Any] = {}
        self.key_lines: dict[str, int] = {}
        self.source: dict[Path_, str] = {}
        self.duplicates: list[tuple[str, int]] = []

    def parse(self) -> Result:
        lines = self.lines
        data, key_lines, first = self.data, self.key_lines, self.first_line
        match_key, scalar, retypable = _KEY.match, self.scalar, self.retypable
        i, n = 0, len(lines)
        while i < n:
            line = lines[i]
            # blank (the text is printable, so only spaces can be blank) or a comment
            if not line or line[0] == "#" or (line[0] == " " and not line.strip(" ")):
                i += 1
                continue
            match = match_key(line)
            if match is None:
                raise _GiveUp
            key = match[1]
            rest = line[match.end() :]
            if key in data:
                self.duplicates.append((key, i + first))
            key_lines[key] = i + first
            if not rest or rest[0] == "#":
                i = self.block(key, i + 1)
                continue
            i += 1
            head = rest[0]
            if head in retypable or head in _INDICATORS or ": " in rest:
                data[key] = scalar(rest, (key,))
                continue
            # the usual line, `key: some plain text`, is scalar() and _plain() inlined:
            # ``head`` is no space, indicator or quote, so the value is plain, not empty
            # and stays text; only a comment to cut and a trailing colon are left to check
            cut = rest.find(" #")
            value = (rest if cut < 0 else rest[:cut]).rstrip(" ")
            if value[-1] == ":":
                raise _GiveUp
            data[key] = value
        return data, key_lines, self.source, self.duplicates

    def block(self, key: str, i: int) -> int:
        """The indented block under ``key:`` starting at line ``i``; returns the next
        top-level line. No block means a null value."""
        lines = self.lines
        if i >= len(lines) or not lines[i] or lines[i][0] not in " -":
            self.data[key] = None
            return i
        first = _ITEM.match(lines[i])
        if first is not None:
            indent = first.group(1)
            items: list[Any] = []
            while i < len(lines):
                match = _ITEM.match(lines[i])
                if match is None or match.group(1) != indent:
                    break
                items.append(self.scalar(lines[i][match.end() :], (key, len(items))))
                i += 1
            self.data[key] = items
        else:
            width = len(lines[i]) - len(lines[i].lstrip(" "))
            indent = " " * width
            mapping: dict[str, Any] = {}
            while i < len(lines) and lines[i].startswith(indent) and lines[i][width:][:1] != " ":
                match = _KEY.match(lines[i], width)
                rest = lines[i][match.end() :] if match else ""
                if match is None or not rest or rest[0] == "#":
                    raise _GiveUp
                sub = match.group(1)
                mapping[sub] = self.scalar(rest, (key, sub))
                i += 1
            self.data[key] = mapping
        if i < len(lines) and lines[i][:1] == " ":
            raise _GiveUp  # a line indented differently: deeper nesting or a stray line
        return i

    def scalar(self, text: str, where: Path_) -> Any:
        """One inline value (after ``: `` or ``- ``), recording retyped source text."""
        first = text[0] if text else ""
        if first not in _SPECIAL_FIRST:  # plain text, the usual value
            value = _plain(text)
            if value[0] not in self.retypable:
                return value
            typed = self.resolve(value)
            if typed.__class__ is not str and len(where) <= 2:
                self.source[where] = value
            return typed
        if first == '"':
            end = text.find('"', 1)
            if end < 0 or "\\" in text[:end]:
                raise _GiveUp
            _trailer(text[end + 1 :])
            return text[1:end]
        if first == "'":
            end = _closing_quote(text)
            _trailer(text[end + 1 :])
            return text[1:end].replace("''", "'")
        return self.flow(text, where)  # first == "["

    def flow(self, text: str, where: Path_) -> list[Any]:
        end = text.find("]")
        if end < 0:
            raise _GiveUp
        inner = text[1:end]
        if any(ch in inner for ch in "[]{}\"'#:"):
            raise _GiveUp
        _trailer(text[end + 1 :])
        if len(where) <= 2:
            self.source[where] = text[: end + 1]
        parts = [part.strip(" ") for part in inner.split(",")]
        if parts and not parts[-1]:
            parts.pop()  # a trailing comma, or an empty list
        items: list[Any] = []
        for index, part in enumerate(parts):
            if not part or part[0] in _INDICATORS:
                raise _GiveUp
            typed = self.resolve(part)
            if not isinstance(typed, str) and len(where) == 1:
                self.source[(*where, index)] = part
            items.append(typed)
        return items


def _plain(text: str) -> str:
    """A one-line plain scalar: cut the comment, refuse what YAML would read otherwise."""
    cut = text.find(" #")
    value = (text if cut < 0 else text[:cut]).rstrip(" ")
    if not value:
        raise _GiveUp
    first = value[0]
    if first in _INDICATORS and not (first == "-" and len(value) > 1 and value[1] != " "):
        raise _GiveUp
    if ": " in value or value.endswith(":"):
        raise _GiveUp
    return value


def _closing_quote(text: str) -> int:
    pos = 1
    while True:
        end = text.find("'", pos)
        if end < 0:
            raise _GiveUp
        if text[end + 1 : end + 2] == "'":
            pos = end + 2
            continue
        return end


def _trailer(rest: str) -> None:
    """What may follow a quoted value or a flow list on its line: spaces, a comment."""
    stripped = rest.lstrip(" ")
    if stripped and not (stripped[0] == "#" and len(stripped) < len(rest)):
        raise _GiveUp
