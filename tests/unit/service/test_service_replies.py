"""Replies to a paused turn: gathered per call, checked, and turned into one resume."""

from __future__ import annotations

import json

import pytest

from skilldeck.agent.dispatch import Waiting
from skilldeck.agent.pending import Pending
from skilldeck.errors import SessionError
from skilldeck.llm.messages import ToolCall
from skilldeck.service import Decision
from skilldeck.service.replies import Replies, answer_text, settle

QUESTION = {"question": "Which colour?", "header": "Colour", "options": []}


def paused(*kinds: str) -> Pending:
    calls = [
        ToolCall(id=f"c{i}", name="Write" if k == "permission" else "AskUserQuestion")
        for i, k in enumerate(kinds)
    ]
    pending = Pending(turn=1, calls=calls)
    for call, kind in zip(calls, kinds, strict=True):
        payload = {"tool": call.name} if kind == "permission" else {"questions": [QUESTION]}
        pending.waiting[call.id] = Waiting(kind, payload)
    return pending


def test_one_approval_resumes_with_the_loops_flag() -> None:
    pending, replies = paused("permission"), Replies()
    assert not replies.complete(pending)
    replies.add_decision("s", pending, "c0", Decision.ALLOW)
    assert replies.complete(pending)
    plan = replies.plan(pending)
    assert (plan.approve, plan.answer, plan.settled, plan.always) == (True, None, {}, [])


def test_a_denial_alone_is_the_loops_deny() -> None:
    pending, replies = paused("permission", "permission"), Replies()
    replies.add_decision("s", pending, "c0", "deny")  # type: ignore[arg-type]
    replies.add_decision("s", pending, "c1", Decision.DENY)
    plan = replies.plan(pending)
    assert plan.approve is False and plan.settled == {}


def test_mixed_decisions_settle_the_denied_calls_first() -> None:
    pending, replies = paused("permission", "permission"), Replies()
    replies.add_decision("s", pending, "c0", Decision.ALWAYS)
    replies.add_decision("s", pending, "c1", Decision.DENY)
    plan = replies.plan(pending)
    assert plan.approve is True
    assert list(plan.settled) == ["c1"] and plan.settled["c1"].is_error
    assert "denied" in plan.settled["c1"].content
    assert [c.id for c in plan.always] == ["c0"]
    stored = settle(pending, plan.settled)
    assert list(stored["waiting"]) == ["c0"] and stored["results"]["c1"]["is_error"]


def test_answers_and_approvals_together() -> None:
    pending, replies = paused("permission", "ask_user"), Replies()
    replies.add_answer("s", pending, "c1", ["blue"])
    assert not replies.complete(pending)
    replies.add_decision("s", pending, "c0", Decision.ALLOW)
    plan = replies.plan(pending)
    assert plan.approve is True and plan.answer == "blue"  # one question: its answer


def test_different_answers_to_two_questions_are_settled_each_with_its_own() -> None:
    pending, replies = paused("ask_user", "ask_user"), Replies()
    replies.add_answer("s", pending, "c0", "red")
    replies.add_answer("s", pending, "c1", {"Which colour?": "blue"})
    plan = replies.plan(pending)
    assert plan.answer is None
    assert '"Which colour?"="red"' in plan.settled["c0"].content
    assert '"Which colour?"="blue"' in plan.settled["c1"].content


def test_replies_to_the_wrong_call_are_refused_with_what_is_waiting() -> None:
    pending, replies = paused("permission", "ask_user"), Replies()
    with pytest.raises(SessionError, match=r"no call 'nope' waiting.*c0, c1"):
        replies.add_decision("s", pending, "nope", Decision.ALLOW)
    with pytest.raises(SessionError, match="waiting for an answer; use answer"):
        replies.add_decision("s", pending, "c1", Decision.ALLOW)
    with pytest.raises(SessionError, match="waiting for a permission decision; use approve"):
        replies.add_answer("s", pending, "c0", "yes")
    with pytest.raises(SessionError, match=r"'maybe' is not a reply.*'allow'.*'always'.*'deny'"):
        replies.add_decision("s", pending, "c0", "maybe")  # type: ignore[arg-type]


def test_answer_text_shapes() -> None:
    assert answer_text("plain") == "plain"
    one = [QUESTION]
    assert answer_text({"Colour": ["red", "blue"]}, one) == "red, blue"  # by header
    assert answer_text(["blue"], one) == "blue"
    assert json.loads(answer_text(["a", ["b", "c"]])) == ["a", ["b", "c"]]
    assert json.loads(answer_text({"Q": ["x", "y"]})) == {"Q": ["x", "y"]}
