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

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from skilldeck.errors import SkilldeckError
from skilldeck.settings import read_layers, view_from_layers
from skilldeck.skills.registry import SkillRegistry

if TYPE_CHECKING:
    from skilldeck.config import Settings
    from skilldeck.skills.model.diagnostics import Diagnostic

__all__ = ["try_fast", "write_scan_problems"]


def try_fast(argv: list[str]) -> int | None:
    """Run ``argv`` here when it is a plain ``skills list --json``; its exit code,
    or None when the typer app must handle it."""
    if argv[:2] != ["skills", "list"] or "_SKILLDECK_COMPLETE" in os.environ:
        return None
    options = _parse(argv[2:])
    if options is None:
        return None
    roots, no_defaults, all_ = options
    try:
        return _list(roots, no_defaults=no_defaults, all_=all_)
    except BrokenPipeError:  # `| head`: quiet, like click
        _silence_stdout()
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("\nAborted!\n")
        return 1


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
            if i + 1 >= len(args) or args[i + 1].startswith("-"):
                return None  # let click report (or interpret) it
            roots.append(Path(args[i + 1]))
            i += 1
        elif arg.startswith("--root=") and len(arg) > len("--root="):
            roots.append(Path(arg[len("--root=") :]))
        else:
            return None
        i += 1
    if not flags["--json"]:
        return None
    return roots, flags["--no-defaults"], flags["--all"]


def _list(roots: list[Path], *, no_defaults: bool, all_: bool) -> int:
    for root in roots:
        if not root.is_dir():
            return _fail(f"--root {root}: not a folder.", code=2)
    if no_defaults and not roots:
        return _fail("--no-defaults needs at least one --root.", code=2)
    try:
        rows, problems = _rows(roots, no_defaults=no_defaults, all_=all_)
    except SkilldeckError as e:
        return _fail(str(e), code=1)
    _write_json(rows)
    write_scan_problems(problems)
    return 0


def _rows(
    roots: list[Path], *, no_defaults: bool, all_: bool
) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
    layers = read_layers()  # each config file read once, for the view or the full path
    view = view_from_layers(layers, os.environ)
    settings: Settings
    if view is not None:
        # the view answers every Settings attribute (from the same layers): the
        # registry's parameter is typed Settings, which it cannot subclass without pydantic
        settings = cast("Settings", view)
    else:
        from skilldeck.settings.load import settings_from_layers  # lazy: pydantic, on need

        settings = settings_from_layers(layers)
    registry = SkillRegistry.discover(settings, roots=roots, no_defaults=no_defaults)
    if all_:
        return [e.to_dict() for e in registry.entries()], registry.diagnostics
    return registry.active_rows(), registry.diagnostics


def write_scan_problems(diagnostics: list[Diagnostic]) -> None:
    """The scan's own problems (dangling or looping symlinks, unreadable folders) as
    plain ``warning`` lines on stderr, beside JSON on stdout: a script reading the
    JSON still sees them."""
    sys.stderr.writelines(f"warning {d.path}: {d.code} {d.message}\n" for d in diagnostics)


def _write_json(rows: list[dict[str, Any]]) -> None:
    """As ``skills_cmd._print_json_rows``: indented at a terminal, compact (and
    encoded by json's C encoder) when piped."""
    import json

    if sys.stdout.isatty():
        text = json.dumps(rows, ensure_ascii=False, indent=2, default=str)
    else:
        text = json.dumps(rows, ensure_ascii=False)
    sys.stdout.write(text)
    sys.stdout.write("\n")
    sys.stdout.flush()


def _fail(message: str, *, code: int) -> int:
    sys.stderr.write(f"error: {message}\n")
    return code


def _silence_stdout() -> None:
    """After EPIPE, make the final flush at exit quiet too."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
