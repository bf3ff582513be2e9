"""The official TypeScript client (`@ag-ui/client`, npm) drives `skilldeck web`:
run → interrupt (approval) → resume → interrupt (question) → resume → done.

Needs node and `npm ci` in tests/integration/agui_client/ (never installed at test
time); skipped, saying so, without them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from skilldeck.web import create_app
from web_flow import TASK, live_server, write_flow

CLIENT = Path(__file__).resolve().parent / "agui_client"


@pytest.fixture
def node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("needs node on PATH")
    if not (CLIENT / "node_modules" / "@ag-ui" / "client").is_dir():
        pytest.skip(f"needs `npm ci` in {CLIENT} (the official @ag-ui/client)")
    return node


def test_the_official_client_runs_interrupts_and_resumes(node: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    script = write_flow(tmp_path / "flow.jsonl")
    app = create_app(service_options={"model": f"scripted:{script}", "cwd": work})
    with live_server(app) as url:
        proc = subprocess.run(
            [node, "run_flow.mjs", url, TASK],
            cwd=CLIENT,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["steps"] == [
        [{"id": "write-1", "reason": "tool_approval"}],
        [{"id": "ask-1", "reason": "question"}],
        [],
    ]
    assert report["seen"].count("RUN_FINISHED") == 3
    assert {"SUBAGENT_STARTED", "SUBAGENT_FINISHED", "STATE_SNAPSHOT"} <= set(report["seen"])
    assert report["texts"][-1].startswith("## Done")
    assert report["state"]["todos"][0]["status"] == "completed"
    assert (work / "NOTES.md").exists()
