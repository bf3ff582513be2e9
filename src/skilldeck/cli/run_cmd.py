"""``skilldeck run TASK`` and ``skilldeck resume SESSION_ID``.

Thin: choose the model, build the agent (``agent/builder.py``), feed its event stream
to a renderer, turn the final status into an exit code — 0 completed or paused (the
command to continue is printed), 1 error, 3 stopped by ``max_turns`` or a limit,
130 interrupted.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from skilldeck.cli.common import JsonOption, NoDefaultsOption, RootOption, fail

if TYPE_CHECKING:
    from rich.console import Console

    from skilldeck.agent.events import DoneEvent, Event
    from skilldeck.agent.gate import Approval, ApprovalRequest, Approver
    from skilldeck.agent.session import SessionStore
    from skilldeck.cli.render import Renderer

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
    Path | None, typer.Option("--cwd", help="Working directory of the run (default: here).")
]
MaxTurnsOption = Annotated[
    int | None, typer.Option("--max-turns", min=1, help="Stop after this many model turns.")
]
BaseUrlOption = Annotated[
    str | None, typer.Option("--base-url", help="Server URL for openai-compat/ollama models.")
]


def register(app: typer.Typer) -> None:
    app.command("run", help="Run a task with the agent until it is done.")(run)
    app.command("resume", help="Continue a paused or interrupted session.")(resume)


def run(
    task: Annotated[str, typer.Argument(help="What the agent should do.")],
    model: ModelOption = None,
    skill: SkillOption = None,
    cwd: CwdOption = None,
    max_turns: MaxTurnsOption = None,
    json_: JsonOption = False,
    base_url: BaseUrlOption = None,
    root: RootOption = None,
    no_defaults: NoDefaultsOption = False,
) -> None:
    from skilldeck.agent.builder import build_agent, choose_model_spec
    from skilldeck.config import load_settings

    workdir = workdir_option(cwd)
    check_roots(root, no_defaults)
    settings = load_settings(workspace=workdir)
    agent = build_agent(
        settings,
        model=choose_model_spec(settings, model),
        skills=skill or (),
        cwd=workdir,
        max_turns=max_turns,
        json_events=json_,
        approver=terminal_approver() if interactive(json_) else None,
        roots=root or (),
        no_defaults=no_defaults,
        base_url=base_url,
    )
    with agent:
        done = drive(agent.run_stream(task), json_=json_)
        finish(done, agent.store, json_=json_)


def resume(
    session_id: Annotated[str, typer.Argument(help="The session id (a unique prefix works).")],
    answer: Annotated[
        str | None, typer.Option("--answer", "-a", help="Answer to the pending question.")
    ] = None,
    approve: Annotated[
        bool | None,
        typer.Option("--approve/--deny", help="Approve or deny the pending tool call."),
    ] = None,
    json_: JsonOption = False,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
) -> None:
    from skilldeck.agent.builder import build_agent_for_session
    from skilldeck.agent.session import SessionStore
    from skilldeck.config import load_settings

    with SessionStore.open(load_settings()) as store:
        record = store.get(session_id)
        settings = load_settings(workspace=Path(record.cwd))
        agent = build_agent_for_session(
            settings,
            record,
            model=model,
            base_url=base_url,
            session_store=store,
            json_events=json_,
            approver=terminal_approver() if interactive(json_) else None,
        )
        stream = agent.resume_stream(record.id, answer=answer, approve=approve)
        done = drive(stream, json_=json_)
        finish(done, store, json_=json_)


# ---- shared with chat ---------------------------------------------------------------


def workdir_option(cwd: Path | None) -> Path:
    workdir = (cwd or Path.cwd()).expanduser().resolve()
    if not workdir.is_dir():
        fail(f"--cwd {workdir}: not a folder.", code=2)
    return workdir


def check_roots(roots: list[Path] | None, no_defaults: bool) -> None:
    for root in roots or ():
        if not root.is_dir():
            fail(f"--root {root}: not a folder.", code=2)
    if no_defaults and not roots:
        fail("--no-defaults needs at least one --root.", code=2)


def interactive(json_: bool) -> bool:
    return not json_ and sys.stdin.isatty() and sys.stdout.isatty()


def make_renderer(*, json_: bool, console: Console | None = None) -> Renderer:
    from skilldeck.cli.render import JsonRenderer, RichRenderer

    return JsonRenderer() if json_ else RichRenderer(console)


def drive(
    stream: AsyncIterator[Event], *, json_: bool, renderer: Renderer | None = None
) -> DoneEvent:
    """Render ``stream`` to the end; the final (top-level) ``done`` event."""
    import anyio

    from skilldeck.agent.events import DoneEvent

    out = renderer or make_renderer(json_=json_)

    async def consume() -> DoneEvent | None:
        last: DoneEvent | None = None
        try:
            async for event in stream:
                out.handle(event)
                if isinstance(event, DoneEvent) and not event.is_sub_agent:
                    last = event
        finally:
            out.close()
        return last

    try:
        done = anyio.run(consume)
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted; the session was saved and can be resumed.\n")
        raise typer.Exit(130) from None
    if done is None:  # pragma: no cover - the loop always ends with a done event
        fail("the run ended without a result.")
    return done


def finish(done: DoneEvent, store: SessionStore, *, json_: bool) -> None:
    """Print how to continue a paused session; exit with the status's code."""
    from skilldeck.cli.render import exit_code, paused_help

    if done.status == "paused":
        help_text = paused_help(done.session_id, store.get(done.session_id).pending)
        sys.stderr.write(help_text + "\n")
    elif done.status == "error" and not json_:
        sys.stderr.write(f"error: {done.reason}\n")
    code = exit_code(done.status)
    if code:
        raise typer.Exit(code)


def terminal_approver() -> Approver:
    """Asks on the terminal: allow once, allow always, or deny."""

    async def approve(request: ApprovalRequest) -> Approval:
        import anyio.to_thread

        from skilldeck.cli.render import approval_prompt, parse_approval

        answer = await anyio.to_thread.run_sync(input, approval_prompt(request))
        return parse_approval(answer)

    return approve
