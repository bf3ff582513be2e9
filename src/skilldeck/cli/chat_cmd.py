"""``skilldeck chat``: an interactive session with the agent.

On a terminal it is a prompt_toolkit REPL — history in ``$SKILLDECK_HOME/chat_history``,
Enter sends, Esc+Enter (or a trailing backslash) starts a new line. When stdin is not
a terminal it reads lines from stdin instead (a trailing backslash continues a line),
so it can be scripted and tested in a subprocess. Questions (``AskUserQuestion``) and
permission prompts are asked inline through the same reader.

Commands: ``/skills``, ``/skill NAME [args]`` (load a skill by hand and send args),
``/todos``, ``/session``, ``/help``, ``/exit``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer
from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from skilldeck.agent.builder import skill_body_message
from skilldeck.agent.events import DoneEvent
from skilldeck.agent.pending import Pending
from skilldeck.agent.permissions import SkillAwareGate
from skilldeck.cli.chat_input import LineReader, PromptReader, StdinReader, sigint_cancels
from skilldeck.cli.common import JsonOption, NoDefaultsOption, RootOption
from skilldeck.cli.render import APPROVAL_CHOICES, approval_panel, parse_approval, questions_text
from skilldeck.cli.run import (
    AgentOption,
    AllowOption,
    AskOption,
    BaseUrlOption,
    CwdOption,
    DenyOption,
    MaxTurnsOption,
    ModelOption,
    ModeOption,
    SkillOption,
    agent_request,
    cancel_subagents,
    continued_agent,
    make_renderer,
    retry_reporter,
)
from skilldeck.cli.skills import invalid_lines
from skilldeck.cli.termtext import printable
from skilldeck.errors import SkillError
from skilldeck.settings import skilldeck_home
from skilldeck.tools.base import ToolContext, ToolServices
from skilldeck.tools.skill_tool import load_in_context

if TYPE_CHECKING:
    from skilldeck.agent.events import Event
    from skilldeck.agent.loop import Agent
    from skilldeck.agent.permissions import Approval, ApprovalRequest
    from skilldeck.llm.messages import Message

HELP = """\
/skills              list the skills available in this session
/skill NAME [args]   load a skill's instructions and send args (or "use it") to the agent
/todos               show the session's todo list
/session             show the session id (continue later with `chat --session ID`)
/help                this help
/exit                leave (Ctrl-D works too)
Esc+Enter or a trailing backslash starts a new line."""


SessionOption = Annotated[
    str | None, typer.Option("--session", help="Continue this session (id or unique prefix).")
]


def register(app: typer.Typer) -> None:
    app.command("chat", help="Talk with the agent interactively.")(chat)


def chat(
    model: ModelOption = None,
    skill: SkillOption = None,
    cwd: CwdOption = None,
    max_turns: MaxTurnsOption = None,
    base_url: BaseUrlOption = None,
    root: RootOption = None,
    no_defaults: NoDefaultsOption = False,
    session: SessionOption = None,
    json_: JsonOption = False,
    agent_name: AgentOption = None,
    permission_mode: ModeOption = None,
    allow: AllowOption = None,
    ask: AskOption = None,
    deny: DenyOption = None,
) -> None:
    tty = sys.stdin.isatty()
    console = Console(stderr=json_)
    if session:  # a continued session runs as it was launched; flags only narrow it
        home = skilldeck_home()
        reader: LineReader = PromptReader(home / "chat_history") if tty else StdinReader()
        repl = Repl(reader, console, json_=json_, prompt="› " if tty else "")
        agent = continued_agent(
            session,
            model=model,
            base_url=base_url,
            permission_mode=permission_mode,
            allow=allow,
            ask=ask,
            deny=deny,
            json_events=json_ or not tty,
            approver=repl.approve,
            services={"ask_user": repl.ask_user},
            on_event=retry_reporter(json_),
        )
    else:
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
        )
        reader = PromptReader(request.settings.home / "chat_history") if tty else StdinReader()
        repl = Repl(reader, console, json_=json_, prompt="› " if tty else "")
        agent = request.build(
            json_events=json_ or not tty,
            approver=repl.approve,
            services={"ask_user": repl.ask_user},
            on_event=retry_reporter(json_),
        )
    with agent:
        repl.agent = agent
        repl.session_id = agent.store.resolve(session) if session else None
        anyio.run(repl.loop)


class Repl:
    """The read → command-or-send → render loop; owns nothing but the session id."""

    def __init__(self, reader: LineReader, console: Console, *, json_: bool, prompt: str) -> None:
        self.reader, self.console, self.json_, self.prompt = reader, console, json_, prompt
        self.agent: Agent | None = None
        self.session_id: str | None = None

    async def loop(self) -> None:
        agent = self._agent()
        if not self.json_:
            self.console.print(
                f"skilldeck chat · {agent.model_spec} · /help for commands",
                style="dim",
                highlight=False,
            )
        while True:
            line = await self.reader.read(self.prompt)
            if line is None:
                break
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                if not await self.command(text):
                    break
                continue
            await self.send(text)

    def _agent(self) -> Agent:
        assert self.agent is not None, "chat() sets the agent before the loop starts"
        return self.agent

    # ---- sending -------------------------------------------------------------------

    async def send(self, text: str, preload: Sequence[Message] = ()) -> None:
        """One turn (and any pauses it needs); Ctrl-C cancels the turn, not the chat."""
        with anyio.CancelScope() as scope, sigint_cancels(scope):
            await self._turn(text, preload)
        if scope.cancelled_caught:
            self._after_cancel()

    async def _turn(self, text: str, preload: Sequence[Message]) -> None:
        agent = self._agent()
        stream = agent.run_stream(text, session_id=self.session_id, preload=preload)
        done = await self.render(stream)
        self.session_id = done.session_id
        while done.status == "paused":
            done = await self._continue_paused(done)

    def _after_cancel(self) -> None:
        """Say so, stop background sub-agents, and keep the (cancelled) session so the
        next message continues the same conversation."""
        agent = self._agent()
        cancel_subagents(agent)()
        if self.session_id is None:  # the turn that was cancelled started the session
            mine = [
                r
                for r in agent.store.list(limit=10, status="cancelled")
                if r.metadata.get("pid") == os.getpid()
            ]
            self.session_id = mine[0].id if mine else None
        self.console.print(
            "Turn cancelled. Send a new message, or press Ctrl-C again (or Ctrl-D) to leave.",
            style="yellow",
            highlight=False,
        )

    async def _continue_paused(self, done: DoneEvent) -> DoneEvent:
        agent = self._agent()
        raw = agent.store.get(done.session_id).pending
        pending = Pending.from_dict(raw) if raw else None
        answer: str | None = None
        approve: bool | None = None
        if pending is not None and pending.needs_answer():
            answer = await self.reader.read("answer> ") or ""
        if pending is not None and pending.needs_approval():
            reply = await self.reader.read("approve? [y/n] ") or ""
            approve = parse_approval(reply).value != "deny"
        return await self.render(
            agent.resume_stream(done.session_id, answer=answer, approve=approve)
        )

    async def render(self, stream: AsyncIterator[Event]) -> DoneEvent:
        renderer = make_renderer(json_=self.json_, console=self.console)
        last: DoneEvent | None = None
        try:
            async for event in stream:
                renderer.handle(event)
                if isinstance(event, DoneEvent) and not event.is_sub_agent:
                    last = event
        finally:
            renderer.close()
        assert last is not None, "every run ends with a done event"
        return last

    # ---- human in the loop -----------------------------------------------------------

    async def approve(self, request: ApprovalRequest) -> Approval:
        """Tool, input preview, then allow once / allow always / deny; "always" makes the
        loop remember it for the rest of the session."""
        self.console.print(approval_panel(request))
        self.console.print(f"{APPROVAL_CHOICES}: ", end="", highlight=False, markup=False)
        return parse_approval(await self.reader.read("") or "")

    async def ask_user(self, questions: list[dict[str, Any]]) -> str:
        self.console.print(
            Panel(
                questions_text(questions),
                title="Question",
                title_align="left",
                border_style="yellow",
            )
        )
        return (await self.reader.read("answer> ") or "").strip()

    # ---- slash commands ------------------------------------------------------------------

    async def command(self, text: str) -> bool:
        """Run a ``/command``; False means leave the chat."""
        name, _, rest = text[1:].partition(" ")
        name = name.lower()
        if name in {"exit", "quit", "q"}:
            return False
        if name == "help":
            self.console.print(HELP, highlight=False, markup=False)
        elif name == "skills":
            self._list_skills()
        elif name == "skill":
            await self._invoke_skill(rest.strip())
        elif name == "todos":
            self._todos()
        elif name == "session":
            self.console.print(self.session_id or "No session yet: send a message first.")
        else:
            self.console.print(f"Unknown command /{name}. Type /help.", style="yellow")
        return True

    def _list_skills(self) -> None:
        """The skills ``/skill`` can load here; the ones it cannot are counted, not
        listed (``skills list --all`` says why each one is left out)."""
        registry = self._agent().skills
        # the registry's view: enabled, and usable on this machine (not gated)
        every = registry.list(include_disabled=True) if registry is not None else []
        enabled = registry.list() if registry is not None else []
        usable = registry.usable() if registry is not None else []
        if not usable:
            self.console.print("No usable skills found.")
        for s in usable:
            line = Text(printable(s.name), style="bold")
            line.append("  " + printable(" ".join(s.description.split())[:100]))
            self.console.print(line, highlight=False)
        hidden = {
            "unavailable": len(enabled) - len(usable),
            "disabled": len(every) - len(enabled),
            "invalid": len({i.name for i in registry.invalid} - set(registry.names()))
            if registry is not None
            else 0,
        }
        counts = ", ".join(f"{n} {kind}" for kind, n in hidden.items() if n)
        if counts:
            self.console.print(
                f"({counts} hidden; see: skilldeck skills list --all)", style="dim", markup=False
            )

    async def _invoke_skill(self, rest: str) -> None:
        """Load a skill by hand through the one load operation (the Skill tool's): the
        same substitutions, dynamic context vetted by this session's gate, grants."""
        agent = self._agent()
        name, _, raw_args = rest.partition(" ")
        args = raw_args.strip() or None
        if not name or agent.skills is None:
            self.console.print("Usage: /skill NAME [args]", style="yellow")
            return
        broken = [i for i in agent.skills.invalid if i.name == name]
        if broken and name not in agent.skills:
            lines = invalid_lines(name, broken, action="load")
            self.console.print("\n".join(lines), style="red", markup=False, highlight=False)
            return
        try:
            skill = agent.skills.get(name)
        except SkillError as e:
            self.console.print(str(e), style="red", markup=False)
            return
        reason = agent.skills.why_unavailable(skill)  # machine-level, as before
        if reason is not None:
            self.console.print(
                f"Skill {name!r} is unavailable here: {reason}", style="red", markup=False
            )
            return
        if not skill.metadata.user_invocable:
            self.console.print(
                f"Skill {name!r} cannot be invoked by hand (user-invocable: false).", style="yellow"
            )
            return
        ctx = self._context(seed=False)
        loaded = await load_in_context(skill, args, ctx, settings=agent.settings)
        for warning in loaded.warnings:
            self.console.print(f"warning: {printable(warning)}", style="yellow", markup=False)
        if not loaded.ok:
            self.console.print(str(loaded.error), style="red", markup=False, highlight=False)
            return
        self._preapprove(list(loaded.allowed_tools), list(loaded.forbidden_tools))
        note = f'The user invoked the skill "{skill.name}". Follow its instructions.'
        preload = [skill_body_message(skill.name, loaded.text, note=note)]
        await self.send(args or f"Use the {skill.name} skill.", preload)

    def _context(self, *, seed: bool = True) -> ToolContext:
        """This session's tool context (its gate and sandbox state). Before the first
        message: one over the state the session will start with (``seed``: that very
        state, so what is written there carries into the session; else a copy)."""
        agent = self._agent()
        if self.session_id is not None:
            return agent.tool_context(self.session_id)
        return ToolContext(
            session_id="",
            workspace=agent.cwd,
            settings=agent.settings,
            state=agent.initial_state if seed else dict(agent.initial_state),
            services=ToolServices(tool_gate=agent.gate).overlay(agent.services),
        )

    def _preapprove(self, allowed: list[str], forbidden: list[str]) -> None:
        """As when the model loads a skill with the Skill tool: its allowed-tools are
        pre-approved and its forbidden tools denied for the rest of the session."""
        agent = self._agent()
        if not isinstance(agent.gate, SkillAwareGate):
            return
        agent.gate.preapprove_skill(self._context(), allowed, forbidden)

    def _todos(self) -> None:
        if self.session_id is None:
            self.console.print("No todos yet.")
            return
        todos = self._agent().store.todos(self.session_id)
        if not todos:
            self.console.print("No todos yet.")
        marks = {"completed": "✔", "in_progress": "▶", "pending": "○"}
        for todo in todos:
            line = printable(f"{marks.get(todo['status'], '?')} {todo['content']}")
            self.console.print(line, highlight=False, markup=False)
