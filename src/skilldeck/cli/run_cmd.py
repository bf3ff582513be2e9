"""``skilldeck run TASK`` and ``skilldeck resume SESSION_ID``.

Thin: choose the model, build the agent (``agent/builder.py``), feed its event stream
to a renderer, turn the final status into an exit code — 0 completed or paused (the
command to continue is printed), 1 error (also an invalid ``--skill`` set, with its
diagnostics), 2 bad options, 3 stopped by ``max_turns`` or a limit, 130 interrupted.

Permissions: ``--permission-mode``, ``--allow``/``--ask``/``--deny RULE`` add to the
config's ``[permissions]``. On a terminal an ``ask`` is asked inline (allow once /
allow always / deny); otherwise the session pauses and ``resume ID --approve|--deny``
continues it.

``resume`` rebuilds the session from what it was launched with (``agent/store/resume.py``):
its settings, rules, tools and, for a sub-agent, its type and parent's rules — no
config file is read again. Its flags may only narrow: a stricter
``--permission-mode``, more ``--ask`` rules; ``--allow`` and a wider mode exit 2.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import anyio.to_thread
import typer
from rich.console import Console
from rich.markup import escape
from rich.prompt import Prompt

from skilldeck.agent.builder import SkillPreload, build_agent
from skilldeck.agent.events import DoneEvent, ModelRetryEvent
from skilldeck.agent.permissions.permissions import MODES
from skilldeck.agent.store import SessionStore, build_agent_for_session, session_settings
from skilldeck.cli.common import (
    JsonOption,
    NoDefaultsOption,
    RootOption,
    check_roots,
    fail,
    print_jsonl,
)
from skilldeck.cli.render import (
    APPROVAL_CHOICES,
    JsonRenderer,
    RichRenderer,
    approval_panel,
    exit_code,
    parse_approval,
    paused_help,
    retry_line,
)
from skilldeck.cli.workspace import offer_trust
from skilldeck.errors import ConfigError, PolicyError, SessionError, SkilldeckError
from skilldeck.settings import load_settings, skilldeck_home
from skilldeck.settings.model import ModelOptions
from skilldeck.skills.rules import parse_rules

if TYPE_CHECKING:
    from skilldeck.agent.events import Event
    from skilldeck.agent.loop import Agent
    from skilldeck.agent.permissions.gate import Approval, ApprovalRequest, Approver
    from skilldeck.agent.store import SessionRecord
    from skilldeck.cli.render import Renderer
    from skilldeck.config import Settings

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
    typer.Option("--temperature", min=0, help="Sampling temperature sent to the model."),
]
SeedOption = Annotated[
    int | None, typer.Option("--seed", help="Sampling seed sent to the model (repeatable runs).")
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
    agent_name: AgentOption = None,
    permission_mode: ModeOption = None,
    allow: AllowOption = None,
    ask: AskOption = None,
    deny: DenyOption = None,
    temperature: TemperatureOption = None,
    seed: SeedOption = None,
) -> None:
    """``--temperature``/``--seed`` win over ``[models.options]`` for this run (and
    its resumes: they are in the session's launch record)."""
    request = agent_request(
        model=model,
        agent_name=agent_name,
        skill=skill,
        cwd=cwd,
        max_turns=max_turns,
        base_url=base_url,
        root=root,
        no_defaults=no_defaults,
        permission_mode=permission_mode,
        allow=allow,
        ask=ask,
        deny=deny,
        sampling={"temperature": temperature, "seed": seed},
    )
    with json_errors(json_):
        agent = request.build(
            json_events=json_,
            approver=terminal_approver() if interactive(json_) else None,
            on_event=retry_reporter(json_),
        )
        with agent:
            done = drive(agent.run_stream(task), json_=json_, on_interrupt=cancel_subagents(agent))
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
    permission_mode: ModeOption = None,
    allow: AllowOption = None,
    ask: AskOption = None,
) -> None:
    """Rebuilds the session's agent as it was launched (settings, rules, tools); the
    flags given here may only narrow them (``--deny`` answers the pending call, so
    deny rules are not taken here)."""
    if allow:
        fail(
            "resume cannot add --allow rules: a resumed session keeps the permissions it "
            "was started with (approve the pending call with --approve, or start a new run).",
            code=2,
        )
    flags = permission_flags(permission_mode, None, ask, None)
    home = skilldeck_home()
    with SessionStore(home / "sessions.db") as store:
        record = store.get(session_id)
        agent = stored_session_agent(
            record,
            home,
            model=model,
            base_url=base_url,
            flags=flags,
            session_store=store,
            json_events=json_,
            approver=terminal_approver() if interactive(json_) else None,
            on_event=retry_reporter(json_),
        )
        stream = agent.resume_stream(record.id, answer=answer, approve=approve)
        done = drive(stream, json_=json_, on_interrupt=cancel_subagents(agent))
        finish(done, store, json_=json_)


# ---- shared with chat ---------------------------------------------------------------


def permission_flags(
    mode: str | None, allow: list[str] | None, ask: list[str] | None, deny: list[str] | None
) -> dict[str, Any]:
    """The permission options as ``build_agent`` keywords; bad values exit 2."""
    if mode is not None and mode not in MODES:
        fail(f"--permission-mode {mode!r}: use one of {', '.join(MODES)}.", code=2)
    for flag, rules in (("--allow", allow), ("--ask", ask), ("--deny", deny)):
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


@dataclass(frozen=True)
class AgentRequest:
    """The agent that ``run`` and ``chat`` ask for with the options they share, checked:
    the settings of the working directory and the ``build_agent`` keywords."""

    settings: Settings
    model: str | None
    agent_name: str | None
    keywords: dict[str, Any]

    def build(self, **kwargs: Any) -> Agent:
        """``build_agent`` with ``kwargs`` added. The builder decides the model
        (``--model``, then the agent definition's, then config) and preloads the
        ``--skill`` bodies through the one load operation, their notices to stderr; an
        invalid ``--skill`` set exits 1 with its diagnostics and its warnings go to
        stderr."""

        def notice(message: str) -> None:
            sys.stderr.write(f"warning: {message}\n")

        with policy_errors():
            agent = build_agent(
                self.settings,
                model=self.model,
                agent=self.agent_name,
                preload=SkillPreload(on_warning=notice),
                **self.keywords,
                **kwargs,
            )
        if agent.composed is not None:
            for warning in agent.composed.warnings:
                sys.stderr.write(f"warning: {warning.code} {warning.message}\n")
        return agent


def agent_request(
    *,
    model: str | None,
    agent_name: str | None,
    skill: list[str] | None,
    cwd: Path | None,
    max_turns: int | None,
    base_url: str | None,
    root: list[Path] | None,
    no_defaults: bool,
    permission_mode: str | None,
    allow: list[str] | None,
    ask: list[str] | None,
    deny: list[str] | None,
    sampling: dict[str, float | int | None] | None = None,
) -> AgentRequest:
    """The shared options as an :class:`AgentRequest`; bad ones exit 2. ``sampling``
    (``--temperature``, ``--seed``) overrides every model's options."""
    workdir = workdir_option(cwd)
    check_roots(root, no_defaults)
    keywords: dict[str, Any] = {
        "skills": skill or (),
        "cwd": workdir,
        "max_turns": max_turns,
        "roots": root or (),
        "no_defaults": no_defaults,
        "base_url": base_url,
    }
    offer_trust(workdir)  # asks only at a terminal, before the config is read
    settings = with_sampling(load_settings(workspace=workdir), sampling or {})
    keywords.update(permission_flags(permission_mode, allow, ask, deny))
    return AgentRequest(settings, model, agent_name, keywords)


def with_sampling(settings: Settings, sampling: dict[str, float | int | None]) -> Settings:
    """``settings`` whose every ``[models.options]`` table (and ``"*"``) carries the
    flags' sampling values, so they win whatever table matches the model (a copy)."""
    given = {key: value for key, value in sampling.items() if value is not None}
    if not given:
        return settings
    options = {k: o.model_copy(update=given) for k, o in settings.models.options.items()}
    options["*"] = options.get("*", ModelOptions()).model_copy(update=given)
    models = settings.models.model_copy(update={"options": options})
    return settings.model_copy(update={"models": models})


@contextlib.contextmanager
def json_errors(json_: bool) -> Iterator[None]:
    """With ``--json``, a failure before or outside the run (a bad model spec, a missing
    key) is also an ``{"type": "error"}`` line on stdout, so a program reading the
    events sees why there are none; the one-line stderr message and exit 1 stay."""
    try:
        yield
    except SkilldeckError as e:
        if json_:
            print_jsonl({"type": "error", "message": str(e)})
        raise


def continued_agent(
    session: str,
    *,
    model: str | None,
    base_url: str | None,
    permission_mode: str | None,
    allow: list[str] | None,
    ask: list[str] | None,
    deny: list[str] | None,
    **kwargs: Any,
) -> Agent:
    """``chat --session ID``: the session's agent as it was launched, like ``resume`` —
    settings, rules and tools from its launch record, never from files the model could
    have rewritten since; the flags given may only narrow it (exit 2 otherwise)."""
    if allow:
        fail(
            "chat --session cannot add --allow rules: a continued session keeps the "
            "permissions it was started with (start a new chat to widen them).",
            code=2,
        )
    flags = permission_flags(permission_mode, None, ask, deny)
    flags.pop("allow")
    home = skilldeck_home()
    try:
        with SessionStore(home / "sessions.db") as store:
            record = store.get(store.resolve(session))
    except SessionError as e:
        fail(str(e))
    return stored_session_agent(record, home, model=model, base_url=base_url, flags=flags, **kwargs)


def stored_session_agent(
    record: SessionRecord,
    home: Path,
    *,
    model: str | None,
    base_url: str | None,
    flags: dict[str, Any],
    **kwargs: Any,
) -> Agent:
    """The agent a stored session ran as — its launch record, never the files as they
    are now — for ``resume`` and ``chat --session`` alike; ``flags`` may only narrow it
    (a widening exits 2, an invalid skill set exits 1)."""
    settings = session_settings(record, home=home)
    with policy_errors(), widening_errors():
        return build_agent_for_session(
            settings, record, model=model, base_url=base_url, **flags, **kwargs
        )


@contextlib.contextmanager
def widening_errors() -> Iterator[None]:
    """A resume asked to widen a session (a wider mode): the message, exit 2."""
    try:
        yield
    except ConfigError as e:
        fail(str(e), code=2)


@contextlib.contextmanager
def policy_errors() -> Iterator[None]:
    """Turn a PolicyError (an invalid skill set) into its diagnostics and exit 1."""
    try:
        yield
    except PolicyError as e:
        sys.stderr.write("error: the skill set is invalid:\n")
        for d in e.diagnostics:
            sys.stderr.write(f"  {d.code} {d.rule}: {d.message}\n")
        if not e.diagnostics:
            sys.stderr.write(f"  {e}\n")
        raise typer.Exit(1) from None


def retry_reporter(json_: bool) -> Callable[[Event], None]:
    """What a retried model call shows: one ``retry:`` line on stderr, at once — the
    wait may be long. Its ``model_retry`` event also reaches the run's stream after the
    call (stored with the turn), where ``--json`` prints it among the others and the
    rich renderer leaves it out; every other event passes by untouched."""

    def report(event: Event) -> None:
        if not isinstance(event, ModelRetryEvent):
            return
        sys.stderr.write(retry_line(event) + "\n")
        sys.stderr.flush()

    return report


def cancel_subagents(agent: Agent) -> Callable[[], None]:
    """What Ctrl-C does besides cancelling the run: cancel background sub-agents."""

    def cancel() -> None:
        manager = agent.subagents
        if manager is None:
            return
        cancelled = manager.cancel_all()
        if cancelled:
            sys.stderr.write(f"cancelled {len(cancelled)} background sub-agent(s).\n")

    return cancel


def workdir_option(cwd: Path | None) -> Path:
    workdir = (cwd or Path.cwd()).expanduser().resolve()
    if not workdir.is_dir():
        fail(f"--cwd {workdir}: not a folder.", code=2)
    return workdir


def interactive(json_: bool) -> bool:
    return not json_ and sys.stdin.isatty() and sys.stdout.isatty()


def make_renderer(
    *, json_: bool, console: Console | None = None, error_line: bool = True
) -> Renderer:
    return JsonRenderer() if json_ else RichRenderer(console, error_line=error_line)


def drive(
    stream: AsyncIterator[Event],
    *,
    json_: bool,
    renderer: Renderer | None = None,
    on_interrupt: Callable[[], None] | None = None,
) -> DoneEvent:
    """Render ``stream`` to the end; the final (top-level) ``done`` event. On Ctrl-C the
    run records ``cancelled``, ``on_interrupt`` runs, and the command exits 130."""
    # run/resume print an error once, on stderr (finish), not also in the transcript
    out = renderer or make_renderer(json_=json_, error_line=False)

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
        if on_interrupt is not None:
            on_interrupt()
        sys.stderr.write("\ninterrupted; the session was saved and can be resumed.\n")
        raise typer.Exit(130) from None
    if done is None:  # pragma: no cover - the loop always ends with a done event
        fail("the run ended without a result.")
    return done


def finish(done: DoneEvent, store: SessionStore, *, json_: bool) -> None:
    """Print how to continue a paused session; exit with the status's code."""
    if done.status == "paused":
        help_text = paused_help(done.session_id, store.get(done.session_id).pending)
        sys.stderr.write(help_text + "\n")
    elif done.status == "error" and not json_:
        sys.stderr.write(f"error: {done.reason}\n")
    code = exit_code(done.status)
    if code:
        raise typer.Exit(code)


def terminal_approver(console: Console | None = None) -> Approver:
    """Asks on the terminal: the tool, a preview of its input, and allow once / allow
    always / deny. "Allow always" becomes a rule for the rest of the session."""

    async def approve(request: ApprovalRequest) -> Approval:
        out = console or Console()
        out.print(approval_panel(request))

        def ask() -> str:
            return Prompt.ask(
                escape(APPROVAL_CHOICES),
                choices=["y", "a", "n"],
                default="n",
                show_choices=False,
                console=out,
            )

        return parse_approval(await anyio.to_thread.run_sync(ask))

    return approve
