"""``skilldeck secrets set|list|rm NAME [--skill SKILL]``: the values of declared credentials.

A skill declares the secrets it needs (``credentials:`` in its frontmatter); this is
where the user gives their values. ``set`` reads the value from a hidden prompt on a
terminal, else from stdin (``echo "$TOKEN" | skilldeck secrets set GITHUB_TOKEN``) —
never from the command line, where ``ps`` and shell history would show it. Values
go to the OS keyring, or to ``<home>/secrets/values.json`` (0600) on a machine
without one; ``list`` shows names and places, never values. See
``docs/skill-execution.md``.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from skilldeck.cli.common import JsonOption, fail, print_json, stdout_console
from skilldeck.cli.termtext import printable
from skilldeck.cli.workspace import discover_registry
from skilldeck.settings.layers import skilldeck_home
from skilldeck.skills.execution import (
    SecretStore,
    check_secret_name,
    check_skill_name,
    declared_credentials,
)

NameArg = Annotated[str, typer.Argument(help="The credential's name, e.g. GITHUB_TOKEN.")]
SkillOption = Annotated[
    str | None,
    typer.Option("--skill", help="Only for this skill (wins over a global value)."),
]


def register(app: typer.Typer) -> None:
    app.command("set")(set_secret)
    app.command("list")(list_secrets)
    app.command("rm")(remove_secret)


def _store() -> SecretStore:
    return SecretStore(skilldeck_home())


def _read_value(name: str) -> str:
    """The value from a hidden prompt (a terminal) or from stdin (a pipe). A piped value
    is one line: final line breaks are dropped, and more than one line is refused
    rather than cut (a PEM key or a pasted block would otherwise be stored broken)."""
    if sys.stdin.isatty():
        import getpass  # lazy: only an interactive set needs it

        return getpass.getpass(f"Value for {name} (input hidden): ")
    value = sys.stdin.read().rstrip("\r\n")  # the final line break(s), nothing else
    if "\n" in value or "\r" in value:
        fail(
            f"The value piped for {name} has {len(value.splitlines())} lines; a credential "
            f"is one line. Pipe exactly one (printf '%s' \"$VALUE\" | skilldeck secrets "
            f"set {name}); store a multi-line secret (a key file) base64-encoded, or its "
            "path for the skill to read."
        )
    return value


def _check_skill(name: str, skill: str) -> None:
    """Warn (on stderr) when ``--skill`` names no skill known here, or one that does not
    declare ``name``: the value is stored all the same (the skill may be installed
    later, or live in another workspace), but a typo must not pass unnoticed."""
    registry = discover_registry(None, False)
    if skill not in registry:
        if not any(e.name == skill for e in registry.entries()):  # not even a broken one
            sys.stderr.write(
                f"warning: no skill named {skill!r} is known here (`skilldeck skills list "
                "--all` shows them); the value is kept for a skill of that name.\n"
            )
        return
    declared = declared_credentials(registry.get(skill, include_disabled=True))
    if name not in {c.name for c in declared}:
        sys.stderr.write(
            f"warning: skill {skill!r} does not declare the credential {name} "
            "(`credentials:` in its SKILL.md), so its scripts will not receive it.\n"
        )


def set_secret(name: NameArg, skill: SkillOption = None) -> None:
    """Store a credential's value (hidden prompt or stdin, never argv)."""
    check_secret_name(name)
    check_skill_name(skill)  # before the prompt, and before any "no skill named" note
    value = _read_value(name)
    if not value:
        fail(f"No value given for {name}: type it at the prompt or pipe it on stdin.")
    if skill is not None:
        _check_skill(name, skill)
    entry = _store().set(name, value, skill=skill)
    scope = f"skill {skill}" if skill else "every skill that declares it"
    print(f"Stored {name} for {scope} (in the {entry.backend}).")


def list_secrets(json_: JsonOption = False) -> None:
    """The stored credentials: names and places, never values."""
    store = _store()
    entries = store.entries()
    if json_:
        print_json({"backend": store.backend_name, "secrets": [e.to_dict() for e in entries]})
        return
    if not entries:
        print("No secrets stored. Add one with `skilldeck secrets set NAME`.")
        return
    from rich.table import Table  # lazy: only the human listing needs rich
    from rich.text import Text

    table = Table(box=None, header_style="bold")
    table.add_column("NAME", no_wrap=True)
    table.add_column("SKILL", overflow="ellipsis", max_width=32)
    table.add_column("STORED IN", no_wrap=True)
    for entry in entries:  # Text cells: an old index may hold any name
        cells = (entry.name, entry.skill or "(all)", entry.backend)
        table.add_row(*(Text(printable(c)) for c in cells))
    stdout_console().print(table)


def remove_secret(name: NameArg, skill: SkillOption = None) -> None:
    """Forget a stored credential."""
    if not _store().remove(name, skill=skill):
        where = f" for skill {skill}" if skill else " (global)"
        fail(f"No secret {name}{where} is stored; `skilldeck secrets list` shows what is.")
    print(f"Removed {name}" + (f" for skill {skill}." if skill else "."))
