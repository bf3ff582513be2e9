"""The end of an AG-UI run (``web/agui_outcome.py``): the outcome a ``done`` becomes,
the usage tallied on the way, the waiting calls built from the run's open calls."""

from __future__ import annotations

from typing import Any

import pytest
from ag_ui.core import RunErrorEvent, RunFinishedEvent

from skilldeck.agent.events import DoneEvent, ModelCallEvent, PermissionRequestEvent, UsageEvent
from skilldeck.llm.messages import Usage
from skilldeck.web.agui_outcome import OpenCall, RunTally, end_of_run
from skilldeck.web.interrupts import PendingCall


def end(status: str, waiting: list[PendingCall] | None = None, **kwargs: Any) -> Any:
    done = DoneEvent(session_id="s1", status=status, reason=kwargs.pop("reason", None))
    return end_of_run(done, thread_id="t", run_id="r", waiting=waiting, usage=None, now=7)


WAITING = [PendingCall("c1", "permission", "Bash", {"command": "ls"}, "asks")]


@pytest.mark.parametrize(
    ("status", "waiting", "outcome"),
    [
        ("completed", None, "success"),
        ("paused", WAITING, "interrupt"),
        ("paused", [], "success"),  # nothing to answer: no empty interrupt
        ("paused", None, "success"),  # a replayed pause, answered since
        ("cancelled", None, "cancelled"),
        ("max_turns", None, "success"),
    ],
)
def test_a_done_becomes_run_finished_with_its_outcome(
    status: str, waiting: list[PendingCall] | None, outcome: str
) -> None:
    event = end(status, waiting)
    assert isinstance(event, RunFinishedEvent)
    assert event.outcome is not None and event.outcome.type == outcome
    assert event.result == {"status": status, "reason": None, "text": ""}
    assert event.timestamp == 7


def test_an_error_done_becomes_run_error_with_its_reason() -> None:
    event = end("error", reason="the model refused")
    assert isinstance(event, RunErrorEvent)
    assert event.message == "the model refused"


def test_usage_is_the_runs_own_per_model() -> None:
    tally = RunTally()
    tally.saw(ModelCallEvent(turn=1, model="m1"))
    tally.add_usage(UsageEvent(turn=1, usage=Usage(input_tokens=3, output_tokens=2)))
    tally.add_usage(UsageEvent(turn=2, usage=Usage(input_tokens=1, output_tokens=1)))
    sub = UsageEvent(turn=1, usage=Usage(input_tokens=99), is_sub_agent=True, task_id="x")
    tally.add_usage(sub)
    tally.saw(ModelCallEvent(turn=1, model="sub", is_sub_agent=True, task_id="x"))
    usage = tally.usage()
    assert usage is not None and len(usage) == 1
    assert (usage[0].model, usage[0].input_tokens, usage[0].total_tokens) == ("m1", 4, 7)
    assert RunTally().usage() is None


def test_unanswered_calls_are_the_runs_own_with_their_permission_reasons() -> None:
    tally = RunTally()
    tally.add_permission_request(
        PermissionRequestEvent(tool="Bash", input={"command": "ls"}, reason="not allowed yet")
    )
    question = {"question": "Which?", "options": []}
    calls = {
        "c1": OpenCall("Bash", {"command": "ls"}, None),
        "c2": OpenCall("AskUserQuestion", {"questions": [question, "junk"]}, None),
        "c3": OpenCall("Bash", {"command": "pwd"}, "task-1"),  # a sub-agent's
    }
    waiting = tally.unanswered(calls)
    assert [(c.call_id, c.kind, c.reason) for c in waiting] == [
        ("c1", "permission", "not allowed yet"),
        ("c2", "question", ""),
    ]
    assert waiting[1].questions == [question]
