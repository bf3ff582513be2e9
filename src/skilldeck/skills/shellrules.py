"""Bash permission rules: which simple commands a shell command line is made of,
and whether a ``Bash(...)`` specifier covers them.

Split out of :mod:`skilldeck.skills.toolrules` so the shell grammar has one home:
permission rules, skills' ``allowed-tools``, dynamic context and the read-only
Bash of the ``plan`` sub-agent all decide through these functions.
"""

from __future__ import annotations

import fnmatch
import shlex
from functools import lru_cache

__all__ = ["bash_rule_matches", "split_shell_command"]

_SHELL_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", ";;", "|&", "\n"})


def bash_rule_matches(spec: str, command: str, *, deny: bool) -> bool:
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
