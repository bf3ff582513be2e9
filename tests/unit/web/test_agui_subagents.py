"""Sub-agent runs in an AG-UI run (``web/agui_subagents.py``): which run an event
belongs to, and which ``Task`` call each sub-agent answers."""

from __future__ import annotations

from itertools import count

from ag_ui.core import SubagentFinishedEvent, SubagentStartedEvent

from skilldeck.agent.events import SubagentEndEvent, SubagentStartEvent, TextEvent
from skilldeck.web.agui_subagents import SubagentRuns


def runs() -> SubagentRuns:
    numbers = count(1)
    return SubagentRuns(clock=lambda: 0, next_number=lambda: next(numbers))


def started(tracker: SubagentRuns, event: SubagentStartEvent) -> SubagentStartedEvent:
    out = tracker.started(event)
    assert out is not None and isinstance(out[0], SubagentStartedEvent)
    return out[0]


def test_sub_agents_answer_their_scopes_task_calls_oldest_first() -> None:
    tracker = runs()
    tracker.called(None, "call-a", "Task")
    tracker.called(None, "call-b", "Agent")  # Claude Code's alias
    tracker.called(None, "call-r", "Read")  # no sub-agent comes of it
    tracker.answered(None, "call-a")  # its result came first: a sub-agent no longer waits
    first = started(
        tracker, SubagentStartEvent(subagent_type="x", task_id="t1", is_sub_agent=False)
    )
    second = started(tracker, SubagentStartEvent(subagent_type="x", task_id="t2"))
    assert (first.subagent_run_id, first.parent_tool_call_id) == ("t1", "call-b")
    assert (second.subagent_run_id, second.parent_tool_call_id) == ("t2", None)


def test_a_background_grand_child_is_not_the_scope_of_its_parents_events() -> None:
    tracker = runs()
    child = SubagentStartEvent(subagent_type="x", task_id="t1", is_sub_agent=True, background=True)
    assert started(tracker, child).subagent_run_id == "t1/1"
    text = TextEvent(text="the parent's own", task_id="t1", is_sub_agent=True)
    assert tracker.scope(text) == "t1"  # not nested: the parent goes on meanwhile
    end = SubagentEndEvent(subagent_type="x", status="completed", task_id="t1", is_sub_agent=True)
    assert tracker.ended(end) is None  # its end stays a CUSTOM event


def test_a_foreground_grand_child_scopes_the_events_until_its_end() -> None:
    tracker = runs()
    child = SubagentStartEvent(subagent_type="x", task_id="t1", is_sub_agent=True)
    assert started(tracker, child).subagent_run_id == "t1/1"
    text = TextEvent(text="the grand-child's", task_id="t1", is_sub_agent=True)
    assert tracker.scope(text) == "t1/1"
    end = SubagentEndEvent(
        subagent_type="x", status="completed", result="ok", task_id="t1", is_sub_agent=True
    )
    ended = tracker.ended(end)
    assert ended is not None and ended[0] == "t1/1"
    assert isinstance(ended[1], SubagentFinishedEvent) and ended[1].result == "ok"
    assert tracker.scope(text) == "t1"
