"""Bash permission rules: whether a ``Bash(...)`` specifier covers a command line.

Permission rules, skills' ``allowed-tools``, dynamic context and the read-only Bash
of the ``plan`` sub-agent all decide through these functions, and they decide on
what bash will run, from a real bash grammar (:mod:`skilldeck.skills.rules.shellparse`):

* an **allow** rule approves a line only when the whole line is literal simple
  commands (see :func:`~skilldeck.skills.rules.shellparse.parse_line`) and *every* one of
  them is covered; a prefix or glob rule never approves an argument that writes a
  file or runs a command (``--output=…``, ``-o FILE``, ``find -exec``/``-delete``,
  ``rg --pre``…), see :func:`arguments_safe`. The one other way: the line is exactly
  the rule's text (an "allow always" answer names the very command a human saw).
* a **deny** or **ask** rule matches when *any* program the line may start is
  covered (:mod:`skilldeck.skills.rules.shellprograms`), and matches every line whose
  programs cannot all be known (fail closed; :func:`bash_opaque_reason` says why).
"""

from __future__ import annotations

import fnmatch
import shlex
from collections.abc import Iterator
from functools import lru_cache

from skilldeck.skills.rules.shellparse import Argv, parse_line
from skilldeck.skills.rules.shellprograms import programs

__all__ = [
    "EXACT",
    "arguments_safe",
    "bash_allow_refusal",
    "bash_opaque_reason",
    "bash_rule_matches",
    "exact_spec",
    "split_shell_command",
]

_GLOB = "*?["
#: ``Bash(exact:TEXT)`` covers the command line TEXT only, read as text: how an "allow
#: always" answer is kept when the command would otherwise read as a pattern
EXACT = "exact:"
#: long options that write a file or run a command, for the programs people allow;
#: an abbreviation (``--out``) counts too, as GNU getopt and git accept them
_WRITING_LONG = (  # noqa: SIM905
    "output output-file output-directory output-document outfile out-file log-file logfile "
    "to-command exec execdir extcmd pre ext-diff upload-pack receive-pack compress-program "
    "use-compress-program command rsh shell editor open-files-in-pager exec-path config "
    "config-env run hostname-bin"
).split()
#: single-dash words that do the same (find's actions)
_WRITING_WORDS = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
#: programs whose ``-o`` only changes what is printed
_HARMLESS_O = frozenset({"grep", "egrep", "fgrep", "rg", "ls", "ps"})


def bash_rule_matches(spec: str, command: str, *, deny: bool) -> bool:
    """Does ``Bash(spec)`` cover ``command``? ``deny`` for deny and ask rules."""
    if spec.startswith(EXACT):  # an "allow always" answer: this very text, nothing else
        return command.strip() == spec[len(EXACT) :].strip()
    if deny:
        found = programs(command)
        return found.opaque is not None or any(_denies(spec, a) for a in found.candidates)
    if command.strip() == spec.strip() and not _pattern(spec):
        return True  # the user's (or an "allow always" answer's) own exact words
    simple = parse_line(command).simple
    return bool(simple) and all(_allows(spec, argv) for argv in simple or ())


def bash_opaque_reason(command: str) -> str | None:
    """Why the programs ``command`` may run cannot all be known, or None."""
    return programs(command).opaque


def bash_allow_refusal(command: str) -> str | None:
    """Why no prefix or glob rule can approve ``command``, or None when one could."""
    parsed = parse_line(command)
    if parsed.simple is None:
        return parsed.refusal
    return None if parsed.simple else "it is empty"


def split_shell_command(command: str) -> tuple[str, ...]:
    """The simple commands of a literal line, each re-quoted so parsing it again gives
    the same argv (``a | b; c && 'd; e'`` → ``a``, ``b``, ``c``, ``'d; e'``). A line
    that is not literal simple commands stays one part: no rule can split it."""
    simple = parse_line(command).simple
    if simple is None:
        return (command.strip(),) if command.strip() else ()
    return tuple(shlex.join(argv) for argv in simple)


def arguments_safe(argv: tuple[str, ...]) -> bool:
    """False when an argument makes the program write a file or run a command; a prefix
    rule (``Bash(git diff:*)``) vouches for the program, not for those."""
    program = argv[0] if argv else ""
    for word in argv[1:]:
        if word in _WRITING_WORDS:
            return False
        if word.startswith("--") and len(word) > 2:
            name = word[2:].split("=", 1)[0]
            if any(opt == name or opt.startswith(name) for opt in _WRITING_LONG):
                return False
        elif word.startswith("-") and len(word) > 1:
            if word[1] in "oO" and program not in _HARMLESS_O:
                return False
            if program == "sort" and "o" in word:
                return False
            if program == "tree" and "R" in word:
                return False
    return True


def exact_spec(command: str) -> str:
    """The specifier that covers exactly ``command`` (``ls *.py`` must not become a
    glob rule, ``x:*`` a prefix rule, ``*`` the whole tool)."""
    text = command.strip()
    return f"{EXACT}{text}" if _pattern(text) or text.startswith(EXACT) or not text else text


def _pattern(spec: str) -> bool:
    return spec.endswith(":*") or any(ch in spec for ch in _GLOB)


def _follows(wanted: Iterator[str], words: Argv) -> bool:
    want = next(wanted, None)
    after_option = False
    for word in words:
        if want is None:
            break
        if word is None or word == want:
            want, after_option = next(wanted, None), False
        elif word.startswith("-"):
            after_option = "=" not in word
        elif after_option:
            after_option = False  # the option's value
        else:
            return False  # another subcommand or argument: not this rule
    return want is None


@lru_cache(maxsize=1024)
def _spec_words(text: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(text))
    except ValueError:
        return tuple(text.split())


def _allows(spec: str, argv: tuple[str, ...]) -> bool:
    if not argv:
        return False
    if spec.endswith(":*"):
        prefix = _spec_words(spec[:-2])
        return bool(prefix) and argv[: len(prefix)] == prefix and arguments_safe(argv)
    if any(ch in spec for ch in _GLOB):
        first = spec.split(maxsplit=1)[0] if spec.split() else ""
        if first and not any(ch in first for ch in _GLOB) and argv[0] != first:
            return False
        return fnmatch.fnmatchcase(" ".join(argv), spec) and arguments_safe(argv)
    return argv == _spec_words(spec)


def _denies(spec: str, argv: Argv) -> bool:
    """Does a deny/ask spec cover this candidate? Its program must be the rule's first
    word and the rule's other words must follow, with only options (and one value
    after each) between them: ``git -C . push`` is a ``git push``, ``kubectl -n x
    delete`` a ``kubectl delete``. A ``None`` word (known only at run time) could be
    anything."""
    if spec.endswith(":*") or not any(ch in spec for ch in _GLOB):
        rule = _spec_words(spec[:-2] if spec.endswith(":*") else spec)
        if not rule:
            return True
        if not argv or argv[0] not in (None, rule[0].rstrip("/").rsplit("/", 1)[-1]):
            return False
        return _follows(iter(rule[1:]), argv[1:])
    if None not in argv:
        return fnmatch.fnmatchcase(" ".join(w or "" for w in argv), spec)
    known = " ".join(w or "" for w in argv[: argv.index(None)])
    literal = spec[: min(spec.index(ch) for ch in _GLOB if ch in spec)]
    return literal.startswith(known) or known.startswith(literal)
