"""How the CLI shows the loop guard: the ``stuck`` status (exit 3, resumable), a
repeated call, and a tool call recovered from text, at 80 columns."""

from __future__ import annotations

import io
import json

from render_fixtures import shown
from skilldeck.agent.events import (
    DoneEvent,
    LoopDetectedEvent,
    TextDeltaEvent,
    ToolCallRecoveredEvent,
)
from skilldeck.cli.render import JsonRenderer, exit_code


def test_stuck_exits_3_and_says_how_to_continue() -> None:
    assert exit_code("stuck") == 3 == exit_code("max_turns")
    text = shown(DoneEvent(session_id="abc123", status="stuck", reason="the model repeated X"))
    assert "[stuck: the model repeated X]" in text
    assert "skilldeck resume abc123" in text
    assert all(len(line) <= 80 for line in text.splitlines())


def test_loop_and_recovery_lines() -> None:
    loop = LoopDetectedEvent(tool="TaskOutput", input={"task_id": "write_task"}, count=4, stop=True)
    text = shown(loop, ToolCallRecoveredEvent(id="text-1-1", name="Write", text="{}"))
    assert 'loop: TaskOutput {"task_id": "write_task"} ×4, same result: run stopped' in text
    assert "recovered a Write call the model wrote as text" in text
    assert all(len(line) <= 80 for line in text.splitlines())
    out = io.StringIO()
    JsonRenderer(out).handle(loop)
    assert json.loads(out.getvalue())["type"] == "loop_detected"


def test_a_streamed_call_written_as_text_ends_its_line_before_the_notice() -> None:
    call = '{"name": "Write", "arguments": {"file_path": "b", "content": "hi"}}'
    text = shown(
        TextDeltaEvent(text=call[:20]),
        TextDeltaEvent(text=call[20:]),
        ToolCallRecoveredEvent(id="text-1-1", name="Write", text=call),
    )
    lines = text.splitlines()
    notice = next(i for i, line in enumerate(lines) if "recovered a Write call" in line)
    assert lines[notice].startswith("recovered a Write call")
    assert call.endswith(lines[notice - 1].strip()[-10:])
