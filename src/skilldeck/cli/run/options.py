"""The options ``run``, ``resume`` and ``chat`` share, and their checks: a bad value
exits 2 with one line naming the flag (permission modes and rules, ``--cwd``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from skilldeck.agent.permissions.permissions import MODES
from skilldeck.cli.common import fail, named_path
from skilldeck.skills.rules import parse_rules

ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="provider:model, e.g. openai:gpt-4.1-mini, "
        "ollama:qwen2.5, scripted:demo.jsonl (default: config, then SKILLDECK_MODEL).",
    ),
]
SkillOption = Annotated[
    list[str] | None,
    typer.Option("--skill", "-s", help="Preload this skill's instructions (repeatable)."),
]
CwdOption = Annotated[
    Path | None,
    typer.Option("--cwd", parser=named_path, help="Working directory of the run (default: here)."),
]
MaxTurnsOption = Annotated[
    int | None, typer.Option("--max-turns", min=1, help="Stop after this many model turns.")
]
BaseUrlOption = Annotated[
    str | None, typer.Option("--base-url", help="Server URL for openai-compat/ollama models.")
]
AgentOption = Annotated[
    str | None,
    typer.Option("--agent", help="Run as this agent definition (see `skilldeck agents list`)."),
]
ModeOption = Annotated[
    str | None,
    typer.Option(
        "--permission-mode",
        help="default (edits and Bash ask), acceptEdits, plan (read-only) or bypassPermissions.",
    ),
]
AllowOption = Annotated[
    list[str] | None,
    typer.Option("--allow", help="Allow rule, e.g. 'Bash(git diff:*)' or 'Edit(src/**)'."),
]
AskOption = Annotated[
    list[str] | None, typer.Option("--ask", help="Ask-first rule, e.g. 'Bash(git push:*)'.")
]
DenyOption = Annotated[
    list[str] | None, typer.Option("--deny", help="Deny rule, e.g. 'Read(./secrets/**)'.")
]
TemperatureOption = Annotated[
    float | None,
    typer.Option("--temperature", min=0, max=100, help="Sampling temperature sent to the model."),
]
SeedOption = Annotated[
    int | None, typer.Option("--seed", help="Sampling seed sent to the model (repeatable runs).")
]


def permission_flags(
    mode: str | None, allow: list[str] | None, ask: list[str] | None, deny: list[str] | None
) -> dict[str, Any]:
    """The permission options as ``build_agent`` keywords; bad values exit 2."""
    if mode is not None and mode not in MODES:
        fail(f"--permission-mode {mode!r}: use one of {', '.join(MODES)}.", code=2)
    for flag, rules in (("--allow", allow), ("--ask", ask), ("--deny", deny)):
        if any(not rule.strip() for rule in rules or ()):  # `--deny "$RULE"` with RULE unset
            fail(f"{flag} is empty; give a rule such as 'Bash(git push:*)'.", code=2)
        try:
            parse_rules(rules or ())
        except ValueError as e:
            fail(f"{flag}: {e}", code=2)
    return {
        "permission_mode": mode,
        "allow": list(allow or ()),
        "ask": list(ask or ()),
        "deny": list(deny or ()),
    }


def workdir_option(cwd: Path | None) -> Path:
    """``--cwd`` (default: here) as a resolved folder; anything else exits 2."""
    workdir = (cwd or Path.cwd()).expanduser().resolve()
    if not workdir.is_dir():
        fail(f"--cwd {workdir}: not a folder.", code=2)
    return workdir
