"""``skilldeck skills show|prompt``: one skill as a reader wants it (metadata, location,
credentials, resources, body), the level-1 ``<available_skills>`` block a model would
see, and why a skill that exists only as a broken one does not load
(:func:`invalid_lines`, shared with ``skills run`` and chat's ``/skill``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from skilldeck.cli.common import (
    JsonOption,
    NoDefaultsOption,
    RootOption,
    print_json,
    stderr_console,
    stdout_console,
)
from skilldeck.cli.termtext import printable
from skilldeck.cli.workspace import discover_registry
from skilldeck.skills.execution import (
    SecretStore,
    declared_credentials,
    render_available_skills,
    secret_store,
)

if TYPE_CHECKING:
    from skilldeck.skills.discovery import InvalidSkill
    from skilldeck.skills.model.skill import Skill


NameArg = Annotated[str, typer.Argument(help="Skill name.")]


def register(app: typer.Typer) -> None:
    app.command("show")(show)
    app.command("prompt")(prompt)


# ---- show / prompt --------------------------------------------------------------------


def show(
    name: NameArg,
    root: RootOption = None,
    no_defaults: NoDefaultsOption = False,
    json_: JsonOption = False,
) -> None:
    """Show one skill: metadata, location, kind, resources and body."""
    registry = discover_registry(root, no_defaults)
    broken = [i for i in registry.invalid if i.name == name]
    if broken and name not in registry:
        _show_invalid(broken, json_=json_)
    skill = registry.get(name, include_disabled=True)
    entry = next(e for e in registry.entries() if e.skill is skill)
    data: dict[str, Any] = entry.to_dict()
    data["metadata"] = skill.metadata.model_dump(mode="json", exclude_defaults=True)
    data["resources"] = skill.list_resources()
    data["body"] = skill.body
    if json_:
        print_json(data)
        return
    console = stdout_console()
    head = f"{printable(skill.name)} ({data['status']}, {skill.kind}, {skill.source})"
    console.print(head, style="bold", highlight=False, markup=False)
    console.print(f"location: {printable(str(skill.skill_md))}", highlight=False, soft_wrap=True)
    for key, value in data["metadata"].items():
        if key == "credentials":
            lines = _credential_lines(skill, secret_store(registry.settings.home))
        elif key != "name":
            lines = _field_lines(key, value)
        else:
            lines = []
        for line in lines:
            console.print(printable(line), highlight=False, markup=False, soft_wrap=True)
    if data["resources"]:
        listed = "\n  ".join(printable(r) for r in data["resources"])
        console.print("resources:\n  " + listed, highlight=False, markup=False)
    console.rule()
    console.print(printable(skill.body, lines=True), markup=False, highlight=False, soft_wrap=True)


def _credential_lines(skill: Skill, store: SecretStore) -> list[str]:
    """``credentials:`` as a reader wants it: each name, whether the skill needs it,
    whether a value is stored (and the command that stores one), what it is for."""
    lines = ["credentials:"]
    for c in declared_credentials(skill):
        need = "required" if c.required else "optional"
        if store.has(c.name, skill=skill.name):
            state = "set"
        else:
            state = f"not set: skilldeck secrets set {c.name}"
        lines.append(f"  {c.name} ({need}, {state})")
        lines += [f"    {c.description}"] if c.description else []
    return lines


def _field_lines(key: str, value: Any, indent: str = "") -> list[str]:
    """One metadata field as ``key: value`` lines: lists joined by commas, mappings and
    lists of mappings one item per indented line — never a Python repr."""
    if isinstance(value, dict):
        lines = [f"{indent}{key}:"]
        for k, v in value.items():
            lines += _field_lines(str(k), v, indent + "  ")
        return lines
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        lines = [f"{indent}{key}:"]
        for item in value:
            if isinstance(item, dict):
                parts = [f"{k}: {_scalar(v)}" for k, v in item.items()]
                lines.append(f"{indent}  - " + ", ".join(parts))
            else:
                lines.append(f"{indent}  - {_scalar(item)}")
        return lines
    return [f"{indent}{key}: {_scalar(value)}"]


def _scalar(value: Any) -> str:
    """A value as YAML would show it: lists comma-joined, booleans lower-case."""
    if isinstance(value, list | tuple):
        return ", ".join(_scalar(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items())
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def _show_invalid(broken: list[InvalidSkill], *, json_: bool) -> None:
    """A name that only exists as a broken skill: say why it does not load (exit 1)."""
    if json_:
        print_json(
            [
                {
                    "name": b.name,
                    "path": str(b.folder),
                    "status": "invalid",
                    "errors": [
                        {"code": d.code, "message": d.message, "line": d.line}
                        for d in b.diagnostics
                        if d.is_error
                    ],
                }
                for b in broken
            ]
        )
    else:
        err = stderr_console()
        for b in broken:
            head = printable(f"{b.name} does not load ({b.skill_md}):")
            err.print(head, highlight=False, markup=False)
            for d in b.diagnostics:
                line = f":{d.line}" if d.line else ""
                shown = printable(f"  {b.skill_md}{line}: {d.code} {d.message}")
                err.print(shown, highlight=False, markup=False)
    raise typer.Exit(1)


def invalid_lines(name: str, broken: list[InvalidSkill], *, action: str) -> list[str]:
    """Why ``name`` cannot ``action`` (run, load…): it exists only as a broken skill.
    Each diagnostic as ``path:line: CODE message``, then the command that shows them."""
    lines = [f"skill {name!r} exists but is invalid, so it cannot {action}:"]
    for b in broken:
        for d in b.diagnostics:
            where = f"{d.path or b.skill_md}" + (f":{d.line}" if d.line else "")
            label = "error" if d.is_error else "warning"
            lines.append(printable(f"  {where}: {label} {d.code} {d.message}"))
    lines.append(f"Check it with: skilldeck skills validate {broken[0].folder}")
    return lines


def prompt(
    budget: Annotated[
        int | None, typer.Option("--budget", min=200, help="Character budget of the block.")
    ] = None,
    root: RootOption = None,
    no_defaults: NoDefaultsOption = False,
) -> None:
    """Print the level-1 <available_skills> block a model would see."""
    registry = discover_registry(root, no_defaults)
    limit = budget if budget is not None else registry.settings.skills.prompt_budget
    block = render_available_skills(registry.usable(), budget=limit)
    if block:  # exactly the model's bytes into a pipe; harmless ones on a terminal
        typer.echo(printable(block, lines=True) if sys.stdout.isatty() else block)
        return
    # nothing for the model to see (an agent leaves the block out): say why, not ""
    every = registry.list(include_disabled=True)
    disabled = sum(1 for s in every if not registry.is_enabled(s))
    unavailable = sum(
        1 for s in every if registry.is_enabled(s) and registry.why_unavailable(s) is not None
    )
    hidden = len(every) - disabled - unavailable
    sys.stderr.write(
        f"note: no skill is shown to the model ({len(every)} found: {disabled} disabled, "
        f"{unavailable} unavailable here, {hidden} with disable-model-invocation). "
        "`skilldeck skills list --all` shows each one and why.\n"
    )
