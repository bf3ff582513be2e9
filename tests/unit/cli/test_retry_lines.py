"""A retried model call as the CLI shows it: one ``retry:`` line on stderr at once,
the ``model_retry`` event of the run's stream on stdout with ``--json`` (once: the
reporter does not print it too), and no second line from the rich renderer."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from skilldeck.agent.events import ModelRetryEvent, TextEvent
from skilldeck.cli.render import JsonRenderer, RichRenderer, retry_line
from skilldeck.cli.run import retry_reporter

EVENT = ModelRetryEvent(
    model="ollama:qwen2.5", attempt=1, attempts=4, delay=0.52, reason="timed out"
)


def test_the_line_says_which_attempt_when_and_why() -> None:
    assert retry_line(EVENT) == "retry: ollama:qwen2.5 attempt 2 of 4 in 0.5s (timed out)"


@pytest.mark.parametrize("json_mode", [False, True])
def test_the_reporter_writes_retries_only(
    json_mode: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    report = retry_reporter(json_mode)
    report(TextEvent(text="not a retry"))
    report(EVENT)
    out, err = capsys.readouterr()
    assert err == retry_line(EVENT) + "\n"
    assert out == ""  # the stream's model_retry event is what --json prints


def test_the_renderers_show_a_retry_that_reaches_the_stream_once() -> None:
    buffer = io.StringIO()
    RichRenderer(Console(file=buffer, width=80)).handle(EVENT)
    assert buffer.getvalue() == ""  # the CLI wrote it to stderr already
    RichRenderer(Console(file=buffer, width=80), show_retries=True).handle(EVENT)
    assert "retry: ollama:qwen2.5 attempt 2 of 4" in buffer.getvalue()
    lines = io.StringIO()
    JsonRenderer(lines).handle(EVENT)
    assert json.loads(lines.getvalue())["reason"] == "timed out"
