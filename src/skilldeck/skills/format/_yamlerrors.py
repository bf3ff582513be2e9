"""libyaml's syntax errors turned into one line that says where to look and what to change.

libyaml reports where it *noticed* a problem, in its own grammar's words ("did not
find expected key while parsing a block mapping"). Skill authors hit a handful of
mistakes over and over, nearly all of them a ``description:`` whose text happens to
start with a YAML indicator (``[WIP] …``, ``*Important*``, ``- note``, ``"Quoted"
and more``) or an unclosed bracket. So the message names the line the author has
to edit (for an unclosed quote or bracket, the line where it was opened, not the
end of the frontmatter where libyaml gave up) and a fix chosen from what that line's
value starts with, falling back to one keyed by libyaml's problem text.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from skilldeck.errors import SkillParseError

__all__ = ["SD_INVALID_YAML", "yaml_error"]

SD_INVALID_YAML = "SD003"

_QUOTE_IT = 'wrap the whole value in quotes, e.g. {key}: "{sample}"'

#: first character of the value on the offending line → why YAML misreads it
_BY_VALUE_START = {
    "[": "a value starting with `[` is read as a YAML list",
    "{": "a value starting with `{` is read as a YAML mapping",
    "*": "a value starting with `*` is read as an alias (`*name`)",
    "&": "a value starting with `&` is read as an anchor (`&name`)",
    "!": "a value starting with `!` is read as a YAML tag",
    "@": "a value cannot start with `@` in YAML",
    "`": "a value cannot start with a backtick in YAML",
    "%": "a value cannot start with `%` in YAML",
    "|": "a value starting with `|` is read as a block of text on the following lines",
    ">": "a value starting with `>` is read as a block of text on the following lines",
}

#: a value that starts with a quote ends at the matching quote: nothing may follow it,
#: so the fix is the other kind of quote around the whole value
_OTHER_QUOTE = {
    '"': "wrap the whole value in single quotes instead (writing any `'` inside as `''`)",
    "'": 'wrap the whole value in double quotes instead (writing any `"` inside as `\\"`)',
}

#: libyaml's problem text → how to fix it, when the value's first character says nothing
_BY_PROBLEM = {
    "mapping values are not allowed": "a value contains `: `; wrap the whole value in "
    'quotes, e.g. description: "Use when: …"',
    "tab character": "YAML does not allow tabs for indentation; use spaces",
    "found character '\\t'": "YAML does not allow tabs for indentation; use spaces",
    "undefined alias": "`*name` refers to an anchor that is not defined; quote the "
    "value if the `*` is meant literally",
    "block sequence entries are not allowed": "`- ` starts a list item, which cannot "
    "follow a key on the same line; quote the value, or put each item on its own "
    "indented `- item` line",
    "expected <block end>": "check the indentation, and quote values that start with a "
    "quote but continue after it",
    "did not find expected key": "check the indentation, and quote values that start with "
    "a quote but continue after it",
}

_FLOW_OPENERS = {"flow sequence": "[", "flow mapping": "{"}
_CLOSER = {"[": "]", "{": "}"}
_OPENERS = frozenset({"[", "{", '"', "'"})
#: ``key: value`` or ``- value`` on one line: the value's first character and the key
_VALUE = re.compile(r"\s*(?:([^\s:#][^:#]*?):[ \t]+|-[ \t]+)(\S)")


def yaml_error(e: Any, *, text: str, path: Path, first_line: int) -> SkillParseError:
    """libyaml's error ``e`` over frontmatter ``text`` (whose first line is file line
    ``first_line``) as a :class:`SkillParseError` (code SD003): a ``MarkedYAMLError``
    with where and how to fix it, another (a reader error: unprintable characters)
    as it says."""
    if not hasattr(e, "problem_mark"):
        return SkillParseError(
            f"invalid YAML: {e}", path=path, line=first_line, code=SD_INVALID_YAML
        )
    problem = e.problem or e.context or "syntax error"
    mark = e.problem_mark or e.context_mark
    context = e.context or ""
    opener = next((o for kind, o in _FLOW_OPENERS.items() if kind in context), None)
    unclosed: str | None = None
    noticed = ""
    if e.context_mark is not None and mark is not None:
        if "end of stream" in problem:
            unclosed = opener or ""
        elif opener and e.context_mark.line < mark.line:
            unclosed = opener
            noticed = f" (noticed on line {mark.line + first_line})"
        if unclosed is not None:  # report where the quote or bracket was opened
            mark = e.context_mark
    line = mark.line + first_line if mark is not None else first_line
    where = f" (column {mark.column + 1})" if mark is not None else ""
    said = f" {context}" if context and e.problem else ""
    hint = _hint(text, mark, problem, unclosed)
    message = f"invalid YAML{where}: {problem}{said}{noticed}" + (f"; {hint}" if hint else "")
    return SkillParseError(message, path=path, line=line, code=SD_INVALID_YAML)


def _hint(text: str, mark: Any, problem: str, unclosed: str | None) -> str | None:
    """How to fix it; ``unclosed`` is the bracket left open (``""``: a quote or
    bracket, whichever the line's value starts with), None when nothing was."""
    lines = text.split("\n")
    source = lines[mark.line] if mark is not None and mark.line < len(lines) else ""
    match = _VALUE.match(source)
    first = match[2] if match is not None else ""
    if unclosed is not None:
        opener = unclosed or (first if first in _OPENERS else "")
        if opener in _OTHER_QUOTE:
            what = f"a `{opener}` that is never closed"
        elif opener:
            what = f"`{opener}` that is never closed with `{_CLOSER[opener]}`"
        else:
            what = "a quote or bracket that is never closed"
        return f"this line opens {what}; close it, or " + (
            _OTHER_QUOTE.get(opener) or _quote_it(match, source)
        )
    if first in _OTHER_QUOTE:
        return (
            f"a value that starts with `{first}` ends at the next `{first}`; "
            + (_OTHER_QUOTE[first])
        )
    if (reason := _BY_VALUE_START.get(first)) is not None:
        return f"{reason}; {_quote_it(match, source)}"
    return next((h for key, h in _BY_PROBLEM.items() if key in problem), None)


def _quote_it(match: re.Match[str] | None, source: str) -> str:
    key = (match[1] if match is not None else None) or "description"
    value = source[match.start(2) :].strip() if match is not None else "…"
    sample = value if len(value) <= 24 else value[:20] + " …"
    return _QUOTE_IT.format(key=key, sample=sample.replace('"', '\\"'))
