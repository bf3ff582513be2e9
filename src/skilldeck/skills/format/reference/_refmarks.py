"""strictyaml's errors, and their text exactly as ruamel.yaml renders it.

skills-ref shows strictyaml's message verbatim, and strictyaml's message is ruamel's
``MarkedYAMLError.__str__``: context, problem, each mark as ``in "<unicode string>",
line L, column C`` with a snippet of the line and a caret. :func:`marked` renders that
from PyYAML's marks (or a :class:`Mark` built by hand), so
:mod:`~skilldeck.skills.format.reference._refyaml` gives the same text without
strictyaml or ruamel installed.
"""

from __future__ import annotations

import textwrap
from typing import Any

__all__ = ["DuplicateKeyError", "Mark", "ReferenceYAMLError", "marked"]

_LABEL = "<unicode string>"


class ReferenceYAMLError(Exception):
    """strictyaml would raise here; ``str()`` is its exact message.

    ``line`` is the 0-based line inside the parsed text where the offending construct
    starts (the error's context mark, else its problem mark), when known.
    """

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class DuplicateKeyError(Exception):
    """ruamel's error for a second ``<<`` in one mapping. strictyaml does not turn it
    into a YAMLError, so skills-ref lets it escape; callers that want identical
    behaviour do the same."""


class Mark:
    """Enough of a PyYAML mark for :func:`marked`."""

    def __init__(self, buffer: str, index: int, line: int, column: int) -> None:
        self.buffer = buffer
        self.pointer = index
        self.line = line
        self.column = column


def marked(
    context: str | None,
    context_mark: Any,
    problem: str | None,
    problem_mark: Any,
    note: str | None = None,
    warn: str | None = None,
) -> ReferenceYAMLError:
    """ruamel.yaml's MarkedYAMLError.__str__ for PyYAML marks."""
    lines: list[str] = []
    if context is not None:
        lines.append(context)
    if context_mark is not None and (
        problem is None
        or problem_mark is None
        or context_mark.line != problem_mark.line
        or context_mark.column != problem_mark.column
    ):
        lines.append(_mark_text(context_mark))
    if problem is not None:
        lines.append(problem)
    if problem_mark is not None:
        lines.append(_mark_text(problem_mark))
    if note:
        lines.append(textwrap.dedent(note))
    if warn:  # ruamel's duplicate-merge-key error prints its warning text too
        lines.append(textwrap.dedent(warn))
    mark = context_mark or problem_mark
    return ReferenceYAMLError("\n".join(lines), line=getattr(mark, "line", None))


def _mark_text(mark: Any) -> str:
    where = f'  in "{_LABEL}", line {mark.line + 1}, column {mark.column + 1}'
    snippet = _snippet(mark)
    return where if snippet is None else f"{where}:\n{snippet}"


def _snippet(mark: Any, indent: int = 4, max_length: int = 75) -> str | None:
    buffer: str | None = getattr(mark, "buffer", None)
    if buffer is None:
        return None
    pointer: int = mark.pointer
    breaks = "\0\r\n\x85\u2028\u2029"
    head = ""
    start = pointer
    while start > 0 and buffer[start - 1] not in breaks:
        start -= 1
        if pointer - start > max_length / 2 - 1:
            head = " ... "
            start += 5
            break
    tail = ""
    end = pointer
    while end < len(buffer) and buffer[end] not in breaks:
        end += 1
        if end - pointer > max_length / 2 - 1:
            tail = " ... "
            end -= 5
            break
    caret = f"^ (line: {mark.line + 1})"
    return (
        " " * indent
        + head
        + buffer[start:end]
        + tail
        + "\n"
        + " " * (indent + pointer - start + len(head))
        + caret
    )
