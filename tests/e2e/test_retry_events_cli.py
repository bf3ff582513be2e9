"""A retried model call seen from the CLI once it is a first-class event: one
``retry:`` line on stderr, one ``model_retry`` event with ``--json`` (not two: the
stream carries it now), no second line on stdout, and the event stored with the
session (``sessions show --events``)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import json_events, skilldeck
from test_model_failures_cli import BUSY, OK, ScriptedServer, run, ws  # noqa: F401


def test_with_json_the_retry_is_printed_once_and_stored(ws: Path) -> None:  # noqa: F811
    with ScriptedServer([BUSY, OK]) as server:
        code, out, err = run(ws, server.url, "--json")
    assert code == 0, err
    events = json_events(out)
    assert [e["type"] for e in events].count("model_retry") == 1
    assert sum(x.startswith("retry:") for x in err.splitlines()) == 1
    session = events[-1]["session_id"]
    shown = skilldeck("sessions", "show", session, "--json", "--events", cwd=ws)
    assert shown.returncode == 0, shown.stderr
    stored = json.loads(shown.stdout)["events"]
    assert [e["type"] for e in stored].count("model_retry") == 1


def test_without_json_the_retry_is_one_line_on_stderr_only(ws: Path) -> None:  # noqa: F811
    with ScriptedServer([BUSY, OK]) as server:
        code, out, err = run(ws, server.url)
    assert code == 0, err
    assert "retry:" not in out
    assert sum(x.startswith("retry:") for x in err.splitlines()) == 1
