"""``skilldeck trust``: decide which folders' own config and skills take effect.

A workspace's ``.skilldeck/config.toml`` and skill roots count only in a folder you
trusted, and only while that config is what you trusted (see
:mod:`skilldeck.trust`). This command shows what a folder's config sets before it
records the folder, lists the trusted folders and forgets one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from skilldeck._trust_text import describe_workspace
from skilldeck.cli.common import fail, print_json
from skilldeck.cli.termtext import printable
from skilldeck.config import skilldeck_home
from skilldeck.errors import ConfigError
from skilldeck.trust import (
    TrustState,
    list_trusted,
    revoke_folder,
    store_path,
    trust_folder,
)


def register(app: typer.Typer) -> None:
    app.command("trust", help="Trust a folder's own config and skills (see --list, --revoke).")(
        trust
    )


def trust(
    directory: Annotated[
        str | None, typer.Argument(help="Folder to trust (default: the current one).")
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the trusted folders.")] = False,
    revoke: Annotated[bool, typer.Option("--revoke", help="Stop trusting the folder.")] = False,
    json_: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
) -> None:
    """Records the folder with the SHA-256 of its ``.skilldeck/config.toml`` and the
    skill and agent folders it has now: if the file changes later (a model or a
    checkout may write it), skilldeck ignores it and the folder's skills again, and
    a skill or agent folder created later is ignored, until you run this command
    once more."""
    home = skilldeck_home()
    if list_ and (revoke or directory is not None):
        fail("--list takes no folder and no --revoke.", code=2)
    if list_:
        _list(home, json_=json_)
        return
    if directory is not None and not directory.strip():
        # `skilldeck trust "$DIR"` with DIR unset must not trust whatever folder we are in
        fail("FOLDER is empty; name the folder to trust (`.` for the current one).", code=2)
    folder = Path(directory).expanduser() if directory is not None else Path.cwd()
    if revoke:
        if not revoke_folder(folder, home):
            fail(f"{folder.resolve()} is not a trusted folder (see `skilldeck trust --list`).")
        sys.stdout.write(f"No longer trusted: {folder.resolve()}\n")
        return
    try:
        after = trust_folder(folder, home)
    except ConfigError as e:
        fail(str(e))
    if json_:
        print_json(
            {
                "folder": str(after.workspace),
                "config_sha256": after.digest,
                "roots": list(after.present),
            }
        )
        return
    # the bytes shown are the bytes whose digest was recorded
    # (names and keys through printable: a line may not move the cursor over another)
    sys.stdout.write("\n".join(printable(line) for line in describe_workspace(after, home)) + "\n")
    sys.stdout.write(
        f"Trusted {after.workspace}: its config and the skill and agent folders "
        f"above now take effect. If its config file changes, or a new such folder "
        f"appears, skilldeck ignores it until you trust the folder again. "
        f"(Store: {store_path(home)}.)\n"
    )


def _list(home: Path, *, json_: bool) -> None:
    rows = list_trusted(home)
    words = {
        TrustState.TRUSTED: "trusted",
        TrustState.CHANGED: (
            "config changed since trusted, or a skill or agent folder appeared: "
            "ignored until trusted again"
        ),
        None: "folder missing",
    }
    if json_:
        print_json(
            [
                {"folder": str(f), "trusted_at": at, "state": str(s) if s else "missing"}
                for f, at, s in rows
            ]
        )
        return
    if not rows:
        sys.stderr.write("No trusted folders. Trust one with `skilldeck trust DIR`.\n")
        return
    for folder, at, state in rows:
        sys.stdout.write(f"{folder}  ({at}; {words.get(state, str(state))})\n")
