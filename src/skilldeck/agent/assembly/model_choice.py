"""Which model an agent runs, and the model object it gets.

The precedence is one function (:func:`skilldeck.settings.precedence.resolve_model`):
the caller's ``--model`` (or a ready ``Model``), then the agent definition's, then
config and ``SKILLDECK_MODEL``. Here too: a ``scripted:`` path made absolute so
another process can resume the session, every retry of the model turned into a
:class:`~skilldeck.agent.events.ModelRetryEvent` (``llm/`` cannot import events), and
the settings an agent sees knowing the context window the server reported.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from skilldeck.agent.events import Event, ModelRetryEvent
from skilldeck.agent.recorder import tell_retry
from skilldeck.agent.subagents import AgentDefinition, discover_agents
from skilldeck.config import Settings
from skilldeck.llm.factory import make_model
from skilldeck.llm.messages import Model
from skilldeck.llm.profile import Profile
from skilldeck.llm.retry import RetryNotice
from skilldeck.settings.precedence import resolve_model

__all__ = [
    "choose_model_spec",
    "make_agent_model",
    "normalise_spec",
    "pick_model",
    "resolve_definition",
    "retry_events",
    "with_window",
]


def choose_model_spec(settings: Settings, explicit: str | None = None) -> str:
    """``--model``, then config (``model``, ``models.default``; workspace over user),
    then ``SKILLDECK_MODEL``: the one order of :mod:`skilldeck.settings.precedence`.
    Raises ModelConfigError naming the three ways to set one."""
    return resolve_model(settings, explicit=explicit)


def normalise_spec(spec: str) -> str:
    """Make a ``scripted:`` path absolute, so another process can resume the session."""
    if spec.startswith("scripted:"):
        path = Path(spec.removeprefix("scripted:")).expanduser()
        if not path.is_absolute() and path.exists():
            return f"scripted:{path.resolve()}"
    return spec


def resolve_definition(
    settings: Settings, agent: str | AgentDefinition | None
) -> AgentDefinition | None:
    """The agent definition named ``agent`` (AgentNotFoundError with suggestions)."""
    if agent is None or isinstance(agent, AgentDefinition):
        return agent
    return discover_agents(settings).get(agent)


def pick_model(
    settings: Settings, definition: AgentDefinition | None, explicit: str | Model | None = None
) -> str | Model:
    """The model precedence, in one place (:func:`skilldeck.settings.precedence.resolve_model`):
    the caller's (``--model``, or a ready ``Model``), then the agent definition's, then
    config and ``SKILLDECK_MODEL`` as loaded into ``settings.model``."""
    if explicit is not None and not isinstance(explicit, str):
        return explicit
    named = definition.model if definition else None
    return resolve_model(settings, explicit=explicit or None, definition=named)


def make_agent_model(
    model: str | Model,
    spec: str,
    settings: Settings,
    base_url: str | None,
    on_retry: Callable[[RetryNotice], None] | None,
) -> Model:
    """``model`` itself when it is a ready ``Model``, else the model ``spec`` names
    (credentials, base URL and retries from ``settings``)."""
    if not isinstance(model, str):
        return model
    return make_model(spec, settings=settings, base_url=base_url, on_retry=on_retry)


def retry_events(
    on_event: Callable[[Event], None] | None,
) -> Callable[[RetryNotice], None] | None:
    """Every retry of the model as a :class:`ModelRetryEvent` for the run whose call
    it is — stored and streamed, then on to ``on_event`` (the CLI prints a line for it)
    — or, outside a run's call, straight to ``on_event``; ``llm/`` cannot import events."""

    def notify(notice: RetryNotice) -> None:
        tell_retry(
            ModelRetryEvent(
                model=notice.model,
                attempt=notice.attempt,
                attempts=notice.attempts,
                delay=notice.delay,
                reason=notice.reason,
            ),
            on_event,
        )

    return notify


def with_window(settings: Settings, spec: str, profile: Profile) -> Settings:
    """``settings`` whose ``models.context_windows`` knows the window the server
    reported, so context trimming works to the real size (a copy: never written on
    the runtime's settings)."""
    known = settings.models.context_windows
    if profile.window is None or known.get(spec) == profile.window:
        return settings
    models = settings.models.model_copy(update={"context_windows": {**known, spec: profile.window}})
    return settings.model_copy(update={"models": models})
