"""``skilldeck skills list --json`` without typer, rich or pydantic.

Scripts and editor integrations call ``skills list --json`` often, and it must
answer in well under half a second over thousands of skills, interpreter start
included. A warm discovery takes a few tens of milliseconds; importing typer (with
click), and pydantic for the settings, would take several times that. So
:func:`try_fast` recognises exactly the argument shapes of that command —
``--json`` plus any of ``--all``, ``--no-defaults``, ``--root DIR`` /
``--root=DIR`` — and runs it directly, with the light settings view of
:mod:`skilldeck.settings.view` (built from the same layers as the full settings).
Anything else (``--help``, an unknown or misspelt option, a ``--root`` without a
folder, human output, shell completion) returns
None and the regular typer app handles it, so the two paths cannot disagree on
anything but speed. Output, exit codes and messages are those of
:func:`skilldeck.cli.skills.skills_cmd.list_skills`.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, cast

from skilldeck import settings as settings_pkg
from skilldeck._trust_text import skill_roots_unread
from skilldeck.cli.skills.fast.fastio import (
    fail_line,
    guarded,
    wants_typer,
    write_json_rows,
    write_scan_problems,
)
from skilldeck.settings import read_layers, view_from_layers
from skilldeck.skills.registry import SkillRegistry

if TYPE_CHECKING:
    from skilldeck.config import Settings

__all__ = ["try_fast", "write_scan_problems"]


def try_fast(argv: list[str]) -> int | None:
    """Run ``argv`` here when it is a plain ``skills list --json``; its exit code,
    or None when the typer app must handle it."""
    if argv[:2] != ["skills", "list"] or wants_typer():
        return None
    options = _parse(argv[2:])
    if options is None:
        return None
    roots, no_defaults, all_ = options
    return guarded(lambda: _list(roots, no_defaults=no_defaults, all_=all_))


def _parse(args: list[str]) -> tuple[list[Path], bool, bool] | None:
    """``(roots, no_defaults, all)`` for ``--json`` listings; None for anything else."""
    roots: list[Path] = []
    flags = {"--json": False, "--all": False, "--no-defaults": False}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in flags:
            flags[arg] = True
        elif arg == "--root":
            if i + 1 >= len(args) or args[i + 1].startswith("-") or not args[i + 1].strip():
                return None  # let click report (or interpret) it
            roots.append(Path(args[i + 1]))
            i += 1
        elif arg.startswith("--root=") and arg[len("--root=") :].strip():
            roots.append(Path(arg[len("--root=") :]))
        else:
            return None
        i += 1
    if not flags["--json"]:
        return None
    return roots, flags["--no-defaults"], flags["--all"]


def _list(roots: list[Path], *, no_defaults: bool, all_: bool) -> int:
    problem = root_problem(roots, no_defaults)
    if problem is not None:
        return fail_line(problem, code=2)
    registry = fast_registry(roots, no_defaults)
    rows = [e.to_dict() for e in registry.entries()] if all_ else registry.active_rows()
    write_json_rows(rows)
    write_scan_problems(registry.diagnostics)
    return 0


def root_problem(roots: list[Path], no_defaults: bool) -> str | None:
    """As :func:`skilldeck.cli.common.check_roots`: the usage error, or None."""
    for root in roots:
        if not root.is_dir():
            return f"--root {root}: not a folder."
    if no_defaults and not roots:
        return "--no-defaults needs at least one --root."
    return None


def fast_registry(roots: list[Path], no_defaults: bool) -> SkillRegistry:
    """The registry discovered with the light settings view when the settings allow
    it (else the full pydantic settings, from the same layers, read once)."""
    # --no-defaults reads no workspace skill root: no warning that they are ignored
    with skill_roots_unread() if no_defaults else contextlib.nullcontext():
        settings = _fast_settings()
    return SkillRegistry.discover(settings, roots=roots, no_defaults=no_defaults)


def _fast_settings() -> Settings:
    layers = read_layers()
    view = view_from_layers(layers, os.environ)
    if view is not None:
        # the view answers every Settings attribute (from the same layers): the
        # registry's parameter is typed Settings, which it cannot subclass without pydantic
        return cast("Settings", view)
    return settings_pkg.settings_from_layers(layers)
