"""Which agent a command asks for: a new one from the shared options
(:class:`AgentRequest`, for ``run`` and ``chat``), or a stored session's as it was
launched (``resume``, ``chat --session``), its flags only narrowing it. An invalid
skill set exits 1 with its diagnostics; a widening exits 2."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from skilldeck.agent.builder import SkillPreload, build_agent
from skilldeck.agent.store import SessionStore, build_agent_for_session, session_settings
from skilldeck.cli.common import check_roots, fail
from skilldeck.cli.run.options import permission_flags, workdir_option
from skilldeck.cli.termtext import printable
from skilldeck.cli.workspace import offer_trust, settings_for_roots
from skilldeck.errors import ConfigError, PolicyError, SessionError
from skilldeck.settings import skilldeck_home
from skilldeck.settings.model import ModelOptions

if TYPE_CHECKING:
    from skilldeck.agent.loop import Agent
    from skilldeck.agent.store import SessionRecord
    from skilldeck.config import Settings


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
            sys.stderr.write(f"warning: {printable(message, lines=True)}\n")

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
                sys.stderr.write(f"warning: {warning.code} {printable(warning.message)}\n")
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
    offer_trust(workdir, skill_roots=not no_defaults)  # a terminal only, before config
    loaded = settings_for_roots(no_defaults, workspace=workdir)
    settings = with_sampling(loaded, sampling or {})
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
            store.messages(record.id)  # a damaged one refuses the session now, not at turn 1
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
            sys.stderr.write(f"  {d.code} {d.rule}: {printable(d.message)}\n")
        if not e.diagnostics:
            sys.stderr.write(f"  {printable(str(e))}\n")
        raise typer.Exit(1) from None
