"""Turning raw frontmatter values into the types :class:`SkillMetadata` declares.

YAML 1.1 retypes what authors meant as text (``version: 1.10`` is the float ``1.1``,
``argument-hint: [file]`` a list, ``license: no`` the bool ``False``), and authors
write lists every way there is (``"Read, Grep"``, ``Read Grep``, a YAML list). These
helpers accept all of that, prefer the *source text* the parser recorded over
Python's rendering of the retyped value, and report what they could not use through
``FieldProblem`` so the validator can turn it into a diagnostic with a line.
"""

from __future__ import annotations

import json
import re
from typing import Any

from skilldeck.skills.format.parse import ParsedFrontmatter

__all__ = [
    "FieldProblem",
    "as_bool",
    "as_credentials",
    "as_dependencies",
    "as_int",
    "as_list",
    "as_number",
    "as_text",
    "openclaw_credentials",
    "requirement_problem",
    "split_list",
    "text_of",
]

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = frozenset(_OPEN.values())
_COLLECTIONS = (dict, list)  # for isinstance: a constant tuple, no union built per call
_TRUE = frozenset({"true", "yes", "on", "y"})
_FALSE = frozenset({"false", "no", "off", "n"})
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}\Z")


class FieldProblem(Exception):
    """A value cannot be used for its field; ``message`` says why and how to fix it."""


def text_of(parsed: ParsedFrontmatter, path: tuple[str | int, ...], value: Any) -> str:
    """A scalar as the author wrote it: the recorded source text when YAML retyped it,
    ``""`` for null, ``str()`` otherwise; collections as compact JSON."""
    recorded = parsed.source_text.get(path)
    if recorded is not None:
        return recorded
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _COLLECTIONS):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def as_text(parsed: ParsedFrontmatter, key: str, value: Any, *, lists_ok: bool = False) -> str:
    """A string field. A flow collection (``[x]``) becomes its source text when
    ``lists_ok`` (``argument-hint``), otherwise it is a problem."""
    if isinstance(value, _COLLECTIONS):
        recorded = parsed.source_text.get((key,))
        if lists_ok and isinstance(value, list):
            return (
                recorded
                or "[" + ", ".join(text_of(parsed, (key, i), v) for i, v in enumerate(value)) + "]"
            )
        kind = "a list" if isinstance(value, list) else "a mapping"
        raise FieldProblem(f"`{key}` must be text, not {kind}; quote the whole value")
    return text_of(parsed, (key,), value)


def split_list(text: str, *, spaces: bool = True) -> list[str]:
    """``"Read, Bash(git diff:*) Grep"`` → ``["Read", "Bash(git diff:*)", "Grep"]``.

    Commas (and, when ``spaces``, whitespace) separate items, except inside
    ``()``, ``[]`` and ``{}`` so that ``Bash(git diff:*)`` and ``src/*.{ts,tsx}``
    stay whole.
    """
    items: list[str] = []
    current: list[str] = []
    stack: list[str] = []
    for ch in text:
        if ch in _OPEN:
            stack.append(_OPEN[ch])
        elif ch in _CLOSE and stack and stack[-1] == ch:
            stack.pop()
        elif not stack and (ch == "," or (spaces and ch.isspace())):
            if current:
                items.append("".join(current).strip())
                current = []
            continue
        current.append(ch)
    if current:
        items.append("".join(current).strip())
    return [item for item in items if item]


def as_list(
    parsed: ParsedFrontmatter,
    key: str,
    value: Any,
    *,
    where: tuple[str | int, ...] | None = None,
    spaces: bool = True,
    lines: bool = False,
) -> list[str]:
    """A list-of-strings field from a YAML list or a separated string.

    ``where`` is the value's path in the frontmatter (default ``(key,)``), used to find
    recorded source text. ``lines`` splits a string on line breaks only (steps of a
    protocol); otherwise commas and (when ``spaces``) whitespace separate items.
    """
    where = where or (key,)
    if value is None:
        return []
    if isinstance(value, dict):
        raise FieldProblem(
            f"`{key}` must be a list (YAML list or comma-separated text), not a mapping"
        )
    if isinstance(value, list):
        items = []
        for index, item in enumerate(value):
            if item is None:
                continue
            if isinstance(item, _COLLECTIONS):
                raise FieldProblem(
                    f"item {index + 1} of `{key}` is a nested "
                    f"{'mapping' if isinstance(item, dict) else 'list'}; each item must be "
                    "text (quote it if it contains `: `)"
                )
            text = text_of(parsed, (*where, index), item).strip()
            if text:
                items.append(text)
        return items
    text = text_of(parsed, where, value)
    if lines:
        return [line.strip() for line in text.splitlines() if line.strip()]
    return split_list(text, spaces=spaces)


def as_bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
    raise FieldProblem(f"`{key}` must be true or false, not {value!r}")


def as_number(key: str, value: Any) -> float:
    """A positive number of seconds; ``"30"`` and ``"30s"`` are accepted too."""
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip().removesuffix("s"))
        except ValueError:
            number = None
    if number is None or not number > 0 or number == float("inf"):
        raise FieldProblem(f"`{key}` must be a positive number of seconds, not {value!r}")
    return number


def as_int(key: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    text = value.strip() if isinstance(value, str) else ""
    if 0 < len(text) <= 18 and text.isascii() and text.isdigit() and int(text) > 0:
        return int(text)
    raise FieldProblem(f"`{key}` must be a positive whole number, not {value!r}")


# ---- credentials and dependencies (skilldeck fields) --------------------------------


def _credential(item: Any, index: int) -> tuple[dict[str, Any] | None, str | None]:
    """One ``credentials`` entry: a name, or ``{name, description, required}``."""
    where = f"entry {index + 1} of `credentials`"
    if isinstance(item, str):
        item = {"name": item}
    if not isinstance(item, dict):
        return None, f"{where} must be a mapping such as {{name: GITHUB_TOKEN}}; ignored"
    name = item.get("name")
    if not isinstance(name, str) or not _ENV_NAME.match(name):
        return None, (
            f"{where} needs a `name` that is an environment variable name (letters, "
            f"digits, `_`), not {name!r}; ignored"
        )
    required = item.get("required", True)
    if not isinstance(required, bool):
        return None, f"`required` of credential {name} must be true or false; ignored"
    unknown = sorted(str(k) for k in item if k not in ("name", "description", "required"))
    if unknown:
        return None, f"credential {name} has unknown key(s) {', '.join(unknown)}; ignored"
    description = item.get("description")
    text = "" if description is None else str(description).strip()
    return {"name": name, "description": text, "required": required}, None


def as_credentials(value: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """``credentials:`` as ``[{name, description, required}]`` and the problems of the
    entries left out (each becomes an SD180 warning)."""
    items = value if isinstance(value, list) else [value]
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        entry, problem = _credential(item, index)
        if problem:
            problems.append(problem)
        elif entry is not None and entry["name"] not in seen:
            seen.add(entry["name"])
            out.append(entry)
    return out, problems


def requirement_problem(line: str) -> str | None:
    """Why one requirement line is refused, or None: options (``-e``, ``--index-url``,
    ``-r``) could point the installer anywhere, so only requirement specifiers pass."""
    if line.startswith("-"):
        return f"the option {line.split()[0]!r} is not allowed; list package requirements only"
    if "\0" in line or "\n" in line:
        return "a requirement must be one line"
    return None


def as_dependencies(value: Any) -> tuple[dict[str, list[str]], list[str]]:
    """``dependencies: {python: [...]}`` and the problems found (SD181 warnings). A
    plain list (``dependencies: [chromadb, torch>=2]``, common in published skills)
    means Python requirements."""
    if isinstance(value, list):
        value = {"python": value}
    if not isinstance(value, dict):
        return {}, ["`dependencies` must be a mapping such as {python: [requests>=2]}; ignored"]
    out: dict[str, list[str]] = {}
    problems: list[str] = []
    for kind, items in value.items():
        if kind != "python":
            problems.append(f"dependency kind `{kind}` is not supported (only `python`); ignored")
            continue
        lines = items.splitlines() if isinstance(items, str) else items
        if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
            problems.append("`dependencies.python` must be a list of requirements; ignored")
            continue
        kept = []
        for line in (x.strip() for x in lines):
            why = requirement_problem(line) if line else None
            if why:
                problems.append(f"`dependencies.python`: {why}; ignored")
            elif line:
                kept.append(line)
        out["python"] = kept
    return out, problems


def openclaw_credentials(meta: dict[str, str]) -> list[dict[str, Any]]:
    """OpenClaw's ``metadata.openclaw.requires.env`` and ``primaryEnv`` (the
    ``metadata`` values arrive as JSON text) as required credentials."""
    for host in ("openclaw", "clawdbot"):
        try:
            data = json.loads(meta.get(host) or "null")
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        requires = data.get("requires")
        names = requires.get("env") if isinstance(requires, dict) else None
        wanted = [n for n in (names if isinstance(names, list) else []) if isinstance(n, str)]
        primary = data.get("primaryEnv")
        if isinstance(primary, str):
            wanted.insert(0, primary)
        found, _ = as_credentials(list(dict.fromkeys(wanted)))
        if found:
            return found
    return []
