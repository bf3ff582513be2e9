"""What bash programs do with their arguments, as far as deny rules need to know.

The tables and the option reading that deny rules rely on (the walk over commands
is in :mod:`skilldeck.skills.rules.shellprograms`):

* :data:`WRAPPERS` — programs that run another program named in their arguments,
  with the options that take a value (so ``sudo -u bob rm`` resolves to ``rm``) and
  the options whose value is a whole shell command line (``su -c``, ``env -S``);
* :data:`SHELLS` — interpreters of bash-like command lines (``-c STRING`` parsed again);
* :data:`PRECISE` — programs known never to run their arguments: only these are
  spared the "every literal argument may be a program" rule, so an unknown wrapper
  (``setsid rm x``) is still caught;
* :func:`special_assignment` — variables whose value changes what later commands run;
* :func:`option_width` — how many words a wrapper's option takes.

Option values that are themselves command lines (``--to-command=…``, ``git -c …``)
are read in :mod:`skilldeck.skills.rules.shelloptions`.
"""

from __future__ import annotations

from dataclasses import dataclass

from skilldeck.skills.rules.shellwords import Argv

__all__ = [
    "PRECISE",
    "SHELLS",
    "WRAPPERS",
    "OpaqueCommand",
    "Wrapper",
    "option_width",
    "special_assignment",
]


class OpaqueCommand(Exception):
    """The line can run something its text does not show (deny rules fail closed)."""


@dataclass(frozen=True, slots=True)
class Wrapper:
    #: short options (letters) whose value is the next word or the rest of the cluster
    short: str = ""
    #: long options (``--name``) whose value is the next word unless given with ``=``
    long: frozenset[str] = frozenset()
    #: words that are not options but still come before the program (``timeout 5``)
    positional: int = 0
    #: options whose value is a shell command line
    shell_short: str = ""
    shell_long: frozenset[str] = frozenset()
    #: ``NAME=value`` words may precede the program (``env``, ``sudo``)
    assignments: bool = False
    #: ``nice -10 cmd``
    numeric: bool = False
    #: what runs when no program is named (``xargs`` → ``echo``)
    default: Argv = ()
    #: False when the wrapper runs no program of its own (``su`` only runs ``-c``)
    peel: bool = True
    #: the rest of the words are also joined into one shell command line (``watch``)
    joins_rest: bool = False


def _w(**kw: object) -> Wrapper:
    for key in ("long", "shell_long"):
        if key in kw:
            kw[key] = frozenset(str(kw[key]).split())
    return Wrapper(**kw)  # type: ignore[arg-type]


WRAPPERS: dict[str, Wrapper] = {
    "command": _w(),
    "builtin": _w(),
    "exec": _w(short="a"),
    "nohup": _w(),
    "setsid": _w(),
    "coproc": _w(),
    "time": _w(short="fo", long="format output"),
    "env": _w(
        short="uC", long="unset chdir", shell_short="S", shell_long="split-string", assignments=True
    ),
    "sudo": _w(
        short="ugCDhprtTU",
        long="user group close-from chdir host prompt role type command-timeout other-user",
        assignments=True,
        joins_rest=True,
    ),
    "doas": _w(short="uC", joins_rest=True),
    "nice": _w(short="n", long="adjustment", numeric=True),
    "ionice": _w(short="cnpPu", long="class classdata pid pgid uid"),
    "chrt": _w(positional=1),
    "taskset": _w(positional=1),
    "numactl": _w(short="CNmpiP", long="cpunodebind physcpubind membind preferred interleave"),
    "stdbuf": _w(short="ioe", long="input output error"),
    "timeout": _w(short="sk", long="signal kill-after", positional=1),
    "chroot": _w(long="userspec groups", positional=1),
    "xargs": _w(
        short="ILnPsdEae",
        long="max-lines max-args max-procs max-chars delimiter eof arg-file process-slot-var",
        default=("echo",),
    ),
    "busybox": _w(),
    "strace": _w(short="oepsuEabIOPSX", long="output trace signal user env"),
    "ltrace": _w(short="oepsuEaAnlLxX", long="output library"),
    "flock": _w(
        short="wE",
        long="timeout conflict-exit-code",
        positional=1,
        shell_short="c",
        shell_long="command",
    ),
    "su": _w(
        short="sgG",
        long="shell group supp-group",
        shell_short="c",
        shell_long="command session-command",
        peel=False,
    ),
    "runuser": _w(
        short="sgGu",
        long="shell group supp-group user",
        shell_short="c",
        shell_long="command session-command",
        peel=False,
    ),
    "script": _w(
        short="EIOBTm",
        long="log-in log-out log-io log-timing",
        shell_short="c",
        shell_long="command",
        peel=False,
    ),
    "watch": _w(short="nq", long="interval differences", joins_rest=True),
    "unbuffer": _w(),
    "catchsegv": _w(),
    "fakeroot": _w(),
    "faketime": _w(positional=1),
    "unshare": _w(short="SG", long="setuid setgid"),
    "nsenter": _w(short="tSG", long="target setuid setgid"),
    "systemd-run": _w(short="pEu", long="property setenv unit"),
    "sg": _w(positional=1, shell_short="c"),
}

SHELLS = frozenset(
    {
        "sh",
        "bash",
        "rbash",
        "dash",
        "zsh",
        "ksh",
        "mksh",
        "pdksh",
        "ash",
        "yash",
        "posh",
        "fish",
        "csh",
        "tcsh",
    }
)

#: programs that never start another program named in their arguments
PRECISE = frozenset(
    {
        "echo",
        "printf",
        "ls",
        "cat",
        "head",
        "tail",
        "wc",
        "pwd",
        "cd",
        "true",
        "false",
        "grep",
        "egrep",
        "fgrep",
        "test",
        "[",
        "man",
        "which",
        "type",
        "whatis",
        "help",
        "diff",
        "cmp",
        "stat",
        "file",
        "du",
        "df",
        "mkdir",
        "rmdir",
        "touch",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "date",
        "uname",
        "id",
        "whoami",
        "tr",
        "cut",
        "uniq",
        "comm",
        "nl",
        "rev",
        "base64",
        "sha256sum",
        "sha1sum",
        "md5sum",
        "cksum",
        "jq",
        "tee",
        "cp",
        "mv",
        "ln",
        "chmod",
        "chown",
        "printenv",
        "sleep",
        "seq",
        "tree",
        "hostname",
        "exit",
        "return",
        "shift",
        "set",
        "shopt",
        "unset",
        "export",
        "declare",
        "typeset",
        "local",
        "readonly",
        "read",
        "mapfile",
        "readarray",
        "getopts",
        "wait",
        "let",
        "rm",
        "pytest",
        "column",
        "fold",
        "paste",
        "join",
        "expand",
        "od",
        "xxd",
        "hexdump",
        "strings",
        "less",
        "more",
    }
)

#: variables that change which program runs, or run code when set
_SPECIAL = frozenset(
    {
        "PATH",
        "BASH_ENV",
        "ENV",
        "PS1",
        "PS2",
        "PS3",
        "PS4",
        "PROMPT_COMMAND",
        "SHELLOPTS",
        "BASHOPTS",
        "IFS",
        "CDPATH",
        "GLOBIGNORE",
        "EXECIGNORE",
        "BASH_LOADABLES_PATH",
        "BASH_XTRACEFD",
        "HOME",
        "SHELL",
        "PAGER",
        "EDITOR",
        "VISUAL",
        "MANPAGER",
        "LESSOPEN",
        "LESSCLOSE",
        "PYTHONSTARTUP",
        "PERL5OPT",
        "NODE_OPTIONS",
        "RUBYOPT",
        "TMPDIR",
    }
)


def special_assignment(name: str) -> bool:
    """Setting this variable can make a later command run something else."""
    return (
        name in _SPECIAL
        or name.startswith(("LD_", "GIT_", "BASH_FUNC_", "DYLD_", "PYTHON"))
        or name.endswith(("_COMMAND", "_PAGER", "_EDITOR", "_SHELL", "PATH"))
    )


def option_width(word: str, spec: Wrapper) -> int:
    """How many words an option of a wrapper takes (itself, plus maybe its value)."""
    if word.startswith("--"):
        key, eq, _ = word[2:].partition("=")
        return 2 if not eq and key in (spec.long | spec.shell_long) else 1
    if spec.numeric and word[1:].isdigit():
        return 1
    for j, ch in enumerate(word[1:], 1):
        if ch in spec.short or ch in spec.shell_short:
            return 2 if j == len(word) - 1 else 1
    return 1
