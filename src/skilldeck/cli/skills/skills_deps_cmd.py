"""``skilldeck skills deps NAME``: show, build or repair a skill's own Python environment.

A skill with ``requirements.txt`` (or ``dependencies: {python: [...]}``) runs its
scripts in an environment skilldeck builds with uv (``skills/execution/environments.py``).
Without flags this shows it (requirements, key, path, status, the skills sharing it)
and builds it when it is missing; ``--rebuild`` builds it again (a failed build is
repaired this way once the requirements are fixed); ``--offline`` and ``--find-links
DIR`` (repeatable) build from local wheels only on an air-gapped machine. Progress
goes to stderr; ``--json`` prints the environment as one object.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from skilldeck.cli.common import (
    JsonOption,
    NoDefaultsOption,
    RootOption,
    fail,
    named_path,
    print_json,
)
from skilldeck.cli.workspace import discover_registry
from skilldeck.errors import EnvironmentBuildError
from skilldeck.skills.execution import Environments, SkillEnvironment, read_requirements

__all__ = ["deps", "register"]


def register(app: typer.Typer) -> None:
    app.command("deps")(deps)


def _progress(quiet: bool) -> Callable[[str], None]:
    def say(message: str) -> None:
        if not quiet:
            sys.stderr.write(f"… {message}\n")
            sys.stderr.flush()

    return say


def _show(env: SkillEnvironment) -> None:
    typer.echo(f"{env.skill}: {env.status}")
    typer.echo(f"  requirements: {', '.join(env.requirements)}")
    typer.echo(f"  environment:  {env.key}")
    typer.echo(f"  python:       {env.python}")
    if env.shared_with:
        typer.echo(f"  shared with:  {', '.join(env.shared_with)}")
    if env.reason:
        typer.echo(f"  reason:       {env.reason}")


def deps(
    name: Annotated[str, typer.Argument(help="The skill whose environment to show or build.")],
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Build it again.")] = False,
    offline: Annotated[
        bool, typer.Option("--offline", help="No network: local wheels and uv's cache only.")
    ] = False,
    find_links: Annotated[
        list[Path] | None,
        typer.Option(
            "--find-links",
            parser=named_path,
            help="A folder of wheels to install from (repeatable).",
        ),
    ] = None,
    root: RootOption = None,
    no_defaults: NoDefaultsOption = False,
    json_: JsonOption = False,
) -> None:
    """Show a skill's Python environment; build it if missing (--rebuild: again)."""
    registry = discover_registry(root, no_defaults)
    skill = registry.find(name)
    if skill is None:
        fail(f"No skill named {name!r} in the skill roots; `skilldeck skills list` shows them.")
    for folder in find_links or []:
        if not folder.is_dir():
            fail(f"--find-links {folder}: no such folder.", code=2)
    try:
        read_requirements(skill)  # a refused line: only an edit of the file fixes it
    except EnvironmentBuildError as e:
        fail(f"The environment of {name!r} cannot be built: {e}")
    envs = Environments(registry.settings.home)
    try:
        env = envs.ensure(
            skill,
            offline=offline,
            find_links=find_links or [],
            rebuild=rebuild,
            progress=_progress(json_),
        )
    except EnvironmentBuildError as e:
        fail(
            f"The environment of {name!r} could not be built: {e} — the skill stays "
            f"unavailable until `skilldeck skills deps {name} --rebuild` succeeds."
        )
    if env is None:
        if json_:
            print_json({"skill": name, "status": "none", "requirements": []})
        else:
            typer.echo(f"{name} declares no requirements: its scripts use skilldeck's Python.")
        return
    if json_:
        print_json(env.to_dict())
    else:
        _show(env)
