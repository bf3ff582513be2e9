"""``skilldeck skills trust``: let a reviewed code skill run inside skilldeck's process.

Untrusted code skills run out of process in the sandbox (``skills/code/codehost.py``);
this records the SHA-256 of a skill folder's code in the user's trust file
(``$SKILLDECK_HOME/trusted-code-skills.json``, mode 0600), after showing the digest,
the files it covers and the audit's advice. Editing any ``.py`` file of the skill
later un-trusts it. ``--revoke`` forgets a name; ``--list`` shows what is trusted.
"""

from __future__ import annotations

from typing import Annotated

import typer

from skilldeck.cli.common import (
    JsonOption,
    NoDefaultsOption,
    RootOption,
    fail,
    print_json,
)
from skilldeck.cli.workspace import discover_registry
from skilldeck.errors import SkilldeckError
from skilldeck.skills.code import TrustStore, audit_skill, trust_file
from skilldeck.skills.code._srcimport import snapshot_code
from skilldeck.skills.model.skill import SkillKind

__all__ = ["register", "trust"]


def register(app: typer.Typer) -> None:
    app.command("trust")(trust)


def trust(
    name: Annotated[str | None, typer.Argument(help="Code skill to trust.")] = None,
    revoke: Annotated[bool, typer.Option("--revoke", help="Forget trust for NAME.")] = False,
    list_: Annotated[bool, typer.Option("--list", help="Show trusted code skills.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask to confirm.")] = False,
    root: RootOption = None,
    no_defaults: NoDefaultsOption = False,
    json_: JsonOption = False,
) -> None:
    """Trust a code skill by the hash of its code, so it runs in skilldeck's process."""
    registry = discover_registry(root, no_defaults)
    store = TrustStore(trust_file(registry.settings))
    if list_:
        rows = [vars(e) for e in store.entries()]
        if json_:
            print_json({"file": str(store.path), "trusted": rows})
        for row in [] if json_ else rows:
            typer.echo(f"{row['name']}\t{row['sha256']}\t{row['folder']}")
        return
    if name is None:
        fail("Give a skill NAME (or --list).", code=2)
    if revoke:
        gone = store.revoke(name)
        typer.echo(f"Revoked {len(gone)} trusted digest(s) for {name!r}.")
        return
    skill = registry.find(name)
    if skill is None or skill.kind is not SkillKind.CODE:
        fail(f"No code skill named {name!r} (a folder with skill.py) in the skill roots.", code=2)
    try:
        snapshot = snapshot_code(skill.folder)
    except SkilldeckError as e:
        fail(str(e))
    findings = audit_skill(snapshot.folder, include_scripts=True)
    if not json_:
        typer.echo(f"{name}: {snapshot.folder}\nsha256 {snapshot.digest} over:")
        for rel in sorted(snapshot.files):
            typer.echo(f"  {rel}")
        for finding in findings:
            typer.echo(f"audit (advice): {finding}")
    if json_ and not yes:
        fail("--json cannot ask for confirmation: add --yes after reviewing the code.", code=2)
    if not yes and not typer.confirm("Run this code in skilldeck's process?"):
        raise typer.Exit(1)
    entry = store.trust(name, snapshot)
    if json_:
        print_json({**vars(entry), "findings": [f.to_dict() for f in findings]})
    else:
        typer.echo(f"Trusted {name!r} (sha256 {entry.sha256}) in {store.path}.")
