"""The stored form of a paused turn, the answer's wording and the resume command."""

from __future__ import annotations

import json

import pytest

from skilldeck.agent.dispatch import Outcome, Waiting
from skilldeck.agent.pending import Pending, format_answer, resume_command
from skilldeck.errors import SessionError
from skilldeck.llm.messages import ToolCall
from skilldeck.tools.base import ToolResult

Q1 = {"question": "Which colour?", "header": "Colour", "options": []}
Q2 = {"question": "Which size?", "header": "Size", "options": []}


def test_round_trip_through_json() -> None:
    calls = [
        ToolCall(id="a", name="Echo", input={"t": 1}),
        ToolCall(id="b", name="AskUserQuestion", input={}),
        ToolCall(id="c", name="Bash", input={"command": "ls"}),
    ]
    pending = Pending.from_outcomes(
        [
            Outcome(calls[0], ToolResult("done", is_error=True)),
            Outcome(calls[1], waiting=Waiting("ask_user", {"questions": [Q1]})),
            Outcome(calls[2], waiting=Waiting("permission", {"tool": "Bash"}, "asks")),
        ],
        turn=3,
    )
    again = Pending.from_dict(json.loads(json.dumps(pending.to_dict())))
    assert again.calls == calls and again.turn == 3
    assert again.results["a"].content == "done" and again.results["a"].is_error
    assert again.waiting["c"].reason == "asks"
    assert again.kind == "permission" and again.needs_answer() and again.needs_approval()
    with pytest.raises(SessionError, match="Which colour"):
        again.check("s1", answer=None, approve=True)
    with pytest.raises(SessionError, match="approval to run Bash"):
        again.check("s1", answer="Red", approve=None)
    again.check("s1", answer="Red", approve=False)
    assert resume_command("s1", again) == (
        "skilldeck resume s1 --answer 'YOUR ANSWER' --approve (or --deny)"
    )


def test_malformed_pending_is_a_session_error() -> None:
    with pytest.raises(SessionError, match="malformed"):
        Pending.from_dict({"calls": [{"nope": 1}]})


def test_answer_wording() -> None:
    one = format_answer({"questions": [Q1]}, "Blue")
    assert one.startswith('User has answered your questions: "Which colour?"="Blue".')
    by_question = format_answer(
        {"questions": [Q1, Q2]}, json.dumps({"Which colour?": "Red", "Size": ["S", "M"]})
    )
    assert '"Which colour?"="Red", "Which size?"="S, M"' in by_question
    by_position = format_answer({"questions": [Q1, Q2]}, '["Red", "L"]')
    assert '"Which size?"="L"' in by_position
    free = format_answer({"questions": [Q1, Q2]}, "whatever you think")
    assert '"Which colour?"; "Which size?"="whatever you think"' in free
    assert format_answer({}, "raw") == "raw"
