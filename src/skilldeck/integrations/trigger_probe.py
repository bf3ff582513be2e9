"""Trigger evals through a real model: does the model call ``Skill(name)``?

The routing layer (``skills/routing/evals.py``) reads eval sets and turns picks into
reports, but it may not talk to a model. This module is the model side of
``skilldeck skills eval --model M``: it builds a real agent with
:func:`~skilldeck.agent.builder.build_agent` (so the system prompt with the
level-1 ``<available_skills>`` block, the per-message skill hint and the tool set,
``Skill`` among them, are exactly what an agent run would send), sends each request
as the first turn of a fresh conversation, and records the skill the reply's first
``Skill`` call names (``None``: the model answered, searched or used other tools).
Nothing the model asks for is executed: only its first reply is read, so a
``Skill`` call never loads or runs anything here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import anyio

from skilldeck.agent.builder import build_agent
from skilldeck.agent.loop import Agent
from skilldeck.agent.run import HINT_META
from skilldeck.agent.store import SessionStore
from skilldeck.config import Settings
from skilldeck.errors import SkilldeckError
from skilldeck.llm.messages import AssistantMessage, Message, SystemMessage, UserMessage
from skilldeck.skills.model.spec import call_name
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.routing import CaseResult, TriggerCase

__all__ = ["first_request", "model_results", "probe_agent", "skill_called"]

#: requests sent to the model at once
CONCURRENCY = 4


@contextmanager
def probe_agent(
    settings: Settings, registry: SkillRegistry, model: str, *, base_url: str | None = None
) -> Iterator[Agent]:
    """An agent over ``registry`` with ``model``, as ``skilldeck run`` builds one, and
    a private in-memory session store (a probe leaves no session behind)."""
    store = SessionStore(":memory:")  # type: ignore[arg-type]  # sqlite's private db
    try:
        agent = build_agent(
            settings, model=model, registry=registry, session_store=store, base_url=base_url
        )
        with agent:
            yield agent
    finally:
        store.close()


def first_request(agent: Agent, query: str) -> list[Message]:
    """The messages a new session's first model call carries for ``query``: the
    system prompt ranked for it, the skill hint when there is one, the request."""
    system = agent.system_prompt(query) if callable(agent.system_prompt) else agent.system_prompt
    messages: list[Message] = [SystemMessage(content=system)]
    hint = agent.hinter(query) if agent.hinter is not None else None
    if hint:
        messages.append(UserMessage(content=hint[0], meta=HINT_META))
    messages.append(UserMessage(content=query))
    return messages


def skill_called(reply: AssistantMessage) -> str | None:
    """The skill named by the reply's first ``Skill`` call that names one."""
    for call in reply.tool_calls:
        if call.name != "Skill" or not isinstance(call.input, dict):
            continue
        name = call.input.get("skill")
        if isinstance(name, str) and name.strip():
            return call_name(name)
    return None


async def model_results(
    agent: Agent, cases: Sequence[TriggerCase], *, runs: int
) -> list[CaseResult]:
    """Every case ``runs`` times through the agent's model (a few at once)."""
    picks: dict[tuple[int, int], str | None] = {}
    failures: list[SkilldeckError] = []
    limiter = anyio.CapacityLimiter(CONCURRENCY)

    async def one(i: int, run: int, scope: anyio.CancelScope) -> None:
        try:
            async with limiter:
                messages = first_request(agent, cases[i].query)
                reply = await agent.model.respond(messages, agent.specs)
        except SkilldeckError as e:  # the first failure stops the rest: one clear error
            failures.append(e)
            scope.cancel()
            return
        picks[i, run] = skill_called(reply)

    async with anyio.create_task_group() as tg:
        for i in range(len(cases)):
            for run in range(runs):
                tg.start_soon(one, i, run, tg.cancel_scope)
    if failures:
        raise failures[0]
    return [
        CaseResult(case, tuple(picks[i, run] for run in range(runs)))
        for i, case in enumerate(cases)
    ]
