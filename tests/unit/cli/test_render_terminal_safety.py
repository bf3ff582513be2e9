"""Model text and tool output cannot drive the user's terminal (cli/render.py through
cli/termtext.printable): a fetched page can put escape sequences in both."""

from __future__ import annotations

from render_fixtures import shown
from skilldeck.agent.events import (
    AskUserEvent,
    PermissionRequestEvent,
    SubagentStartEvent,
    TextDeltaEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
)

HOSTILE = "done \x1b]52;c;ZXZpbA==\x07 \x1b[2J \u202etxt.exe"


def test_streamed_and_whole_model_text_is_printed_with_visible_escapes() -> None:
    for event in (TextDeltaEvent(text=HOSTILE + "\nnext"), TextEvent(text=HOSTILE)):
        text = shown(event)
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
        assert "\\x1b]52;c;ZXZpbA==\\x07" in text and "\\u202etxt.exe" in text


def test_tool_calls_and_results_are_printed_with_visible_escapes() -> None:
    text = shown(
        ToolCallEvent(id="1", name="Bash", input={"command": "echo " + HOSTILE}),
        ToolResultEvent(id="1", name="Bash", is_error=False, content=HOSTILE + "\nline 2"),
    )
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert text.count("\\x1b[2J") == 2 and "line 2" in text


def test_every_event_kind_is_printed_with_visible_escapes() -> None:
    question = {"question": HOSTILE, "options": [{"label": HOSTILE, "description": HOSTILE}]}
    text = shown(
        AskUserEvent(questions=[question]),
        SubagentStartEvent(subagent_type="explore", description=HOSTILE),
        WarningEvent(message=HOSTILE),
        PermissionRequestEvent(tool="Bash", input={}, reason=HOSTILE),
        ToolCallEvent(id="2", name="Bash\x1b[8m", input={}),
    )
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert text.count("\\x1b[2J") >= 5


def test_crlf_model_text_keeps_its_lines() -> None:
    text = shown(TextDeltaEvent(text="one\r\ntwo\r\n"))
    assert "one\ntwo" in text and "\\x0d" not in text
