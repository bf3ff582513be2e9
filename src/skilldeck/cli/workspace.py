"""The settings and the skill registry, for the commands that read them.

Split from :mod:`skilldeck.cli.common` because loading the settings imports pydantic
and pydantic-settings (about 0.17 s of CPU): every command imports ``common``, and
``skills validate`` must not pay for settings it never reads (``python -m bench
startup``). A command that reads the settings imports this module at its top.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

from skilldeck._trust_text import (
    describe_workspace,
    ignored_paths,
    skill_roots_unread,
    untrusted_message,
)
from skilldeck.cli.common import check_roots, fail
from skilldeck.cli.termtext import printable
from skilldeck.config import Settings, load_settings, skilldeck_home
from skilldeck.errors import ConfigError
from skilldeck.skills.registry import SkillRegistry
from skilldeck.trust import assess_workspace, never_trusted_implicitly, trust_folder

__all__ = ["discover_registry", "offer_trust", "settings_for_roots", "settings_from_cli"]


def settings_from_cli(**overrides: Any) -> Settings:
    """The settings, with ``overrides`` on top."""
    return load_settings(**overrides)


def settings_for_roots(no_defaults: bool, **overrides: Any) -> Settings:
    """The settings of a command scanning ``--root``s: under ``--no-defaults`` the
    untrusted-workspace warning leaves out the skill folders nothing would read."""
    with skill_roots_unread() if no_defaults else contextlib.nullcontext():
        return settings_from_cli(**overrides)


def discover_registry(
    roots: list[Path] | None, no_defaults: bool, **overrides: Any
) -> SkillRegistry:
    """The registry ``--root``/``--no-defaults`` describe, with settings ``overrides``."""
    check_roots(roots, no_defaults)
    settings = settings_for_roots(no_defaults, **overrides)
    return SkillRegistry.discover(settings, roots=list(roots or ()), no_defaults=no_defaults)


def offer_trust(workspace: Path, *, skill_roots: bool = True) -> None:
    """Ask once, at a terminal, whether to trust an untrusted ``workspace`` that has a
    config or skills of its own, showing what they set (``chat``, ``run``). Never asks
    when stdin or stderr is not a terminal, for ``/`` or the home folder, or when
    there is nothing to trust; "no" (the default) leaves the files ignored.
    ``skill_roots=False`` (``--no-defaults``): its skill folders would not be read
    now, so they alone never prompt (the description still lists them: trusting
    the folder lets them in for later runs)."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return
    home = skilldeck_home()
    shown = assess_workspace(workspace, home)
    ignored = ignored_paths(shown, home, skill_roots=skill_roots)
    if never_trusted_implicitly(shown.workspace) or not ignored:
        return
    err = sys.stderr
    # folder names and config keys are the repository's: shown, never obeyed
    err.write(printable(f"{untrusted_message(shown, home, skill_roots=skill_roots)}.") + "\n")
    err.write("\n".join(printable(line) for line in describe_workspace(shown, home)) + "\n")
    err.write("Trust this folder? Its config and skills then take effect. [y/N] ")
    err.flush()
    answer = sys.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        them = "it" if len(ignored) == 1 else "them"
        err.write(f"Not trusted: running without {them} (`skilldeck trust` to change that).\n")
        return
    try:
        trust_folder(shown.workspace, home, expect=shown)
    except ConfigError as e:
        fail(str(e))
    err.write(f"Trusted {shown.workspace}.\n")
