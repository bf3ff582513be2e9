"""A dozen agent sessions in one process over one shared registry stay apart.

The fast variant of ``tests/stress/test_stress_many_sessions.py`` (issue 16, item 9):
the same house (``tests/many_sessions.py``), every profile at least once, run once
per module; each test checks one kind of isolation — tools, grants, gating, todos,
events — so a failure names what leaked.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from many_sessions import PROFILES, House, house_fixture
from many_sessions_checks import (
    event_problems,
    gating_problems,
    grant_problems,
    run_problems,
    todo_problems,
    tool_problems,
)
from skilldeck.agent.store import SessionStore

SESSIONS = 12
assert len(PROFILES) <= SESSIONS  # every profile runs at least once


@pytest.fixture(scope="module")
def house() -> Iterator[tuple[House, SessionStore]]:
    yield from house_fixture(SESSIONS)


def test_every_session_ran_as_planned(house: tuple[House, SessionStore]) -> None:
    problems = run_problems(house[0])
    assert not problems, "\n".join(problems)


def test_no_session_sees_another_sessions_tools(house: tuple[House, SessionStore]) -> None:
    problems = tool_problems(house[0])
    assert not problems, "\n".join(problems)


def test_no_session_holds_another_sessions_grants(house: tuple[House, SessionStore]) -> None:
    problems = grant_problems(*house)
    assert not problems, "\n".join(problems)


def test_each_level1_block_lists_exactly_what_its_own_tools_allow(
    house: tuple[House, SessionStore],
) -> None:
    """Failed before 472e0ab (issue 16): requires-tools gating was written onto the
    registry's shared Skill objects, so a session's system prompt listed what the last
    agent to gate (a Bash-less sub-agent of another session) could use."""
    problems = gating_problems(house[0])
    assert not problems, "\n".join(problems)


def test_each_session_has_its_own_todos(house: tuple[House, SessionStore]) -> None:
    problems = todo_problems(*house)
    assert not problems, "\n".join(problems)


def test_each_event_stream_is_its_own_sessions(house: tuple[House, SessionStore]) -> None:
    problems = event_problems(*house)
    assert not problems, "\n".join(problems)
