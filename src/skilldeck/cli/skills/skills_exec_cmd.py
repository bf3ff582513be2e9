"""``skilldeck skills run`` and ``skilldeck skills audit``.

``run`` uses what the model's ``Skill`` tool uses, so what a user sees here is what
a model would get: a prompt skill's level 2 from the one load operation
(:func:`skilldeck.skills.execution.loading.load_skill_for_use`, read as its typed
:class:`~skilldeck.skills.execution.loading.LoadedSkill`: substitutions and dynamic context), a
script skill's JSON and a code skill's result (:meth:`SkillTool.invoke`). The user
invoking a skill by name is consent, so skills with ``disable-model-invocation`` run
here too, and neither dynamic-context commands nor a code skill's tool calls are
gated by permission rules (no permission gate is wired: everything is allowed).
"""

from __future__ import annotations

import json
import shlex
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer

from skilldeck.cli.common import (
    JsonOption,
    NoDefaultsOption,
    RootOption,
    fail,
    named_path,
    print_json,
)
from skilldeck.cli.skills.skills_show_cmd import invalid_lines
from skilldeck.cli.termtext import printable
from skilldeck.cli.workspace import discover_registry
from skilldeck.llm.client import ModelLLMClient
from skilldeck.llm.factory import make_model
from skilldeck.skills.code import audit_path
from skilldeck.skills.model.skill import SkillKind
from skilldeck.tools.base import ToolContext, ToolServices
from skilldeck.tools.skill_tool import SkillTool, load_in_context

if TYPE_CHECKING:
    from skilldeck.skills.execution import LoadedSkill
    from skilldeck.tools.base import ToolResult


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("audit")(audit)


def _arguments(input_json: str | None, words: list[str] | None) -> Any:
    if input_json is not None and words:
        fail("Give either --input JSON or positional ARGS, not both.", code=2)
    if input_json is not None:
        try:
            return json.loads(input_json)
        except json.JSONDecodeError as e:
            fail(f"--input is not valid JSON: {e.msg} (column {e.colno}).", code=2)
        except RecursionError:
            fail("--input is not valid JSON here: nested too deeply; flatten it.", code=2)
    return shlex.join(words) if words else None


def run(
    name: Annotated[str, typer.Argument(help="Skill name.")],
    args: Annotated[
        list[str] | None, typer.Argument(help="Arguments (a string for prompt skills).")
    ] = None,
    input_json: Annotated[
        str | None, typer.Option("--input", help="Arguments as one JSON value.")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Model for code skills that call ctx.llm.")
    ] = None,
    root: RootOption = None,
    no_defaults: NoDefaultsOption = False,
    json_: JsonOption = False,
) -> None:
    """Run a script or code skill, or print a prompt skill's rendered instructions."""
    registry = discover_registry(root, no_defaults)
    settings = registry.settings
    broken = [i for i in registry.invalid if i.name == name]
    if broken and name not in registry:  # not "no skill named X. Did you mean: X?"
        lines = invalid_lines(name, broken, action="run")
        typer.echo("error: " + printable("\n".join(lines), lines=True), err=True)
        raise typer.Exit(1)
    skill = registry.get(name)
    reason = registry.why_unavailable(skill)  # machine-level: no agent, no tool set
    if reason:
        fail(f"skill {name!r} is unavailable here: {reason}")
    services = ToolServices()
    if model:
        services.llm = ModelLLMClient(make_model(model, settings=settings))
    ctx = ToolContext(
        session_id=f"cli-{uuid.uuid4().hex[:12]}",
        workspace=settings.workspace,
        settings=settings,
        skills=registry,
        services=services,
    )
    value = _arguments(input_json, args)
    if skill.kind is SkillKind.PROMPT:

        async def load() -> LoadedSkill:
            return await load_in_context(skill, value, ctx, settings=settings)

        _report_loaded(anyio.run(load), json_=json_)
        return
    tool = SkillTool(registry)

    async def go() -> ToolResult:
        return await tool.invoke(skill, value, ctx, run_without_args=True)

    _report(anyio.run(go), json_=json_)


def _report_loaded(loaded: LoadedSkill, *, json_: bool) -> None:
    """A prompt skill's typed load result: its text, or why it was not loaded."""
    for warning in loaded.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if loaded.ok:
        content = f"Loaded skill {loaded.name} ({loaded.kind.value})\n\n{loaded.text}"
    elif loaded.status == "refused":
        content = loaded.error or ""
    else:
        content = f"Skill {loaded.name!r} failed: {loaded.error}"
    if json_:
        print_json(
            {
                "ok": loaded.ok,
                "content": content,
                "skill": loaded.name,
                "kind": loaded.kind.value,
                "mode": str(loaded.status),
                "folder": str(loaded.skill.folder),
                "allowed_tools": list(loaded.allowed_tools),
                "forbidden_tools": list(loaded.forbidden_tools),
                "warnings": list(loaded.warnings),
                **({"text": loaded.text} if loaded.ok else {}),
            }
        )
    elif loaded.ok:
        typer.echo(loaded.text)
    else:
        typer.echo(content, err=True)
    if not loaded.ok:
        raise typer.Exit(1)


def _report(result: ToolResult, *, json_: bool) -> None:
    data = dict(result.data or {})
    for warning in data.get("warnings", []):
        typer.echo(f"warning: {warning}", err=True)
    if json_:
        print_json({"ok": not result.is_error, "content": result.content, **data})
    elif result.is_error:
        typer.echo(result.content, err=True)
    elif data.get("mode") == "loaded":  # a script skill's instructions
        typer.echo(data.get("text", result.content))
    elif data.get("kind") == "script":
        print_json(data.get("result"))
    else:
        outcome = data.get("result") or {}
        typer.echo(outcome.get("output", result.content))
    if result.is_error:
        raise typer.Exit(1)


def audit(
    path: Annotated[
        Path,
        typer.Argument(
            parser=named_path, help="A skill folder, a .py file, a tree, or a skill name."
        ),
    ],
    all_files: Annotated[
        bool, typer.Option("--all-files", help="Also audit scripts/ (normally run sandboxed).")
    ] = False,
    root: RootOption = None,
    no_defaults: NoDefaultsOption = False,
    json_: JsonOption = False,
) -> None:
    """Statically audit a code skill for risky calls; exit 1 when anything is found."""
    target = path
    if not path.exists():
        registry = discover_registry(root, no_defaults)
        skill = registry.find(str(path))
        if skill is None:
            fail(f"{path}: no such file, folder or skill.", code=2)
        target = skill.folder
    findings = audit_path(target, include_scripts=all_files)
    if json_:
        print_json(
            {
                "path": str(target),
                "count": len(findings),
                "findings": [f.to_dict() for f in findings],
            }
        )
    else:
        for finding in findings:
            typer.echo(str(finding))
        files = len({f.path for f in findings})
        summary = (
            f"{len(findings)} finding(s) in {files} file(s)."
            if findings
            else f"No findings in {target}."
        )
        typer.echo(summary)
    if findings:
        raise typer.Exit(1)
