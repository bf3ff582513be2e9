"""The ``skilldeck`` entry point: imports only the command being invoked.

Each command module (and with it the agent, the model SDKs, MCP, pydantic…) costs
tens to hundreds of milliseconds to import, and a CLI is judged by how fast it
answers. So (measured by ``python -m bench startup``, against skills-ref's
``agentskills``):

* ``--version`` answers from :data:`skilldeck.__version__` before typer is imported;
* ``--help`` (or no argument, or an unknown command) lists the command groups and
  root commands from the tables below without importing any command module;
* ``skilldeck WORD …`` imports only the command modules registered under ``WORD``;
* ``skills list --json``, ``skills validate PATH…`` and ``skills match QUERY`` in
  their plain shapes do not build the app at all: see :data:`_FAST_PATHS` (typer
  itself is imported only past that point);
* help and usage errors are click's plain text (``rich_markup_mode=None``): typer's
  rich panels import rich's markdown and traceback machinery, about 0.15 s of CPU
  for every ``--help`` and every misspelt option.

Each command module exposes ``register(app)``; modules hold no business logic.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from skilldeck import __version__
from skilldeck.cli.termtext import printable
from skilldeck.errors import SkilldeckError

if TYPE_CHECKING:
    import typer

#: top-level word → (its help, the command modules that register into it)
_GROUPS: dict[str, tuple[str, list[str]]] = {
    "skills": (
        "Discover, validate, show, run and package skills.",
        [
            "skilldeck.cli.skills.skills_cmd",
            "skilldeck.cli.skills.skills_show_cmd",
            "skilldeck.cli.skills.skills_validate_cmd",
            "skilldeck.cli.skills.skills_exec_cmd",
            "skilldeck.cli.skills.skills_match_cmd",
            "skilldeck.cli.skills.skills_eval_cmd",
            "skilldeck.cli.skills.skills_pkg_cmd",
            "skilldeck.cli.skills.skills_sources_cmd",
            "skilldeck.cli.skills.skills_scan_cmd",
            "skilldeck.cli.skills.skills_trust_cmd",
            "skilldeck.cli.skills.skills_deps_cmd",
        ],
    ),
    "sessions": ("List and inspect stored sessions.", ["skilldeck.cli.sessions_cmd"]),
    "agents": ("List and inspect agent definitions (AGENT.md).", ["skilldeck.cli.agents_cmd"]),
    "mcp": ("Serve skills over MCP.", ["skilldeck.cli.mcp_cmd"]),
    "secrets": (
        "Store the credentials skills declare (OS keyring or a 0600 file).",
        ["skilldeck.cli.secrets_cmd"],
    ),
}
#: top-level commands living on the root app → (their module, their one-line help as
#: the module registers it: the root ``--help`` lists it without importing the module;
#: ``tests/unit/cli/test_main_lazy.py`` keeps the two equal)
_ROOT_COMMANDS: dict[str, tuple[str, str]] = {
    "chat": ("skilldeck.cli.chat_cmd", "Talk with the agent interactively."),
    "run": ("skilldeck.cli.run.run_cmd", "Run a task with the agent until it is done."),
    "resume": ("skilldeck.cli.run.run_cmd", "Continue a paused or interrupted session."),
    "trust": (
        "skilldeck.cli.trust_cmd",
        "Trust a folder's own config and skills (see --list, --revoke).",
    ),
    "web": ("skilldeck.web.command", "Serve the web chat (AG-UI at /agui) on 127.0.0.1:8765."),
}
#: in a group of several modules, which module registers each command: ``skills
#: validate`` imports only ``skills_validate_cmd``, not the trust and packaging commands (and
#: the settings they import); the group's ``--help`` imports them all. A test keeps this
#: table equal to what the modules register.
_GROUP_COMMANDS: dict[str, dict[str, str]] = {
    "skills": {
        **dict.fromkeys(("list", "enable", "disable", "new"), "skilldeck.cli.skills.skills_cmd"),
        **dict.fromkeys(("show", "prompt"), "skilldeck.cli.skills.skills_show_cmd"),
        "validate": "skilldeck.cli.skills.skills_validate_cmd",
        **dict.fromkeys(("run", "audit"), "skilldeck.cli.skills.skills_exec_cmd"),
        "match": "skilldeck.cli.skills.skills_match_cmd",
        "eval": "skilldeck.cli.skills.skills_eval_cmd",
        **dict.fromkeys(
            ("pack", "keygen", "install", "verify", "uninstall"),
            "skilldeck.cli.skills.skills_pkg_cmd",
        ),
        **dict.fromkeys(("check", "update", "pin"), "skilldeck.cli.skills.skills_sources_cmd"),
        "scan": "skilldeck.cli.skills.skills_scan_cmd",
        "trust": "skilldeck.cli.skills.skills_trust_cmd",
        "deps": "skilldeck.cli.skills.skills_deps_cmd",
    },
}
#: ``skills WORD`` → the module whose ``try_fast(argv)`` answers its plain shapes
#: without typer, rich or pydantic (an exit code), or declines (None) and the typer
#: app runs. Each module's docstring says which shapes, and the benchmark it answers to.
_FAST_PATHS: dict[str, str] = {
    "list": "skilldeck.cli.skills.fast.fastpath",
    "validate": "skilldeck.cli.skills.fast.fast_validate",
    "match": "skilldeck.cli.skills.fast.fast_match",
}
_HELP = "A runtime for Agent Skills: discover, validate, run and compose skills."
_VERSION_FLAGS = ("--version", "-V")


def _register(module_name: str, app: typer.Typer) -> None:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name == module_name:
            return  # an optional command module that this build does not ship
        raise
    module.register(app)


def _print_version() -> None:
    sys.stdout.write(f"skilldeck {__version__}\n")


def _show_version(value: bool) -> None:
    """``--version``: checked while the options are parsed, before a command is needed."""
    import typer

    if value:
        _print_version()
        raise typer.Exit(0)


def _root_callback() -> Callable[[bool], None]:
    """The root callback with its ``--version`` option (typer reads the signature)."""
    import typer

    def root(
        version: bool = typer.Option(
            False,
            *_VERSION_FLAGS,
            callback=_show_version,
            is_eager=True,
            help="Show skilldeck's version and exit.",
        ),
    ) -> None:
        del version  # handled by its callback

    root.__doc__ = _HELP
    return root


def build_app(argv: list[str]) -> typer.Typer:
    """The typer app for ``argv``: only the command group (or root command) that its
    first word names is imported; for anything else (``--help``, no word, an unknown
    word) every group and root command is listed from the tables, none imported."""
    import typer

    app = typer.Typer(
        name="skilldeck",
        help=_HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    # A callback keeps the root a command group even when only one command is
    # registered (``skilldeck chat`` alone would otherwise become the root command).
    app.callback()(_root_callback())
    words = [a for a in argv if not a.startswith("-")]
    first = words[0] if words else None
    if first in _GROUPS:
        help_text, modules = _GROUPS[first]
        command = words[1] if len(words) > 1 else None
        owner = _GROUP_COMMANDS.get(first, {}).get(command or "")
        sub = _group(help_text)
        for module_name in [owner] if owner else modules:
            _register(module_name, sub)
        app.add_typer(sub, name=first)
    elif first in _ROOT_COMMANDS:
        module_name = _ROOT_COMMANDS[first][0]
        _register(module_name, app)
    else:
        _add_listing(app)
    return app


def _group(help_text: str) -> typer.Typer:
    import typer

    return typer.Typer(help=help_text, no_args_is_help=True, rich_markup_mode=None)


def _listed_only() -> None:
    """Stands for a command in the root listing; never run (its word builds the real one)."""


def _add_listing(app: typer.Typer) -> None:
    """Every root command and group by name and help, without importing their modules:
    enough for the root ``--help`` and for click's "No such command" message."""
    for name, (_module, help_text) in _ROOT_COMMANDS.items():
        app.command(name, help=help_text)(_listed_only)
    for name, (help_text, _modules) in _GROUPS.items():
        app.add_typer(_group(help_text), name=name)


def _config_warnings_as_lines() -> None:
    """A :class:`~skilldeck.errors.ConfigWarning` (an ignored setting) or an
    :class:`~skilldeck.errors.EvalWarning` (an ignored eval-file field) prints as one
    ``warning:`` line on stderr like every other CLI message, not as Python's
    two-line warning with a source location; other warnings are left as they are.
    Each line once: the warning filter's memory is reset whenever an import touches
    the filters, and ``skills match`` loads settings twice (it printed the
    untrusted-folder line twice). (Matched by name: the fast path does not import
    the error module.)"""
    import warnings

    shown = warnings.showwarning
    printed: set[str] = set()

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if category.__name__ in ("ConfigWarning", "EvalWarning"):
            if str(message) not in printed:
                printed.add(str(message))
                sys.stderr.write(f"warning: {printable(str(message), lines=True)}\n")
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show


def _valid_arguments(argv: list[str]) -> list[str]:
    """The arguments with bytes that are not UTF-8 (which Python hands over as lone
    surrogates, ``$'\\xff'`` in a shell) replaced by U+FFFD, so a task or a request
    can be stored, sent and ranked; an argument naming an existing file is kept as
    it is (the filesystem takes those bytes back)."""
    out = []
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            if not os.path.lexists(arg):
                arg = _replace_invalid(arg)
        out.append(arg)
    return out


def _replace_invalid(arg: str) -> str:
    try:  # the bytes the shell passed, decoded again: one U+FFFD for each bad run
        return arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a surrogate no byte decodes to (not from argv)
        return arg.encode("utf-8", "replace").decode("utf-8")


def main() -> None:
    argv = _valid_arguments(sys.argv[1:])
    if len(argv) == 1 and argv[0] in _VERSION_FLAGS:
        _print_version()  # before typer: a version check must cost nothing
        return
    _config_warnings_as_lines()
    try:
        _dispatch(argv)
    except SkilldeckError as e:  # a clean one-line error, never a traceback
        print(f"error: {printable(str(e), lines=True)}", file=sys.stderr)
        raise SystemExit(1) from None
    except OSError as e:  # the filesystem's own words: a name too long, a bad target
        print(f"error: {printable(_os_error_line(e))}", file=sys.stderr)
        raise SystemExit(1) from None
    except RecursionError:  # json and tomllib recurse once per nesting level
        print(
            "error: the input is nested too deeply to read (a JSON or TOML value inside "
            "thousands of brackets); flatten it.",
            file=sys.stderr,
        )
        raise SystemExit(1) from None


def _dispatch(argv: list[str]) -> None:
    fast = _FAST_PATHS.get(argv[1]) if argv[:1] == ["skills"] and len(argv) > 1 else None
    if fast is not None:
        # The process ends right after the answer: the cyclic collector would only
        # walk the thousands of objects discovery built, which reference counting frees.
        gc.disable()
        code = importlib.import_module(fast).try_fast(argv)
        if code is not None:
            raise SystemExit(code)
        gc.enable()
    build_app(argv)(args=argv, prog_name="skilldeck", standalone_mode=True)


def _os_error_line(e: OSError) -> str:
    """``File name too long: 'aaa…'`` — what the system said and about which path,
    shortened to one line."""
    what = e.strerror or str(e) or type(e).__name__
    where = e.filename if e.filename is not None else ""
    where = str(where)
    if len(where) > 120:
        where = where[:100] + "…" + where[-19:]
    return f"{what}: {where!r}" if where else what


if __name__ == "__main__":
    main()
