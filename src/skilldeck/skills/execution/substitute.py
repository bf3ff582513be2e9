"""Placeholder substitution in a skill body (level 2), Claude Code compatible.

Recognised forms, and nothing else (so ``$HOME``, ``$PATH`` or ``$@`` in a shell
snippet are left exactly as written):

==========================  ===================================================
``$ARGUMENTS``              the argument string as given
``$ARGUMENTS[N]``, ``$N``   the N-th argument, 0-based, split like a shell does
                            (``'two words'`` is one argument)
``$name`` / ``${name}``     the argument at the position of ``name`` in the
                            skill's declared ``arguments``
``${SKILL_DIR}``            the skill folder (also ``${CLAUDE_SKILL_DIR}``)
``${SESSION_ID}``           the session id (also ``${CLAUDE_SESSION_ID}``)
``${PROJECT_DIR}``          the project directory (also ``${CLAUDE_PROJECT_DIR}``)
``\\$``                     before any form above: that form, literally
==========================  ===================================================

Two deliberate choices, because a body is mostly prose and shell snippets:

* ``$N`` is only replaced when the skill was invoked *with* arguments
  (``arguments is not None``). A body loaded without arguments keeps
  ``awk '{print $1}'`` intact; ``$ARGUMENTS`` and declared names become empty.
* ``${SESSION_ID}`` and ``${PROJECT_DIR}`` stay as written when the value is unknown,
  rather than silently becoming an empty path.

When arguments were given and the body uses no argument placeholder at all, the
arguments are appended as ``ARGUMENTS: <value>`` so the model still sees them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["split_arguments", "substitute"]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_PATTERN = re.compile(
    rf"""
    (?P<besc>\\)?\$\{{(?P<brace>{_NAME})\}}
  | (?<![A-Za-z0-9_$\\])(?P<esc>\\)?\$(?:
        ARGUMENTS\[(?P<idx>\d+)\]
      | (?P<pos>\d+)
      | (?P<name>{_NAME})
    )
    """,
    re.VERBOSE,
)

_DIR_ALIASES = {"SKILL_DIR", "CLAUDE_SKILL_DIR"}
_SESSION_ALIASES = {"SESSION_ID", "CLAUDE_SESSION_ID"}
_PROJECT_ALIASES = {"PROJECT_DIR", "CLAUDE_PROJECT_DIR"}


def split_arguments(arguments: str) -> list[str]:
    """Split like a POSIX shell (``shlex.split``, which a test compares); unbalanced
    quotes fall back to whitespace splitting (a model's stray apostrophe must not make
    the skill unusable). Linear in the length: ``shlex`` grows each word a character at
    a time, and one long word (a 1 MB ``args`` over MCP) cost minutes of CPU."""
    words: list[str] = []
    word: list[str] | None = None
    for piece in _SHELL_PIECE.finditer(arguments):
        kind = piece.lastgroup
        if kind == "space":
            if word is not None:
                words.append("".join(word))
            word = None
            continue
        if kind == "open":  # a quote that never closes, or a backslash at the very end
            return arguments.split()
        text = piece.group(kind or 0)
        if kind == "escaped":
            text = text[1:]
        elif kind == "double":
            text = _DOUBLE_ESCAPE.sub(r"\1", text[1:-1])
        elif kind == "single":
            text = text[1:-1]
        word = word if word is not None else []
        word.append(text)
    if word is not None:
        words.append("".join(word))
    return words


_SHELL_PIECE = re.compile(
    r"""(?P<space>[\ \t\r\n]+)
      | (?P<plain>[^\ \t\r\n'"\\]+)
      | (?P<escaped>\\[\s\S])
      | (?P<single>'[^']*')
      | (?P<double>"(?:[^"\\]|\\[\s\S])*")
      | (?P<open>['"\\])""",
    re.VERBOSE,
)
#: inside double quotes a backslash escapes only a backslash or a quote (as shlex)
_DOUBLE_ESCAPE = re.compile(r'\\([\\"])')


@dataclass
class _Values:
    arguments: str | None
    skill_dir: Path
    session_id: str | None
    project_dir: Path | None
    declared: tuple[str, ...]
    positional: list[str] = field(default_factory=list)
    used_arguments: bool = False

    def lookup(self, match: re.Match[str]) -> str | None:
        """The replacement for ``match``, or None when the form is not ours (or its
        value is unknown, so it must stay as written)."""
        if (brace := match.group("brace")) is not None:
            return self._brace(brace)
        if (idx := match.group("idx")) is not None:
            return self._positional(int(idx))
        if (pos := match.group("pos")) is not None:
            return None if self.arguments is None else self._positional(int(pos))
        name = match.group("name")
        if name == "ARGUMENTS":
            self.used_arguments = True
            return self.arguments or ""
        return self._declared(name)

    def is_ours(self, match: re.Match[str]) -> bool:
        """Whether an escaped ``\\$X`` names one of our forms (its value may be unknown)."""
        if (brace := match.group("brace")) is not None:
            return brace in _DIR_ALIASES | _SESSION_ALIASES | _PROJECT_ALIASES or (
                brace in self.declared
            )
        if match.group("idx") is not None or match.group("pos") is not None:
            return True
        name = match.group("name")
        return name == "ARGUMENTS" or name in self.declared

    def _positional(self, index: int) -> str:
        self.used_arguments = True
        return self.positional[index] if index < len(self.positional) else ""

    def _brace(self, name: str) -> str | None:
        if name in _DIR_ALIASES:
            return str(self.skill_dir)
        if name in _SESSION_ALIASES:
            return self.session_id
        if name in _PROJECT_ALIASES:
            return None if self.project_dir is None else str(self.project_dir)
        return self._declared(name)

    def _declared(self, name: str) -> str | None:
        if name not in self.declared:
            return None
        return self._positional(self.declared.index(name))


def substitute(
    body: str,
    *,
    arguments: str | None,
    skill_dir: Path,
    session_id: str | None,
    project_dir: Path | None,
    declared: Sequence[str] = (),
) -> str:
    """Return ``body`` with the placeholders above replaced.

    ``arguments`` is the raw argument string (``None`` = invoked without arguments);
    ``declared`` is the skill's ``arguments`` frontmatter list, in order.
    """
    values = _Values(
        arguments=arguments,
        skill_dir=skill_dir,
        session_id=session_id,
        project_dir=project_dir,
        declared=tuple(declared),
        positional=split_arguments(arguments) if arguments else [],
    )

    def replace(match: re.Match[str]) -> str:
        text = match.group(0)
        if match.group("esc") or match.group("besc"):
            # ``\\$X``: literal ``$X`` only when ``$X`` is one of our forms; an escape in
            # front of anything else belongs to a shell snippet, so it is kept.
            return text[1:] if values.is_ours(match) else text
        replacement = values.lookup(match)
        return text if replacement is None else replacement

    result = _PATTERN.sub(replace, body)
    if arguments and arguments.strip() and not values.used_arguments:
        result = f"{result.rstrip()}\n\nARGUMENTS: {arguments}"
    return result
