"""Many sessions in one process (issue 16, item 9): 50 concurrent agent sessions (200
with ``SKILLDECK_STRESS_BUDGET=full``) over one shared ``SkillRegistry``.

The house of ``tests/many_sessions.py`` — skill sets with different allowed-tools,
the four permission modes, allow/deny rules, sub-agents with and without ``Bash``,
``TodoWrite``, ``Skill`` loads gated by ``requires-tools`` — run in one anyio task
group; then no session may see another's tools, grants, gating, todos or events.
``tests/integration/test_many_sessions.py`` is the same with a dozen sessions.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import stress_helpers as H

from many_sessions import House, house_fixture
from many_sessions_checks import (
    event_problems,
    gating_problems,
    grant_problems,
    run_problems,
    todo_problems,
    tool_problems,
)
from skilldeck.agent.store import SessionStore

SESSIONS = H.scale(50, 200)


@pytest.fixture(scope="module")
def house() -> Iterator[tuple[House, SessionStore]]:
    yield from house_fixture(SESSIONS)


def _check(name: str, problems: list[str]) -> None:
    H.add(**{f"many_sessions_{name}_leaks": len(problems)})
    assert not problems, "\n".join(problems[:40])


def test_every_session_ran_as_planned(house: tuple[House, SessionStore]) -> None:
    problems = run_problems(house[0])
    H.add(
        many_sessions_in_process=len(house[0].sessions),
        unexpected_exceptions=sum(s.error is not None for s in house[0].sessions),
    )
    assert not problems, "\n".join(problems[:40])


def test_no_session_sees_another_sessions_tools(house: tuple[House, SessionStore]) -> None:
    _check("tool", tool_problems(house[0]))


def test_no_session_holds_another_sessions_grants(house: tuple[House, SessionStore]) -> None:
    _check("grant", grant_problems(*house))


def test_each_level1_block_lists_exactly_what_its_own_tools_allow(
    house: tuple[House, SessionStore],
) -> None:
    """Failed before 472e0ab (issue 16): requires-tools gating was written onto the
    registry's shared Skill objects, so a session's system prompt listed what the last
    agent to gate (a Bash-less sub-agent of another session) could use."""
    _check("gating", gating_problems(house[0]))


def test_each_session_has_its_own_todos(house: tuple[House, SessionStore]) -> None:
    _check("todo", todo_problems(*house))


def test_each_event_stream_is_its_own_sessions(house: tuple[House, SessionStore]) -> None:
    _check("event", event_problems(*house))
