"""Which programs a bash command line may run: what deny and ask rules are matched on.

A deny rule ``Bash(rm:*)`` must catch ``/bin/rm``, ``command rm``, ``env rm``,
``sudo -u x rm``, ``xargs rm``, ``find … -delete``, ``bash -c 'rm …'``, ``eval rm``,
and ``rm`` inside ``$(…)``, a subshell, a function or a loop body. So every command of
the parsed tree (:mod:`skilldeck.skills.rules.shellparse`) is resolved to the programs it
can start:

* the program itself, by basename (``/bin/rm`` → ``rm``; quotes and backslashes
  already removed by the parser);
* the program behind a known wrapper (``env``, ``sudo``, ``timeout 5`` …), with the
  wrapper's options skipped;
* commands inside shell strings: ``bash -c``/``sh -c``/``zsh -c``, ``eval``,
  ``su -c``, ``env -S``, ``trap``, ``alias``, ``watch`` — parsed again, a bounded
  number of levels deep;
* ``find -exec/-execdir/-ok/-okdir PROG``; ``find -delete`` counts as ``rm``;
* for a program not known to leave its arguments alone, every literal argument as a
  possible program (``setsid rm x``, ``flock f rm x``: wrappers nobody listed).

When that cannot be known — a program name from an expansion, a parse error,
``eval``/``source`` of what only exists at run time, a shell reading its commands
from standard input, arithmetic or ``${x@P}`` that can run hidden commands,
assignments to ``PATH``/``LD_PRELOAD``/``PS4``… — :attr:`Programs.opaque` says why,
and every deny and ask rule for Bash matches (fail closed).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from skilldeck.skills.rules.shelloptions import (
    command_texts,
    command_value,
    git_options,
    git_runs_commands,
)
from skilldeck.skills.rules.shellparse import MAX_COMMAND, Argv, parse_line
from skilldeck.skills.rules.shellwrappers import (
    PRECISE,
    SHELLS,
    WRAPPERS,
    OpaqueCommand,
    Wrapper,
    option_width,
    special_assignment,
)

__all__ = ["Programs", "programs"]

_MAX_DEPTH = 4
_MAX_LINES = 32
_MAX_NESTING = 64
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)
_DYNAMIC = ("$", "`")


@dataclass(frozen=True, slots=True)
class Programs:
    """Every argv that may start a program, each led by the program's basename."""

    candidates: tuple[Argv, ...]
    opaque: str | None


_Opaque = OpaqueCommand


def programs(command: str) -> Programs:
    """The programs ``command`` may run (cached: every deny and ask rule asks)."""
    if len(command) > MAX_COMMAND:
        return Programs((), f"it is longer than {MAX_COMMAND} characters, too long to analyse")
    return _programs(command)


@lru_cache(maxsize=1024)
def _programs(command: str) -> Programs:
    collector = _Collector()
    try:
        collector.line(command, 0)
    except _Opaque as why:
        return Programs(tuple(collector.out), str(why))
    return Programs(tuple(collector.out), None)


def _basename(word: str) -> str:
    return word.rstrip("/").rsplit("/", 1)[-1] if "/" in word else word


class _Collector:
    def __init__(self) -> None:
        self.out: list[Argv] = []
        self.lines = 0
        #: wrappers inside wrappers (``nice nice … rm`` must not exhaust the stack)
        self.nesting = 0

    def line(self, command: str, depth: int) -> None:
        """Every program of one command line (the top level or a shell string)."""
        self.lines += 1
        if depth > _MAX_DEPTH or self.lines > _MAX_LINES:
            raise _Opaque("shell strings are nested deeper than the rules follow")
        parsed = parse_line(command)
        if parsed.hazard:
            raise _Opaque(parsed.hazard)
        for name, value in parsed.assignments:
            self.assignment(name, value)
        for argv in parsed.invocations:
            self.argv(argv, depth)

    def assignment(self, name: str, value: str | None) -> None:
        if special_assignment(name):
            raise _Opaque(f"it sets {name}, which changes what later commands run")
        if value is not None and any(m in value for m in _DYNAMIC):
            raise _Opaque(f"the value given to {name} holds code bash may run later")

    def shell_string(self, text: str | None, depth: int, where: str) -> None:
        if text is None:
            raise _Opaque(f"{where} runs a command line only known at run time")
        self.line(text, depth + 1)

    def argv(self, argv: Argv, depth: int) -> None:
        if not argv:
            return
        if self.nesting >= _MAX_NESTING:
            raise _Opaque("it wraps programs in more layers than the rules follow")
        self.nesting += 1
        try:
            self._resolve(argv, depth)
        finally:
            self.nesting -= 1

    def _resolve(self, argv: Argv, depth: int) -> None:
        head = argv[0]
        if head is None:
            raise _Opaque("a program name comes from an expansion or substitution")
        name = _basename(head)
        argv = (name, *argv[1:])
        self.out.append(argv)
        handler = _HANDLERS.get(name)
        if handler is not None:
            handler(self, argv, depth)
        elif name in SHELLS:
            self.shell(argv, depth)
        elif name in WRAPPERS:
            self.wrapped(argv, WRAPPERS[name], depth)
        if name == "git":
            git_options(argv)
        self.option_commands(argv, depth)
        if name not in PRECISE and not (name == "git" and not git_runs_commands(argv)):
            self.anywhere(argv, depth)

    def anywhere(self, argv: Argv, depth: int) -> None:
        """Every literal argument of an unknown program may be a program it starts."""
        for k in range(1, len(argv)):
            word = argv[k]
            if word and not word.startswith("-") and (base := _basename(word)):
                self.out.append((base, *argv[k + 1 :]))

    def option_commands(self, argv: Argv, depth: int) -> None:
        """Option values that are command lines (``--to-command=…``, ``man -P …``,
        ``git -c core.fsmonitor=…``) are parsed as command lines too."""
        for k in range(1, len(argv)):
            for text in command_texts(command_value(argv, k), argv[0] or "a program"):
                self.shell_string(text, depth, f"an option of {argv[0]}")
        if argv[0] == "git":
            for k in range(2, len(argv)):
                word = argv[k] or ""
                name, _, alias = word.partition("=")
                if argv[k - 1] == "-c" and name.startswith("alias.") and alias[:1] != "!":
                    self.out.append(("git", *alias.split()))  # git -c alias.p=push p

    def wrapped(self, argv: Argv, spec: Wrapper, depth: int) -> None:
        """The program a wrapper runs, and the shell strings its options carry."""
        self.shell_options(argv, spec, depth)
        if not spec.peel:
            return
        i, positional = 1, spec.positional
        while i < len(argv):
            word = argv[i]
            if word is None:
                raise _Opaque(f"an expansion among {argv[0]}'s options hides what it runs")
            if word == "--":
                i += 1
                break
            if spec.assignments and (m := _ASSIGNMENT.fullmatch(word)):
                self.assignment(m.group(1), m.group(2))
            elif word.startswith("-") and len(word) > 1:
                i += option_width(word, spec)
                continue
            elif positional:
                positional -= 1
            else:
                break
            i += 1
        rest = argv[i:] or spec.default
        if spec.default:  # xargs adds arguments read at run time
            rest = (*rest, None)
        if rest:
            self.argv(rest, depth)
        if spec.joins_rest and argv[i:]:
            words = argv[i:]
            joined = None if None in words else " ".join(w or "" for w in words)
            self.shell_string(joined, depth, argv[0] or "a wrapper")

    def shell_options(self, argv: Argv, spec: Wrapper, depth: int) -> None:
        for k in range(1, len(argv)):
            word = argv[k]
            if not word or not word.startswith("-") or word == "--":
                continue
            nxt = argv[k + 1] if k + 1 < len(argv) else None
            if word.startswith("--"):
                key, eq, val = word[2:].partition("=")
                if key in spec.shell_long:
                    self.shell_string(val if eq else nxt, depth, f"{argv[0]} --{key}")
                continue
            for j, ch in enumerate(word[1:], 1):
                if ch in spec.shell_short:
                    value = word[j + 1 :] or nxt
                    self.shell_string(value, depth, f"{argv[0]} -{ch}")
                    break
                if ch in spec.short:
                    break

    def shell(self, argv: Argv, depth: int) -> None:
        """``bash -c STRING`` is parsed again; a shell reading standard input is opaque."""
        i, command_mode, stdin = 1, False, False
        while i < len(argv):
            word = argv[i]
            if word is None:
                raise _Opaque(f"an expansion among {argv[0]}'s options hides what it runs")
            if word in ("-", "--"):
                i += 1
                break
            if word.startswith("--"):
                i += 2 if word in ("--rcfile", "--init-file") else 1
                continue
            if word[:1] in "-+" and len(word) > 1:
                command_mode |= "c" in word
                stdin |= "s" in word
                i += 2 if ("o" in word or "O" in word) else 1
                continue
            break
        if command_mode:
            self.shell_string(argv[i] if i < len(argv) else None, depth, f"{argv[0]} -c")
        elif stdin or i >= len(argv):
            raise _Opaque(f"{argv[0]} reads the commands it runs from its input")
        elif argv[i] is None or _device(argv[i] or ""):
            raise _Opaque(f"{argv[0]} runs a script only known at run time")


def _device(path: str) -> bool:
    return path.startswith(("/dev/", "/proc/")) or path == "-"


# ---- builtins with behaviour of their own ---------------------------------------------


def _eval(c: _Collector, argv: Argv, depth: int) -> None:
    words = argv[1:]
    joined = None if None in words else " ".join(w or "" for w in words)
    c.shell_string(joined, depth, "eval")


def _opaque(why: str) -> Callable[[_Collector, Argv, int], None]:
    def handler(c: _Collector, argv: Argv, depth: int) -> None:
        raise _Opaque(f"{argv[0]} {why}")

    return handler


def _names(c: _Collector, argv: Argv, depth: int) -> None:
    """Builtins that take variable names: a name with ``[…]`` is arithmetic that can
    run ``$(…)`` (``unset 'a[$(rm x)]'``); ``-i`` makes later assignments arithmetic."""
    cmd = argv[0]
    for word in argv[1:]:
        if cmd in _DECLARERS and word and word.startswith("-") and ("i" in word or "n" in word):
            raise _Opaque(f"{cmd} {word} makes assignments evaluate code")
        if cmd in ("mapfile", "readarray") and word and word.startswith("-") and "C" in word:
            raise _Opaque(f"{cmd} -C runs a callback")
    for word in _name_words(argv):
        if word is None:
            raise _Opaque(f"{cmd} gets a variable name only known at run time")
        name, eq, value = word.partition("=")
        if not _NAME.fullmatch(name):
            raise _Opaque(f"{cmd} {word!r}: a subscript can evaluate code")
        if eq and cmd in _DECLARERS and any(m in value for m in (*_DYNAMIC, "[")):
            raise _Opaque(f"{cmd} {word!r}: the value can evaluate code")


#: options whose next word is a value (not a name) for the builtins that take names
_VALUE_OPTIONS = {"read": "dinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc"}


def _name_words(argv: Argv) -> list[str | None]:
    cmd, args = argv[0], list(argv[1:])
    flagged = {"printf": "-v", "wait": "-p", "test": "-v", "[": "-v"}
    if cmd in flagged:
        return [args[k + 1] for k in range(len(args) - 1) if args[k] == flagged[cmd]]
    if cmd == "getopts":
        return args[1:2]
    names: list[str | None] = []
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        if word is not None and word.startswith("-") and len(word) > 1:
            skip = word[-1] in _VALUE_OPTIONS.get(cmd or "", "") and word[-1] != "a"
            continue
        names.append(word)
    return names


def _let(c: _Collector, argv: Argv, depth: int) -> None:
    if any(w is None or re.search(r"[A-Za-z_$`\[]", w) for w in argv[1:]):
        raise _Opaque("let does arithmetic on names, which can run hidden commands")


def _find(c: _Collector, argv: Argv, depth: int) -> None:
    """``find -exec PROG … ;`` runs PROG; ``find -delete`` removes files like ``rm``."""
    if None in argv:
        raise _Opaque("an expansion in find's expression can be -delete or -exec")
    for k, word in enumerate(argv):
        if word == "-delete":
            c.out.append(("rm", None))  # removes files, with run-time arguments
        elif word in ("-exec", "-execdir", "-ok", "-okdir"):
            end = k + 1
            while end < len(argv) and argv[end] not in (";", "+"):
                end += 1
            c.argv(argv[k + 1 : end] or (None,), depth)


def _source(c: _Collector, argv: Argv, depth: int) -> None:
    """``source FILE`` runs a script (which no rule reads, like ``bash FILE``); from
    standard input, a pipe or a path only known at run time it is opaque."""
    path = argv[1] if len(argv) > 1 else None
    if path is None or _device(path):
        raise _Opaque(f"{argv[0]} runs commands only known at run time")


def _alias(c: _Collector, argv: Argv, depth: int) -> None:
    for word in argv[1:]:
        if word is None:
            raise _Opaque("alias gets a definition only known at run time")
        if "=" in word:
            c.shell_string(word.split("=", 1)[1], depth, "alias")


def _trap(c: _Collector, argv: Argv, depth: int) -> None:
    args = [w for w in argv[1:] if w is None or not w.startswith("-")]
    if args:
        c.shell_string(args[0], depth, "trap")


_DECLARERS = frozenset({"declare", "typeset", "local", "export", "readonly"})
_NAME_BUILTINS = (
    *_DECLARERS,
    *("unset", "read", "mapfile", "readarray", "getopts", "wait", "printf", "test", "["),
)
_HANDLERS: dict[str, Callable[[_Collector, Argv, int], None]] = {
    "eval": _eval,
    "source": _source,
    ".": _source,
    "hash": _opaque("can point a command name at another program"),
    "enable": _opaque("can load builtins from a shared library"),
    "fc": _opaque("re-runs commands from the history"),
    "bind": _opaque("can bind keys to commands"),
    "complete": _opaque("can register commands to run"),
    "compgen": _opaque("can run commands"),
    "let": _let,
    "find": _find,
    "alias": _alias,
    "trap": _trap,
    **dict.fromkeys(_NAME_BUILTINS, _names),
}
