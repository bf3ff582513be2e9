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

from typing import Annotated

import typer

from skilldeck.agent.store import SessionStore
from skilldeck.cli.common import JsonOption, NoDefaultsOption, RootOption, fail
from skilldeck.cli.run.launch import agent_request, stored_session_agent
from skilldeck.cli.run.options import (
    AgentOption,
    AllowOption,
    AskOption,
    BaseUrlOption,
    CwdOption,
    DenyOption,
    MaxTurnsOption,
    ModelOption,
    ModeOption,
    SeedOption,
    SkillOption,
    TemperatureOption,
    permission_flags,
)
from skilldeck.cli.run.terminal import (
    cancel_subagents,
    drive,
    finish,
    interactive,
    json_errors,
    retry_reporter,
    terminal_approver,
)
from skilldeck.settings import skilldeck_home


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
    if not task.strip():
        fail("TASK is empty; say what the agent should do.", code=2)
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
        store.messages(record.id)  # a damaged message: one error line before any work
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
