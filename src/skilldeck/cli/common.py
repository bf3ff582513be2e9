"""Helpers every command module shares: options, settings, JSON output, failures.

Commands are thin: parse options, call the library, render. Anything more belongs in
the library.

Every command imports this module, so it imports nothing heavy itself: the settings
(pydantic and pydantic-settings, about 0.17 s of CPU) are imported by the commands
that read them, through :func:`settings_from_cli`, and rich only for human output
(``skills validate`` reads no settings: ``python -m bench startup``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from skilldeck.errors import ConfigError
from skilldeck.trust import (
    assess_workspace,
    describe_workspace,
    ignored_paths,
    never_trusted_implicitly,
    trust_folder,
    untrusted_message,
)

if TYPE_CHECKING:
    from skilldeck.config import Settings
    from skilldeck.skills.registry import SkillRegistry

RootOption = Annotated[
    list[Path] | None,
    typer.Option("--root", help="Skill root to scan before the default roots (repeatable)."),
]
NoDefaultsOption = Annotated[
    bool, typer.Option("--no-defaults", help="Scan only the --root directories.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def settings_from_cli(**overrides: Any) -> Settings:
    """The settings, with ``overrides`` on top."""
    from skilldeck.config import load_settings  # lazy: pydantic-settings, ~0.17 s

    return load_settings(**overrides)


def print_json(data: Any) -> None:
    """JSON on stdout, UTF-8, one document; paths and other objects as strings."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    sys.stdout.write("\n")


def print_jsonl(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def fail(message: str, *, code: int = 1) -> NoReturn:
    """Print a one-line error to stderr and exit with ``code`` (2 = usage error)."""
    sys.stderr.write(f"error: {message}\n")
    raise typer.Exit(code)


def stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


def stdout_console() -> Any:
    from rich.console import Console

    return Console()


def check_roots(roots: list[Path] | None, no_defaults: bool) -> None:
    """``--root`` folders must exist, and ``--no-defaults`` needs one (usage errors)."""
    for root in roots or ():
        if not root.is_dir():
            fail(f"--root {root}: not a folder.", code=2)
    if no_defaults and not roots:
        fail("--no-defaults needs at least one --root.", code=2)


def discover_registry(
    roots: list[Path] | None, no_defaults: bool, **overrides: Any
) -> SkillRegistry:
    """The registry ``--root``/``--no-defaults`` describe, with settings ``overrides``."""
    check_roots(roots, no_defaults)
    from skilldeck.skills.registry.registry import SkillRegistry  # lazy: only commands that list

    return SkillRegistry.discover(
        settings_from_cli(**overrides), roots=list(roots or ()), no_defaults=no_defaults
    )


def offer_trust(workspace: Path) -> None:
    """Ask once, at a terminal, whether to trust an untrusted ``workspace`` that has a
    config or skills of its own, showing what they set (``chat``, ``run``). Never asks
    when stdin or stderr is not a terminal, for ``/`` or the home folder, or when
    there is nothing to trust; "no" (the default) leaves the files ignored."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return
    from skilldeck.config import skilldeck_home  # lazy: pydantic-settings, ~0.17 s

    home = skilldeck_home()
    shown = assess_workspace(workspace, home)
    if never_trusted_implicitly(shown.workspace) or not ignored_paths(shown, home):
        return
    err = sys.stderr
    err.write(f"{untrusted_message(shown, home)}.\n")
    err.write("\n".join(describe_workspace(shown, home)) + "\n")
    err.write("Trust this folder? Its config and skills then take effect. [y/N] ")
    err.flush()
    answer = sys.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        err.write("Not trusted: running without them (`skilldeck trust` to change that).\n")
        return
    try:
        trust_folder(shown.workspace, home, expect=shown)
    except ConfigError as e:
        fail(str(e))
    err.write(f"Trusted {shown.workspace}.\n")
