"""Tool rules: ``Tool`` or ``Tool(specifier)``, the grammar Claude Code uses.

One grammar serves two masters: a skill's ``allowed-tools`` / ``forbidden-tools``
(composed in ``policy.py``) and the user's ``allow`` / ``ask`` / ``deny`` permission
lists (``agent/permissions/permissions.py``). Keeping the matcher here means both agree on what
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
``WebFetch(domain:x)`` the URL's canonical host is ``x`` or a subdomain of it
                       (``127.1``, ``0x7f000001``, ``Example.COM.`` are read the
                       way resolvers read them; see ``hostrules.py``)
``Skill(name)``        the skill's name (glob allowed), as the Skill tool resolves
                       it (``/name``, `` name``); deny rules also ignore case and a
                       ``plugin:`` prefix
``mcp__srv__tool``     tool-name globs: ``mcp__srv__*``, ``mcp__srv``
=====================  ===================================================

A tool-name pattern (``*``, ``T*``, ``Ta?k``) never *grants* a spawning tool
(``Task``, ``Agent``, ``TaskOutput``): a grant of those must name them literally
(and a skill cannot grant them at all, see ``policy.py``). Deny and ask rules with a
pattern still cover them.

A compound Bash command (``a && b | c``) is split into its simple commands: an
*allow* rule must cover every part; a *deny* rule hits if it covers any part.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skilldeck.skills.model.spec import call_name
from skilldeck.skills.rules.hostrules import domain_rule_matches
from skilldeck.skills.rules.pathrules import path_argument, path_rule_matches
from skilldeck.skills.rules.shellrules import bash_rule_matches, split_shell_command

__all__ = [
    "PATH_TOOLS",
    "SPAWNING_TOOLS",
    "TOOL_FAMILIES",
    "ToolRule",
    "parse_rules",
    "path_rule_matches",
    "split_shell_command",
    "split_tool_list",
    "unknown_rule_tool",
]

_RULE_RE = re.compile(r"^\s*([A-Za-z0-9_*?.\-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)

#: rule tool name → the tools it also governs
TOOL_FAMILIES: Mapping[str, frozenset[str]] = {
    "Read": frozenset({"Read", "Glob", "Grep"}),
    "Edit": frozenset({"Edit", "Write", "MultiEdit"}),
    "Task": frozenset({"Task", "Agent"}),
    "Agent": frozenset({"Task", "Agent"}),
}
PATH_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit", "Glob", "Grep"})
#: tools only a rule naming them literally can grant: a pattern never does
SPAWNING_TOOLS = frozenset({"Task", "Agent", "TaskOutput"})


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

    @property
    def is_pattern(self) -> bool:
        """Whether the tool name is a glob (``*``, ``T*``, ``Ta?k``)."""
        return any(ch in self.tool for ch in "*?[")

    def names_tool(self, tool_name: str, *, family: bool = True, grant: bool = False) -> bool:
        """Does this rule speak about ``tool_name`` at all (ignoring the specifier)?

        With ``family`` a ``Read`` rule also speaks about Glob/Grep and an ``Edit`` rule
        about Write/MultiEdit (permission rules); without it only the named tool counts
        (what a skill's ``allowed-tools`` grants). With ``grant`` (the rule would allow
        something) a pattern never names a spawning tool.
        """
        if family and tool_name in TOOL_FAMILIES.get(self.tool, ()):
            return True
        if self.is_pattern:
            if grant and tool_name in SPAWNING_TOOLS:
                return False
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
        if not self.names_tool(tool_name, family=family, grant=not deny):
            return False
        if self.specifier is None:
            return True
        return _specifier_matches(self, tool_name, tool_input or {}, workspace, deny)


def parse_rules(texts: Iterable[str]) -> list[ToolRule]:
    """Each rule of a list of rules (empty items skipped). ValueError for a lone string
    (never read as one rule per character: ``"Bash"`` is not ``B``, ``a``, ``s``,
    ``h``) or an item that is not a string."""
    if isinstance(texts, str):
        raise ValueError(f"expected a list of rules, got the string {texts!r}; write [{texts!r}]")
    rules: list[ToolRule] = []
    for text in texts:
        if not text:
            continue
        if not isinstance(text, str):
            raise ValueError(f"a rule is a string, not {type(text).__name__} {text!r}")
        if text.strip():
            rules.append(ToolRule.parse(text))
    return rules


def unknown_rule_tool(rule: ToolRule, known: Iterable[str]) -> tuple[bool, str | None]:
    """Whether ``rule`` names a tool that is not in ``known`` (so it matches nothing),
    with the closest known name (same letters in another case, or a near spelling).
    Patterns (``mcp__srv__*``, ``T*``) and MCP tool names (``mcp__srv__tool``, a whole
    server ``mcp__srv``) are never unknown: they name tools that come and go."""
    names = set(known)
    if rule.is_pattern or rule.tool.startswith("mcp__") or rule.tool in names:
        return False, None
    folded = {name.casefold(): name for name in names}
    if rule.tool.casefold() in folded:
        return True, folded[rule.tool.casefold()]
    close = difflib.get_close_matches(rule.tool, sorted(names), n=1, cutoff=0.6)
    return True, close[0] if close else None


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
        return bash_rule_matches(spec, str(tool_input.get("command", "")), deny=deny)
    if tool_name in PATH_TOOLS:
        target = path_argument(tool_name, tool_input, workspace)
        return target is not None and path_rule_matches(spec, target, workspace, deny=deny)
    if tool_name == "WebFetch" and spec.startswith("domain:"):
        url = str(tool_input.get("url", ""))
        return domain_rule_matches(spec.removeprefix("domain:"), url, deny=deny)
    if tool_name == "Skill":
        return skill_rule_matches(spec, tool_input.get("skill"), deny=deny)
    if tool_name in ("Task", "Agent"):
        return fnmatch.fnmatchcase(str(tool_input.get("subagent_type", "")), spec)
    primary = next((v for v in tool_input.values() if isinstance(v, str)), "")
    return fnmatch.fnmatchcase(primary, spec)


def skill_rule_matches(spec: str, raw: object, *, deny: bool) -> bool:
    """Does ``Skill(spec)`` cover a call for the skill ``raw``?

    The name is the one the Skill tool loads (:func:`~skilldeck.skills.model.spec.call_name`).
    An allow rule matches it exactly; a deny rule also matches it ignoring case and
    width (NFKC), and the part after a ``plugin:`` / ``plugin::`` namespace, so no other
    spelling of a denied skill's name gets past it.
    """
    if raw is None:
        return False  # a ``query`` call loads no skill
    if not isinstance(raw, str):
        return deny
    name = call_name(raw)
    if not deny:
        return fnmatch.fnmatchcase(name, spec)
    pattern = unicodedata.normalize("NFKC", spec).casefold()
    folded = unicodedata.normalize("NFKC", name).casefold()
    forms = {folded, folded.rsplit(":", 1)[-1], folded.partition("@")[0]}
    return any(fnmatch.fnmatchcase(form, pattern) for form in forms)
