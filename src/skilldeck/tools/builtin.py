"""The built-in tool set, with Claude Code's names (``Skill`` and ``Memory`` are added
by the agent builder, ``Task`` by ``agent/subagents/subagents.py``)."""

from __future__ import annotations

from skilldeck.tools.ask import AskUserQuestionTool
from skilldeck.tools.base import Tool
from skilldeck.tools.bash import BashTool
from skilldeck.tools.fs import EditTool, GlobTool, GrepTool, MultiEditTool, ReadTool, WriteTool
from skilldeck.tools.todo import TodoWriteTool
from skilldeck.tools.web import WebFetchTool, WebSearchTool

BUILTIN_TOOL_NAMES = (
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "Glob",
    "Grep",
    "Bash",
    "WebFetch",
    "WebSearch",
    "TodoWrite",
    "AskUserQuestion",
)


def builtin_tools() -> list[Tool]:
    """Fresh instances of every built-in tool, in a stable order."""
    return [
        ReadTool(),
        WriteTool(),
        EditTool(),
        MultiEditTool(),
        GlobTool(),
        GrepTool(),
        BashTool(),
        WebFetchTool(),
        WebSearchTool(),
        TodoWriteTool(),
        AskUserQuestionTool(),
    ]
