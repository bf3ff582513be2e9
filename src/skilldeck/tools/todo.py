"""TodoWrite: the session's task list, replaced whole on every call (Claude Code's
shape). The list lives in ``ctx.state["todos"]``; the session store persists it and
``/todos`` in the chat shows it."""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from skilldeck.tools.base import Tool, ToolContext, ToolResult

TODO_STATE = "todos"
Status = Literal["pending", "in_progress", "completed"]


class TodoItem(BaseModel):
    content: str = Field(min_length=1, description="The task, imperative: 'Run the tests'.")
    status: Status = Field(description="pending, in_progress or completed.")
    activeForm: str = Field(
        min_length=1, description="The task in present continuous: 'Running the tests'."
    )


class TodoWriteInput(BaseModel):
    todos: list[TodoItem] = Field(description="The updated todo list (replaces the old one).")


class TodoWriteTool(Tool):
    name: ClassVar[str] = "TodoWrite"
    description: ClassVar[str] = (
        "Creates and updates the structured task list of this session: pass the whole list "
        "every time (it replaces the previous one). Use it for multi-step work: mark a task "
        "in_progress before starting it (exactly one at a time) and completed as soon as it "
        "is done."
    )
    Input: ClassVar[type[BaseModel]] = TodoWriteInput
    read_only: ClassVar[bool] = True  # changes only the session's own list

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        args: TodoWriteInput = input
        old = list(ctx.state.get(TODO_STATE) or [])
        todos = [item.model_dump() for item in args.todos]
        ctx.state[TODO_STATE] = todos
        counts = Counter(item.status for item in args.todos)
        summary = (
            f"{len(todos)} task{'s' if len(todos) != 1 else ''}: {counts['completed']} "
            f"completed, {counts['in_progress']} in progress, {counts['pending']} pending."
        )
        notes = []
        if counts["in_progress"] > 1:
            notes.append(
                f"Note: {counts['in_progress']} tasks are in_progress; keep exactly one task "
                "in progress at a time."
            )
        current = next((t.activeForm for t in args.todos if t.status == "in_progress"), None)
        if current:
            notes.append(f"Current: {current}.")
        text = (
            "Todos have been modified successfully. Ensure that you continue to use the todo "
            f"list to track your progress. {summary}"
        )
        if notes:
            text += "\n" + "\n".join(notes)
        return ToolResult(content=text, data={"todos": todos, "old_todos": old})
