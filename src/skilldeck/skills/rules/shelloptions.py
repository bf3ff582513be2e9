"""Option values that are command lines, as far as deny rules need to know.

Some programs run a command line given as an option's value rather than as their
own arguments: ``tar --to-command=…``, ``rsync -e …``, ``man -P …``, ``ssh -o
ProxyCommand=…``, git's ``-c core.fsmonitor=…``, aliases (``!cmd``) and ``rebase
-x``. The walk over commands (:mod:`skilldeck.skills.rules.shellprograms`) asks
:func:`command_value` which words are such command lines and parses each again;
:func:`git_options` and :func:`git_runs_commands` fail closed where git's own options
could set any config. The wrapper tables are in
:mod:`skilldeck.skills.rules.shellwrappers`.
"""

from __future__ import annotations

import re

from skilldeck.skills.rules.shellwords import RUNTIME, Argv
from skilldeck.skills.rules.shellwrappers import OpaqueCommand

__all__ = ["command_texts", "command_value", "git_options", "git_runs_commands"]

_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)

#: git options and subcommands that run a command line named in the arguments
_GIT_RUNNERS = frozenset(
    {
        "-c",
        "--config-env",
        "-x",
        "-u",
        "--exec",
        "--extcmd",
        "--upload-pack",
        "--receive-pack",
        "bisect",
        "submodule",
        "filter-branch",
        "difftool",
        "mergetool",
        "rebase",
    }
)


def git_runs_commands(argv: Argv) -> bool:
    """True when a git invocation may run a command line given in its arguments."""
    return any(
        w is None or w in _GIT_RUNNERS or w.split("=", 1)[0] in _GIT_RUNNERS for w in argv[1:]
    )


#: option names whose value is a command line somewhere (``--to-command``, ``--rsh``…)
_RUNS_OPTION = re.compile(
    r"exec|command|cmd|filter|rsh|shell|proxy|pager|editor|-pack|tool|action|program|browser|-bin"
)
#: short options whose value is a command line, per program
_SHORT_RUNS = {"man": "PH", "rsync": "e", "tar": "IF", "ssh": "o", "scp": "So", "sort": ""}
#: git subcommands and short options followed by a command line
_GIT_RUNNER_WORDS = frozenset({"-x", "-u", "run", "foreach"})
_UNKNOWN = object()


def command_value(argv: Argv, k: int) -> str | object | None:
    """The command line at ``argv[k]`` if an option says it is one: ``None`` when it is
    only known at run time, :data:`_UNKNOWN` (or a falsy word) when it is no command."""
    word, prev = argv[k], argv[k - 1]
    if argv[0] == "git" and prev in ("-c", *_GIT_RUNNER_WORDS):
        if word is None:
            return None
        return word.partition("=")[2] if prev == "-c" else word
    letters = _SHORT_RUNS.get(argv[0] or "", "")
    for source, offset in ((word, 2), (prev, None)):
        if source and letters and len(source) >= 2 and source[0] == "-" and source[1] in letters:
            if offset is not None and len(source) > 2:
                return source[offset:]  # -oProxyCommand=…
            if offset is None and len(source) == 2:
                return word  # -o ProxyCommand=…
    if word and word.startswith("--") and "=" in word:
        name, _, value = word[2:].partition("=")
        return value if _runs_option(name) else _UNKNOWN
    if prev and prev.startswith("--") and "=" not in prev and _runs_option(prev[2:]):
        return word
    return _UNKNOWN


def _runs_option(name: str) -> bool:
    return not name.startswith("no-") and _RUNS_OPTION.search(name) is not None


def command_texts(value: str | object | None, program: str) -> list[str]:
    """``!cmd`` (git aliases) and ``exec=cmd`` (tar actions) hold a command line too."""
    if value is _UNKNOWN:
        return []
    if value is None or RUNTIME in str(value):
        raise OpaqueCommand(f"an option of {program} runs a command line only known at run time")
    text = str(value).removeprefix("!")
    tail = _ASSIGNMENT.fullmatch(text)
    return [text, tail.group(2)] if tail else [text] if text.strip() else []


#: git's own options that take a value (before the subcommand)
_GIT_VALUE_OPTIONS = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace"})


def git_options(argv: Argv) -> None:
    """An expansion among git's own options (``git $X status``) can set any config,
    and much of git's config runs commands."""
    k = 1
    while k < len(argv):
        word = argv[k]
        if word is None:
            raise OpaqueCommand("an expansion among git's options can make it run any command")
        if not word.startswith("-"):
            return
        k += 2 if word in _GIT_VALUE_OPTIONS else 1
