"""A run on the terminal: its event stream rendered to the end (rich cards or JSON
lines), Ctrl-C, the exit code of its status, approvals asked inline, retries on
stderr, and failures before the run as a JSON line too with ``--json``."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
import typer
from rich.console import Console
from rich.markup import escape
from rich.prompt import Prompt

from skilldeck.agent.events import DoneEvent, ModelRetryEvent
from skilldeck.agent.store import SessionStore
from skilldeck.cli.common import fail, print_jsonl
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
from skilldeck.cli.termtext import printable
from skilldeck.errors import SkilldeckError

if TYPE_CHECKING:
    from skilldeck.agent.events import Event
    from skilldeck.agent.loop import Agent
    from skilldeck.agent.permissions.gate import Approval, ApprovalRequest, Approver
    from skilldeck.cli.render import Renderer


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
        sys.stderr.write(f"error: {printable(str(done.reason), lines=True)}\n")
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
