"""The ``skilldeck`` entry point: builds only the command group being invoked.

Importing every command module (and with them the agent, the model SDKs, MCP…) costs
hundreds of milliseconds; ``skilldeck skills list --json`` must start in well under
half a second. So the root app registers a command group only when ``argv`` asks for
it, and registers everything for ``--help`` or an unknown command. The most frequent
machine call, ``skills list --json``, does not build the app at all: see
:mod:`skilldeck.cli.fastpath` (typer itself is imported only past that point).
Each command module exposes ``register(app)``; modules hold no business logic.
"""

from __future__ import annotations

import gc
import importlib
import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    import typer

#: top-level word → command modules that register into it ("" = the root app)
_GROUPS: dict[str, tuple[str, list[str]]] = {
    "skills": (
        "Discover, validate, show, run and package skills.",
        [
            "skilldeck.cli.skills_cmd",
            "skilldeck.cli.skills_exec_cmd",
            "skilldeck.cli.skills_match_cmd",
            "skilldeck.cli.skills_pkg_cmd",
            "skilldeck.cli.skills_trust_cmd",
        ],
    ),
    "sessions": ("List and inspect stored sessions.", ["skilldeck.cli.sessions_cmd"]),
    "agents": ("List and inspect agent definitions (AGENT.md).", ["skilldeck.cli.agents_cmd"]),
    "mcp": ("Serve skills over MCP.", ["skilldeck.cli.mcp_cmd"]),
}
#: top-level commands living on the root app
_ROOT_COMMANDS: dict[str, str] = {
    "run": "skilldeck.cli.run_cmd",
    "resume": "skilldeck.cli.run_cmd",
    "chat": "skilldeck.cli.chat_cmd",
    "trust": "skilldeck.cli.trust_cmd",
}


def _register(module_name: str, app: typer.Typer) -> None:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name == module_name:
            return  # an optional command module that this build does not ship
        raise
    module.register(app)


def _root() -> None:
    """A runtime for Agent Skills: discover, validate, run and compose skills."""


def build_app(argv: list[str]) -> typer.Typer:
    import typer

    app = typer.Typer(
        name="skilldeck",
        help="A runtime for Agent Skills: discover, validate, run and compose skills.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    # A callback keeps the root a command group even when only one command is
    # registered (``skilldeck chat`` alone would otherwise become the root command).
    app.callback()(_root)
    first = next((a for a in argv if not a.startswith("-")), None)
    wanted_groups = [first] if first in _GROUPS else list(_GROUPS)
    wanted_root = {first} if first in _ROOT_COMMANDS else set(_ROOT_COMMANDS)
    if first in _GROUPS:
        wanted_root = set()
    elif first in _ROOT_COMMANDS:
        wanted_groups = []
    for group in wanted_groups:
        help_text, modules = _GROUPS[group]
        sub = typer.Typer(help=help_text, no_args_is_help=True)
        for module_name in modules:
            _register(module_name, sub)
        app.add_typer(sub, name=group)
    for module_name in dict.fromkeys(_ROOT_COMMANDS[c] for c in sorted(wanted_root)):
        _register(module_name, app)
    return app


def _config_warnings_as_lines() -> None:
    """A :class:`~skilldeck.errors.ConfigWarning` (an ignored setting) prints as one
    ``warning:`` line on stderr like every other CLI message, not as Python's
    two-line warning with a source location; other warnings are left as they are.
    (Matched by name: the fast path does not import the error module.)"""
    import warnings

    shown = warnings.showwarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if category.__name__ == "ConfigWarning":
            sys.stderr.write(f"warning: {message}\n")
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show


def main() -> None:
    argv = sys.argv[1:]
    _config_warnings_as_lines()
    if argv[:2] == ["skills", "list"]:
        from skilldeck.cli.fastpath import try_fast

        # The process ends right after the listing: the cyclic collector would only
        # walk the thousands of objects it built, which reference counting frees.
        gc.disable()
        code = try_fast(argv)
        if code is not None:
            raise SystemExit(code)
        gc.enable()
    from skilldeck.errors import SkilldeckError

    try:
        build_app(argv)(args=argv, prog_name="skilldeck", standalone_mode=True)
    except SkilldeckError as e:  # a clean one-line error, never a traceback
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
