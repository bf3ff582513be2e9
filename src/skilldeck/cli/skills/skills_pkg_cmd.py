"""``skilldeck skills pack|keygen|install|verify|uninstall``: share skills as signed packages.

Thin: options → :mod:`skilldeck.skills.packaging.package` (``install`` goes through
:func:`skilldeck.skills.sources.install_from`, which takes every source kind) → a
line of output (or ``--json``).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from skilldeck.cli.common import (
    JsonOption,
    fail,
    labelled,
    named_path,
    print_json,
    stderr_console,
    stdout_console,
)
from skilldeck.cli.termtext import printable
from skilldeck.cli.workspace import settings_from_cli
from skilldeck.errors import SkillChoiceError
from skilldeck.skills.format import load_skill
from skilldeck.skills.model.diagnostics import warnings_of
from skilldeck.skills.packaging import installed, pack, uninstall, verify
from skilldeck.skills.packaging.package import check_output
from skilldeck.skills.packaging.placement import workspace_note
from skilldeck.skills.packaging.signing import key_id, keygen, load_public_key
from skilldeck.skills.packaging.skillpack import SUFFIX, age_keygen, encrypt_skill
from skilldeck.skills.sources import Choice, FetchOptions, install_from

if TYPE_CHECKING:
    from skilldeck.skills.packaging import InstalledSkill
    from skilldeck.skills.packaging.lockfile import LockEntry, Scope, VerifyProblem
    from skilldeck.skills.sources import Reporter


class ScopeChoice(StrEnum):
    workspace = "workspace"
    user = "user"


def _scope(choice: ScopeChoice) -> Scope:
    return choice.value


ScopeOption = Annotated[
    ScopeChoice,
    typer.Option("--scope", help="workspace: ./.skilldeck/skills; user: $SKILLDECK_HOME/skills."),
]


def pack_cmd(
    folder: Annotated[
        Path, typer.Argument(parser=named_path, help="The skill folder (holding SKILL.md).")
    ],
    output: Annotated[
        str | None,
        typer.Option(
            "-o",
            "--output",
            help="Output file, or a directory (an existing one, or one ending in / that "
            "is created) to write NAME.skill into.",
        ),
    ] = None,
    sign: Annotated[
        Path | None,
        typer.Option("--sign", parser=named_path, help="ed25519 private key to sign with."),
    ] = None,
    encrypt_to: Annotated[
        list[str] | None,
        typer.Option(
            "--encrypt-to",
            help="Write an encrypted NAME.skillpack for this age recipient (age1…, or a "
            "file of them; repeatable). Needs --sign.",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Validate a skill and write NAME.skill (zip, Anthropic layout + signed manifest)."""
    if encrypt_to:
        path = _pack_encrypted(folder, _output_target(output), sign, encrypt_to)
    else:
        path = pack(folder, output=_output_target(output), sign_key=sign)
    _, diagnostics = load_skill(folder)
    warnings = [str(d) for d in warnings_of(diagnostics)]
    if as_json:
        doc = {"path": str(path), "signed": sign is not None, "warnings": warnings}
        print_json({**doc, "encrypted": bool(encrypt_to)})
        return
    console = stdout_console()
    how = "signed, encrypted" if encrypt_to else "signed"
    console.print(f"Packed {path}" + (f" ({how})" if sign else ""), highlight=False)
    if encrypt_to and path.suffix.lower() not in (SUFFIX, ".age"):
        rest = (
            f": {path.name} is encrypted; name it {path.stem}{SUFFIX} "
            "so people know they need --identity (install opens it either way)."
        )
        console.print(Text("  ") + labelled("warning", rest), highlight=False)
    for warning in warnings:
        console.print(Text("  ") + labelled("warning", f": {warning}"), highlight=False)


def _pack_encrypted(
    folder: Path, output: Path | None, sign: Path | None, recipients: list[str]
) -> Path:
    """Pack and sign into a temp dir, then encrypt the ``.skill`` to ``recipients``."""
    if sign is None:
        fail("--encrypt-to needs --sign KEY: an encrypted pack must hold a signed .skill.")
    with tempfile.TemporaryDirectory(prefix="skilldeck-pack-") as tmp:
        inner = pack(folder, output=Path(tmp), sign_key=sign)
        name = inner.stem + SUFFIX
        dest = Path.cwd() / name if output is None else output
        dest = dest / name if dest.is_dir() else dest
        check_output(dest, folder, sign)
        return encrypt_skill(inner, recipients, dest)


def _output_target(output: str | None) -> Path | None:
    """``-o`` as the library takes it: a directory is given as one. A path spelled with
    a trailing slash means a directory even when it does not exist yet (it is created),
    which a ``Path`` option would lose by dropping the slash."""
    if output is None:
        return None
    path = Path(output).expanduser()
    if output.endswith(("/", os.sep)) and not path.is_dir():
        if path.exists():
            fail(f"-o {output}: exists and is not a folder.", code=2)
        path.mkdir(parents=True)
    return path


def keygen_cmd(
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Private key path; PATH.pub gets the public key (ed25519)."
        ),
    ] = None,
    age: Annotated[
        bool,
        typer.Option("--age", help="Make an age identity for encrypted packs instead."),
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing key.")] = False,
) -> None:
    """Make an ed25519 key pair for signing skill packages (or --age: an age identity)."""
    if age:
        identity, recipient = age_keygen(out or Path("skilldeck-age.key"), force=force)
        stderr_console().print(f"Identity: {identity} (keep it secret; mode 0600)")
        sys.stdout.write(recipient + "\n")
        return
    if out is None:
        fail("Pass --out PATH for the ed25519 key (or --age for an age identity).", code=2)
    private, public = keygen(out, force=force)
    console = stdout_console()
    console.print(f"Private key: {private} (keep it secret)")
    console.print(f"Public key:  {public} (share it; key id {key_id(load_public_key(public))})")


def install_cmd(
    source: Annotated[
        str,
        typer.Argument(
            help="A skill folder or .skill file; owner/repo[/path][@ref] (GitHub); a git "
            "URL[@ref]; an https URL of a .skill, .zip or SKILL.md; or a skills index "
            "(https://host/.well-known/agent-skills/index.json).",
            show_default=False,
        ),
    ],
    skill: Annotated[
        list[str] | None,
        typer.Option(
            "--skill",
            metavar="NAME",
            help="Install this skill of a source holding several (repeatable).",
        ),
    ] = None,
    all_skills: Annotated[
        bool, typer.Option("--all", help="Install every skill the source holds.")
    ] = False,
    scope: ScopeOption = ScopeChoice.workspace,
    verify: Annotated[
        Path | None,
        typer.Option("--verify", help="Require a valid signature by this public key."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace an installed skill (keeps a backup).")
    ] = False,
    identity: Annotated[
        Path | None,
        typer.Option("--identity", help="age identity file to open an encrypted .skillpack."),
    ] = None,
    allow_risk: Annotated[
        bool,
        typer.Option("--allow-risk", help="Install despite high-severity scanner findings."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Install skills from a folder, .skill, git, URL or skills index (see skills.lock)."""
    settings = settings_from_cli()
    with _choices_as_json(as_json), cli_reporter() as reporter:
        results = install_from(
            source,
            settings=settings,
            skills=skill or (),
            all_skills=all_skills,
            scope=_scope(scope),
            verify_key=verify,
            force=force,
            identity=identity,
            allow_risk=allow_risk,
            fetch=FetchOptions(reporter=reporter) if reporter else None,
        )
    if as_json:
        print_json(results[0].to_dict() if len(results) == 1 else [r.to_dict() for r in results])
    else:
        for result in results:
            _print_installed(result)
    note = workspace_note(settings) if scope is ScopeChoice.workspace and results else None
    if note:
        stderr_console().print(labelled("note", f": {note}"), highlight=False, soft_wrap=True)


@contextlib.contextmanager
def _choices_as_json(as_json: bool) -> Iterator[None]:
    """With --json, "several skills, choose" is a JSON listing (and exit 1), not a line."""
    try:
        yield
    except SkillChoiceError as e:
        if not as_json:
            raise
        print_json(choice_json(e))
        raise typer.Exit(1) from None


def choice_json(error: SkillChoiceError) -> dict[str, Any]:
    """``--json``'s "choose": the whole message — less the listing, which
    ``candidates`` carries, so "holds 2 skills:" goes on after a semicolon — and each
    candidate as ``{name, subpath, description}``."""
    lines = [line.strip() for line in str(error).splitlines() if not line.startswith("  ")]
    text = re.sub(r": ([A-Z])", lambda m: f"; {m[1].lower()}", " ".join(lines), count=1)
    return {
        "error": text,
        "candidates": [
            c.to_dict() if isinstance(c, Choice) else {"name": c, "subpath": "", "description": ""}
            for c in error.candidates
        ],
    }


def _print_installed(result: InstalledSkill) -> None:
    console = stdout_console()
    version = f" {result.version}" if result.version else ""
    # the count before the path, and no wrapping by rich: a long path wraps where the
    # terminal ends it instead of splitting "(1 file)" over two lines
    console.print(
        printable(f"Installed {result.name}{version} ({file_count(result.files)}) → {result.path}"),
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    if result.signed_by:
        console.print(f"  signature verified (key {result.signed_by})")
    elif result.claimed_signer:
        console.print(f"  signed by key {result.claimed_signer} — NOT verified (use --verify)")
    if result.backup:
        kept = printable(f"  previous copy kept at {result.backup}")
        console.print(kept, highlight=False, markup=False)
    for warning in result.warnings:
        console.print(Text("  ") + labelled("warning", f": {warning}"), highlight=False)


def file_count(count: int) -> str:
    """The count with its noun: "1 file", "3 files"."""
    return f"{count} file" + ("" if count == 1 else "s")


class _StderrStatus:
    """Network steps shown as one rich status line on stderr (a TTY only)."""

    def __init__(self, status: Any) -> None:
        self._status = status

    def step(self, message: str) -> None:
        self._status.update(f"{message}…")


@contextlib.contextmanager
def cli_reporter() -> Iterator[Reporter | None]:
    """A progress display for fetches: a spinner on stderr when it is a terminal,
    nothing otherwise (pipes and logs get no control codes)."""
    if not sys.stderr.isatty():
        yield None
        return
    console = stderr_console()
    with console.status("fetching…") as status:
        yield _StderrStatus(status)


def verify_cmd(
    scope: Annotated[
        ScopeChoice | None, typer.Option("--scope", help="Only this scope (default: both).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Check installed skills against skills.lock; exit 1 if any file changed."""
    settings = settings_from_cli()
    sc = _scope(scope) if scope else None
    checked = installed(settings, scope=sc)
    problems = verify(settings, scope=sc)
    if as_json:
        print_json(
            {
                "ok": not problems,
                "checked": [{"name": e.name, "scope": s} for s, e in checked],
                "problems": [p.to_dict() for p in problems],
            }
        )
    else:
        _print_verified(checked, problems)
    if problems:
        raise typer.Exit(1)


def _print_verified(checked: list[tuple[Scope, LockEntry]], problems: list[VerifyProblem]) -> None:
    """A line per installed skill — ok, CHANGED, or MISSING with how to restore it —
    and its problems right under it."""
    console = stdout_console()
    by_skill: dict[tuple[str, str], list[VerifyProblem]] = {}
    for p in problems:
        by_skill.setdefault((p.scope, p.name), []).append(p)
    for s, entry in checked:
        found = by_skill.pop((s, entry.name), [])
        gone = any(p.kind == "missing-skill" for p in found)
        mark = "[red]MISSING[/]" if gone else "[red]CHANGED[/]" if found else "[green]ok[/]"
        console.print(f"{mark} " + escape(printable(f"{entry.name} ({s})")), highlight=False)
        for p in found:  # right under their skill's line
            print_detail(console, p.message)
        if gone:
            print_detail(console, _how_to_restore(s, entry))
    for (where, name), found in by_skill.items():  # not listed (none expected)
        for p in found:
            print_detail(console, f"{name} ({where}): {p.message}")
    if not checked:
        console.print("No installed skills recorded in skills.lock.")


def _how_to_restore(scope: Scope, entry: LockEntry) -> str:
    scoped = " --scope user" if scope == "user" else ""
    if entry.kind == "local":
        return f"reinstall it: `{entry.reinstall_command(scope)}`"
    return f"restore it: `skilldeck skills update --force {entry.name}{scoped}`"


def print_detail(console: Console, message: str) -> None:
    """A line under a skill's line, indented also where it wraps (at 80 columns a
    command in it would otherwise continue at the left margin); plain text, so a
    bracket in a path or URL is not read as markup."""
    indent = "  "
    text = textwrap.fill(
        message,
        width=max(console.width, 40),
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    console.print(Text(text), soft_wrap=True)


def uninstall_cmd(
    name: Annotated[str, typer.Argument(help="The installed skill's name.")],
    scope: ScopeOption = ScopeChoice.workspace,
) -> None:
    """Remove an installed skill and its skills.lock entry."""
    path = uninstall(name, scope=_scope(scope), settings=settings_from_cli())
    stdout_console().print(f"Uninstalled {name} ({path})")


def register(app: typer.Typer) -> None:
    app.command("pack")(pack_cmd)
    app.command("keygen")(keygen_cmd)
    app.command("install")(install_cmd)
    app.command("verify")(verify_cmd)
    app.command("uninstall")(uninstall_cmd)
