"""Bash words as bash passes them: quotes and backslashes removed, or None.

A word is *literal* when its value is fixed by its text: plain characters, backslash
escapes, ``'single'`` and ``"double"`` quotes without expansions, and concatenations
of those. Anything bash would expand or interpret (``$``, backticks, globs, braces, a
leading ``~``, ``#``, ``$'…'``…) makes the word not literal: :func:`literal` returns
None and the permission rules treat the word as unknown (see
:mod:`skilldeck.skills.rules.shellparse`).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["RUNTIME", "Argv", "assignment_word", "literal", "option_word"]

#: one argv; ``None`` stands for a word whose value bash only knows at run time
Argv = tuple[str | None, ...]
#: ends an option word whose value is known only at run time (``--opt=$x``)
RUNTIME = "\x00"
#: unquoted characters that mean nothing special to bash (anything else: not literal)
_SAFE_UNQUOTED = re.compile(r"[A-Za-z0-9_@%+=:,./-]")
_SAFE_WORD = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")


def literal(node: Any) -> str | None:
    """The value bash passes for this word node, or None when it is not a plain literal
    (expansions, globs, braces, tildes, ANSI-C quoting, comments…)."""
    kind = node.type
    text = node.text.decode("utf-8")
    if kind in ("word", "number"):
        return _unquoted(text)
    if kind == "raw_string":
        return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == "'" else None
    if kind == "string":
        if any(c.type not in ('"', "string_content") for c in node.children):
            return None
        return _double_quoted(text)
    if kind == "concatenation":
        parts = [literal(c) for c in node.children]
        return None if any(p is None for p in parts) else "".join(p or "" for p in parts)
    return None


def _unquoted(text: str) -> str | None:
    if "\\" not in text and _SAFE_WORD.fullmatch(text):
        return text  # the common case, without a loop over characters
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            if i + 1 >= len(text):
                return None
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        tilde_literal = ch == "~" and i > 0 and text[i - 1] not in "=:"
        if not (_SAFE_UNQUOTED.fullmatch(ch) or tilde_literal or (ord(ch) > 127 and ch.isalnum())):
            return None
        out.append(ch)
        i += 1
    return "".join(out)


def _double_quoted(text: str) -> str | None:
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return None
    body, out, i = text[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body) and body[i + 1] in '$`"\\\n':
            if body[i + 1] != "\n":
                out.append(body[i + 1])
            i += 2
            continue
        if ch in "$`" or (ch == "\\" and i + 1 >= len(body)):
            return None
        out.append(ch)
        i += 1
    return "".join(out)


def option_word(node: Any) -> str | None:
    """``--opt="$x"``: bash knows the value only at run time, but the option is plain
    to see. Such a word keeps its literal ``--opt=`` head followed by :data:`RUNTIME`
    (a NUL, which no real argument can hold); any other non-literal word is None."""
    value = literal(node)
    if value is not None:
        return value
    head: list[str] = []
    for child in node.children:
        piece = literal(child)
        if piece is None:
            break
        head.append(piece)
    text = "".join(head)
    return text + RUNTIME if text.startswith("-") and "=" in text else None


def assignment_word(node: Any) -> str | None:
    """``NAME=value`` as the single word a declaration builtin receives."""
    value = node.child_by_field_name("value")
    name = node.child_by_field_name("name") or node.children[0]
    rendered = "" if value is None else literal(value)
    return None if rendered is None else f"{name.text.decode()}={rendered}"
