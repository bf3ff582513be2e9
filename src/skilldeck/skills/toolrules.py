"""Tool rules: ``Tool`` or ``Tool(specifier)``, the grammar Claude Code uses.

One grammar serves two masters: a skill's ``allowed-tools`` / ``forbidden-tools``
(composed in ``policy.py``) and the user's ``allow`` / ``ask`` / ``deny`` permission
lists (``agent/permissions.py``). Keeping the matcher here means both agree on what
``Bash(git diff:*)`` covers.

Specifier forms:

=====================  ===================================================
``Bash(git diff:*)``   command starts with ``git diff`` (word boundary)
``Bash(npm run *)``    command matches the glob
``Bash(ls)``           command is exactly ``ls``
``Read(./secrets/**)`` gitignore-style path, relative to the workspace;
                       ``//abs/path`` absolute, ``~/x`` under home. ``Read``
                       rules also cover Glob and Grep; ``Edit`` rules cover
                       Write and MultiEdit.
``WebFetch(domain:x)`` the URL's host is ``x`` or a subdomain of it
``Skill(name)``        the skill's name (glob allowed)
``mcp__srv__tool``     tool-name globs: ``mcp__srv__*``, ``mcp__srv``
=====================  ===================================================

A compound Bash command (``a && b | c``) is split into its simple commands: an
*allow* rule must cover every part; a *deny* rule hits if it covers any part.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

_RULE_RE = re.compile(r"^\s*([A-Za-z0-9_*?.\-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)

#: rule tool name → the tools it also governs
TOOL_FAMILIES: Mapping[str, frozenset[str]] = {
    "Read": frozenset({"Read", "Glob", "Grep"}),
    "Edit": frozenset({"Edit", "Write", "MultiEdit"}),
    "Task": frozenset({"Task", "Agent"}),
    "Agent": frozenset({"Task", "Agent"}),
}
PATH_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit", "Glob", "Grep"})
_PATH_KEYS = ("file_path", "path", "notebook_path")
_SHELL_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", ";;", "|&", "\n"})


@dataclass(frozen=True, slots=True)
class ToolRule:
    """A parsed rule. ``specifier`` is None for a whole-tool rule."""

    tool: str
    specifier: str | None = None

    @classmethod
    def parse(cls, text: str) -> ToolRule:
        match = _RULE_RE.match(text)
        if not match:
            raise ValueError(
                f"Invalid tool rule {text!r}: expected `Tool` or `Tool(specifier)`, "
                "e.g. `Bash(git diff:*)` or `Read(./src/**)`."
            )
        tool, spec = match.group(1), match.group(2)
        spec = spec.strip() if spec is not None else None
        if spec in ("", "*"):
            spec = None
        return cls(tool=tool, specifier=spec)

    def __str__(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"

    @property
    def whole_tool(self) -> bool:
        return self.specifier is None

    def names_tool(self, tool_name: str, *, family: bool = True) -> bool:
        """Does this rule speak about ``tool_name`` at all (ignoring the specifier)?

        With ``family`` a ``Read`` rule also speaks about Glob/Grep and an ``Edit`` rule
        about Write/MultiEdit (permission rules); without it only the named tool counts
        (what a skill's ``allowed-tools`` grants).
        """
        if family and tool_name in TOOL_FAMILIES.get(self.tool, ()):
            return True
        if any(ch in self.tool for ch in "*?"):
            return fnmatch.fnmatchcase(tool_name, self.tool)
        if self.tool.startswith("mcp__") and self.tool.count("__") == 1:
            return tool_name.startswith(self.tool + "__")  # a whole MCP server
        return tool_name == self.tool

    def matches(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any] | None,
        *,
        workspace: Path,
        deny: bool,
        family: bool = True,
    ) -> bool:
        """Does this rule cover this call? ``deny`` flips compound-command semantics."""
        if not self.names_tool(tool_name, family=family):
            return False
        if self.specifier is None:
            return True
        return _specifier_matches(self, tool_name, tool_input or {}, workspace, deny)


def parse_rules(texts: Iterable[str]) -> list[ToolRule]:
    return [ToolRule.parse(t) for t in texts if t and t.strip()]


def split_tool_list(value: str) -> list[str]:
    """``"Read, Bash(git diff:*) Grep"`` → ``["Read", "Bash(git diff:*)", "Grep"]``.

    Commas and spaces separate entries, except inside parentheses.
    """
    out: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in value:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (ch == "," or ch.isspace()):
            if current:
                out.append("".join(current))
                current = []
            continue
        current.append(ch)
    if current:
        out.append("".join(current))
    return out


# ---- specifier matching ------------------------------------------------------


def _specifier_matches(
    rule: ToolRule, tool_name: str, tool_input: Mapping[str, Any], workspace: Path, deny: bool
) -> bool:
    spec = rule.specifier or ""
    if tool_name == "Bash":
        return _bash_matches(spec, str(tool_input.get("command", "")), deny=deny)
    if tool_name in PATH_TOOLS:
        target = _path_argument(tool_name, tool_input, workspace)
        return target is not None and path_rule_matches(spec, target, workspace)
    if tool_name == "WebFetch" and spec.startswith("domain:"):
        host = urlsplit(str(tool_input.get("url", ""))).hostname or ""
        domain = spec.removeprefix("domain:").lower()
        return host == domain or host.endswith("." + domain)
    if tool_name == "Skill":
        return fnmatch.fnmatchcase(str(tool_input.get("skill", "")), spec)
    if tool_name in ("Task", "Agent"):
        return fnmatch.fnmatchcase(str(tool_input.get("subagent_type", "")), spec)
    primary = next((v for v in tool_input.values() if isinstance(v, str)), "")
    return fnmatch.fnmatchcase(primary, spec)


def _bash_matches(spec: str, command: str, *, deny: bool) -> bool:
    parts = split_shell_command(command)
    if not parts:
        return False
    hits = [_simple_command_matches(spec, part) for part in parts]
    return any(hits) if deny else all(hits)


def _simple_command_matches(spec: str, command: str) -> bool:
    if spec.endswith(":*"):
        prefix = spec[:-2].strip()
        return command == prefix or command.startswith(prefix + " ")
    if any(ch in spec for ch in "*?["):
        return fnmatch.fnmatchcase(command, spec)
    return command == spec


@lru_cache(maxsize=1024)
def split_shell_command(command: str) -> tuple[str, ...]:
    """Split on ``&&``, ``||``, ``;``, ``|`` and newlines, outside quotes."""
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    parts: list[str] = []
    current: list[str] = []
    try:
        for token in lexer:
            if token in _SHELL_SEPARATORS:
                if current:
                    parts.append(shlex.join(current) if len(current) > 1 else current[0])
                current = []
            else:
                current.append(token)
    except ValueError:  # unbalanced quotes: treat the whole thing as one command
        return (command.strip(),)
    if current:
        parts.append(shlex.join(current) if len(current) > 1 else current[0])
    return tuple(_normalise_command(p) for p in parts)


def _normalise_command(part: str) -> str:
    # shlex.join quotes words with spaces; prefix rules compare plain words, so undo
    # quoting only where it is safe (no spaces inside the word).
    try:
        return " ".join(shlex.split(part))
    except ValueError:
        return part


def _path_argument(tool_name: str, tool_input: Mapping[str, Any], workspace: Path) -> Path | None:
    for key in _PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            candidate = Path(os.path.expanduser(value))
            return candidate if candidate.is_absolute() else workspace / candidate
    if tool_name in ("Glob", "Grep"):
        return workspace  # searching the workspace itself
    return None


def path_rule_matches(spec: str, target: Path, workspace: Path) -> bool:
    """gitignore-style match of ``target`` against ``spec`` (see module docstring)."""
    if spec.startswith("//"):
        base, pattern = Path("/"), spec[2:]
    elif spec.startswith("~/"):
        base, pattern = Path.home(), spec[2:]
    elif spec.startswith("./"):
        base, pattern = workspace, spec[2:]
    elif spec.startswith("/"):
        base, pattern = workspace, spec[1:]
    else:
        base, pattern = workspace, spec
    absolute_target = os.path.normpath(os.path.abspath(target))
    absolute_base = os.path.normpath(os.path.abspath(base))
    if absolute_target != absolute_base and not absolute_target.startswith(
        absolute_base.rstrip("/") + "/"
    ):
        return False
    rel = absolute_target[len(absolute_base) :].lstrip("/")
    regex = _gitignore_regex(pattern.rstrip("/"), anchored="/" in pattern.rstrip("/"))
    return bool(regex.match(rel))


@lru_cache(maxsize=512)
def _gitignore_regex(pattern: str, *, anchored: bool) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    if pattern.endswith("/**"):  # `dir/**` covers the directory itself too
        pattern = pattern[:-3]
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    body = "".join(out)
    prefix = "" if anchored else "(?:.*/)?"
    # a directory pattern also covers everything below it
    return re.compile(f"^{prefix}{body}(?:/.*)?$", re.DOTALL)
