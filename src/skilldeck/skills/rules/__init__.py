"""The ``Tool(specifier)`` rule grammar shared by skills and permissions: Bash rules from
a real shell parse, path rules on real paths, glob matching, canonical hosts.

Other packages import these names from here; the modules behind them are this
package's own business. Names load lazily (an import of the facade costs nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.skills.rules.globmatch import (
        MAX_ALTERNATIVES,
        GlobMatcher,
        compile_matcher,
    )
    from skilldeck.skills.rules.hostrules import (
        canonical_host,
        canonical_url,
        domain_rule_matches,
        url_host,
    )
    from skilldeck.skills.rules.pathrules import (
        path_argument,
        resolved_path,
        tool_path_key,
    )
    from skilldeck.skills.rules.shelloptions import (
        command_texts,
        command_value,
        git_options,
        git_runs_commands,
    )
    from skilldeck.skills.rules.shellparse import (
        MAX_COMMAND,
        RUNTIME,
        Argv,
        ParsedLine,
        parse_line,
    )
    from skilldeck.skills.rules.shellprograms import (
        Programs,
        programs,
    )
    from skilldeck.skills.rules.shellrules import (
        EXACT,
        arguments_safe,
        bash_allow_refusal,
        bash_opaque_reason,
        bash_rule_matches,
        exact_spec,
    )
    from skilldeck.skills.rules.shellwords import (
        assignment_word,
        literal,
        option_word,
    )
    from skilldeck.skills.rules.shellwrappers import (
        PRECISE,
        SHELLS,
        WRAPPERS,
        OpaqueCommand,
        Wrapper,
        option_width,
        special_assignment,
    )
    from skilldeck.skills.rules.toolrules import (
        PATH_TOOLS,
        SPAWNING_TOOLS,
        TOOL_FAMILIES,
        ToolRule,
        parse_rules,
        path_rule_matches,
        split_shell_command,
        split_tool_list,
        unknown_rule_tool,
    )

_HOME: dict[str, str] = {
    "PATH_TOOLS": "toolrules",
    "SPAWNING_TOOLS": "toolrules",
    "TOOL_FAMILIES": "toolrules",
    "ToolRule": "toolrules",
    "parse_rules": "toolrules",
    "path_rule_matches": "toolrules",
    "split_shell_command": "toolrules",
    "split_tool_list": "toolrules",
    "unknown_rule_tool": "toolrules",
    "path_argument": "pathrules",
    "resolved_path": "pathrules",
    "tool_path_key": "pathrules",
    "MAX_ALTERNATIVES": "globmatch",
    "GlobMatcher": "globmatch",
    "compile_matcher": "globmatch",
    "canonical_host": "hostrules",
    "canonical_url": "hostrules",
    "domain_rule_matches": "hostrules",
    "url_host": "hostrules",
    "EXACT": "shellrules",
    "arguments_safe": "shellrules",
    "bash_allow_refusal": "shellrules",
    "bash_opaque_reason": "shellrules",
    "bash_rule_matches": "shellrules",
    "exact_spec": "shellrules",
    "MAX_COMMAND": "shellparse",
    "RUNTIME": "shellparse",
    "Argv": "shellparse",
    "ParsedLine": "shellparse",
    "parse_line": "shellparse",
    "assignment_word": "shellwords",
    "literal": "shellwords",
    "option_word": "shellwords",
    "Programs": "shellprograms",
    "programs": "shellprograms",
    "PRECISE": "shellwrappers",
    "SHELLS": "shellwrappers",
    "WRAPPERS": "shellwrappers",
    "OpaqueCommand": "shellwrappers",
    "Wrapper": "shellwrappers",
    "command_texts": "shelloptions",
    "command_value": "shelloptions",
    "git_options": "shelloptions",
    "git_runs_commands": "shelloptions",
    "option_width": "shellwrappers",
    "special_assignment": "shellwrappers",
}

__all__ = [
    "EXACT",
    "MAX_ALTERNATIVES",
    "MAX_COMMAND",
    "PATH_TOOLS",
    "PRECISE",
    "RUNTIME",
    "SHELLS",
    "SPAWNING_TOOLS",
    "TOOL_FAMILIES",
    "WRAPPERS",
    "Argv",
    "GlobMatcher",
    "OpaqueCommand",
    "ParsedLine",
    "Programs",
    "ToolRule",
    "Wrapper",
    "arguments_safe",
    "assignment_word",
    "bash_allow_refusal",
    "bash_opaque_reason",
    "bash_rule_matches",
    "canonical_host",
    "canonical_url",
    "command_texts",
    "command_value",
    "compile_matcher",
    "domain_rule_matches",
    "exact_spec",
    "git_options",
    "git_runs_commands",
    "literal",
    "option_width",
    "option_word",
    "parse_line",
    "parse_rules",
    "path_argument",
    "path_rule_matches",
    "programs",
    "resolved_path",
    "special_assignment",
    "split_shell_command",
    "split_tool_list",
    "tool_path_key",
    "unknown_rule_tool",
    "url_host",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
