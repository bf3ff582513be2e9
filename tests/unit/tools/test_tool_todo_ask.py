"""TodoWrite (session state) and AskUserQuestion (pause request)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skilldeck.config import Settings
from skilldeck.tools.ask import WAITING, AskUserQuestionTool
from skilldeck.tools.base import ToolContext
from skilldeck.tools.todo import TODO_STATE, TodoWriteTool

pytestmark = pytest.mark.anyio


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(session_id="t", workspace=tmp_path, settings=Settings(workspace=tmp_path))


def todo(content: str, status: str) -> dict[str, str]:
    return {"content": content, "status": status, "activeForm": f"Doing {content}"}


async def test_todowrite_replaces_the_list(ctx: ToolContext) -> None:
    tool = TodoWriteTool()
    first = await tool.call({"todos": [todo("a", "pending"), todo("b", "pending")]}, ctx)
    assert not first.is_error
    assert [t["content"] for t in ctx.state[TODO_STATE]] == ["a", "b"]
    second = await tool.call({"todos": [todo("a", "completed"), todo("c", "in_progress")]}, ctx)
    assert ctx.state[TODO_STATE] == [todo("a", "completed"), todo("c", "in_progress")]
    assert "2 tasks: 1 completed, 1 in progress, 0 pending" in second.content
    assert "Current: Doing c." in second.content
    assert [t["content"] for t in second.data["old_todos"]] == ["a", "b"]


async def test_todowrite_notes_several_in_progress(ctx: ToolContext) -> None:
    result = await TodoWriteTool().call(
        {"todos": [todo("a", "in_progress"), todo("b", "in_progress")]}, ctx
    )
    assert not result.is_error
    assert "2 tasks are in_progress" in result.content


async def test_todowrite_empty_list_clears(ctx: ToolContext) -> None:
    ctx.state[TODO_STATE] = [todo("x", "pending")]
    result = await TodoWriteTool().call({"todos": []}, ctx)
    assert ctx.state[TODO_STATE] == [] and "0 tasks" in result.content


@pytest.mark.parametrize(
    "bad",
    [
        {"content": "a", "status": "doing", "activeForm": "A"},
        {"content": "", "status": "pending", "activeForm": "A"},
        {"content": "a", "status": "pending"},
    ],
)
async def test_todowrite_validation(ctx: ToolContext, bad: dict[str, Any]) -> None:
    result = await TodoWriteTool().call({"todos": [bad]}, ctx)
    assert result.is_error
    assert TODO_STATE not in ctx.state


def question(text: str = "Which database?", labels: tuple[str, ...] = ("SQLite", "Postgres")):  # type: ignore[no-untyped-def]
    return {
        "question": text,
        "header": "Database",
        "options": [{"label": label, "description": f"Use {label}"} for label in labels],
        "multiSelect": False,
    }


async def test_ask_returns_a_pause_request(ctx: ToolContext) -> None:
    result = await AskUserQuestionTool().call({"questions": [question()]}, ctx)
    assert not result.is_error
    assert result.content == WAITING
    assert result.pause is not None
    assert result.pause.kind == "ask_user"
    assert result.pause.payload == {"questions": [question()]}


async def test_ask_uses_an_interactive_callback_when_present(ctx: ToolContext) -> None:
    asked: list[Any] = []

    async def answer(questions: list[dict[str, Any]]) -> str:
        asked.append(questions)
        return "Postgres"

    ctx.services["ask_user"] = answer
    result = await AskUserQuestionTool().call({"questions": [question()]}, ctx)
    assert result.pause is None
    assert result.content == "User answered: Postgres"
    assert asked == [[question()]]


@pytest.mark.parametrize(
    "questions",
    [
        [],
        [question(f"q{i}?") for i in range(5)],
        [question(labels=("only one",))],
        [question(labels=("a", "b", "c", "d", "e"))],
        [question(labels=("same", "same"))],
        [question(), question()],
    ],
)
async def test_ask_validation(ctx: ToolContext, questions: list[dict[str, Any]]) -> None:
    result = await AskUserQuestionTool().call({"questions": questions}, ctx)
    assert result.is_error
    assert result.pause is None
