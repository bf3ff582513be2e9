"""The permission policy an agent's gate starts from: config rules plus the caller's.

Step 4 (**rules**) of the tool-narrowing pipeline (``agent/toolset.py``): the mode
is the caller's, else the agent definition's, else the config's; ``allow`` / ``ask``
/ ``deny`` rules come from every config file (a workspace's ``deny = []`` never erases
the user's deny rules), the environment and the caller (``--allow``, ``--deny``…).
Tools a ``deny`` rule removes entirely are not shown either. A rule naming a tool
that does not exist (``bash``, ``Bsah``) matches nothing — a deny rule that denies
nothing — so it is a ``ConfigWarning`` with the likely name.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

from skilldeck.agent.permissions.permissions import MODES, Mode, PermissionPolicy
from skilldeck.agent.spec import PermissionOptions
from skilldeck.agent.subagents import AgentDefinition
from skilldeck.config import Settings
from skilldeck.errors import ConfigError, ConfigWarning
from skilldeck.settings.checks import error_origin
from skilldeck.settings.precedence import file_rules
from skilldeck.skills.policy.policy import ToolPolicy
from skilldeck.skills.rules.toolrules import TOOL_FAMILIES, ToolRule, unknown_rule_tool
from skilldeck.tools.builtin import BUILTIN_TOOL_NAMES

__all__ = ["KNOWN_TOOLS", "config_rules", "permission_policy", "warn_unknown_tools"]

#: tools a rule may name although a given agent does not hold them (one config file
#: serves every agent: a sub-agent without ``Task``, a run with ``tools=`` replaced).
#: ``NotebookEdit`` is Claude Code's: settings shared with it name it, and skilldeck,
#: which has no such tool, lets the rule stand silently rather than call it a typo.
KNOWN_TOOLS = frozenset(
    {*BUILTIN_TOOL_NAMES, *TOOL_FAMILIES, "Memory", "Skill", "TaskOutput", "NotebookEdit"}
)
_EFFECT = {"allow": "allows nothing", "ask": "asks about nothing", "deny": "denies nothing"}


def permission_policy(
    settings: Settings,
    options: PermissionOptions,
    *,
    definition: AgentDefinition | None = None,
    skill_policy: ToolPolicy | None = None,
    read_only_tools: Sequence[str] = (),
) -> PermissionPolicy:
    """Config rules plus the caller's; the mode is the caller's, else the agent
    definition's, else the config's. Bad rules or modes raise ConfigError."""
    conf = settings.permissions
    mode = options.mode or (definition.permission_mode if definition else None) or conf.mode
    if mode not in MODES:
        raise ConfigError(f"Unknown permission mode {mode!r}; use one of {', '.join(MODES)}.")
    try:
        return PermissionPolicy.from_lists(
            mode=_as_mode(mode),
            allow=[*config_rules(settings, "allow"), *options.allow],
            ask=[*config_rules(settings, "ask"), *options.ask],
            deny=[*config_rules(settings, "deny"), *options.deny],
            skill_policy=skill_policy,
            read_only_tools=read_only_tools,
        )
    except ValueError as e:
        raise ConfigError(f"Invalid permission rule: {e}{_where_set(settings, options)}") from e


def config_rules(settings: Settings, key: str) -> list[str]:
    """``permissions.<key>`` from every config file, merged: a workspace config's
    ``deny = []`` must not erase the user's deny rules (settings merging replaces
    lists, so each file's list counts, as :mod:`skilldeck.settings.precedence` says),
    plus what the environment or the arguments set. The files as loaded, not re-read."""
    rules = [str(r) for r in getattr(settings.permissions, key)]
    rules += file_rules(settings.layers.files, key)  # the workspace's only when trusted
    return list(dict.fromkeys(rules))


def warn_unknown_tools(
    settings: Settings, options: PermissionOptions, offered: Iterable[str]
) -> None:
    """A ``ConfigWarning`` for each rule (config or caller) naming a tool that neither
    skilldeck nor this agent has, with the likely name: ``deny=["bash"]`` denies
    nothing. Patterns and MCP names (``mcp__srv__tool``) are left alone."""
    known = KNOWN_TOOLS | set(offered)
    for key in ("allow", "ask", "deny"):
        for text in [*config_rules(settings, key), *getattr(options, key)]:
            try:
                rule = ToolRule.parse(str(text))
            except ValueError:
                continue  # permission_policy reports it as a ConfigError
            unknown, guess = unknown_rule_tool(rule, known)
            if not unknown:
                continue
            where = _origin_of(settings, key, str(text))
            place = f"{where}: permissions.{key}" if where else key
            hint = f" (did you mean `{ToolRule(guess, rule.specifier)}`?)" if guess else ""
            warnings.warn(
                f"{place} rule `{text}` names no tool, so it {_EFFECT[key]}{hint}",
                ConfigWarning,
                stacklevel=2,
            )


def _where_set(settings: Settings, options: PermissionOptions) -> str:
    """`` (permissions.KEY) Fix it in FILE.`` for the first rule that does not parse,
    in the order they are read, when a config source set it ('' when the caller
    did): the merged lists lose where each rule came from."""
    for key in ("allow", "ask", "deny"):
        for rule in [*config_rules(settings, key), *getattr(options, key)]:
            try:
                ToolRule.parse(str(rule))
            except ValueError:
                where = _origin_of(settings, key, str(rule))
                return f" (permissions.{key}) Fix it in {where}." if where else ""
    return ""


def _origin_of(settings: Settings, key: str, rule: str) -> str | None:
    """The file or variable whose ``permissions.<key>`` holds ``rule``, or None."""
    for layer in settings.layers.layers:
        section = layer.data.get("permissions")
        found = section.get(key) if isinstance(section, dict) else None
        if isinstance(found, list) and rule in (str(r) for r in found):
            return error_origin(("permissions", key), (layer,)) or layer.where
    return None


def _as_mode(mode: str) -> Mode:
    for known in MODES:
        if known == mode:
            return known
    raise ConfigError(f"Unknown permission mode {mode!r}; use one of {', '.join(MODES)}.")
