"""Running the real ``skilldeck`` CLI in a subprocess, and writing scripted-model files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def skilldeck(
    *args: str, cwd: Path, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m skilldeck.cli.main ARGS`` with the test's SKILLDECK_HOME and HOME."""
    full_env = {**os.environ, "PYTHONIOENCODING": "utf-8", "COLUMNS": "120", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "skilldeck.cli.main", *args],
        cwd=cwd,
        env=full_env,
        input=input if input is not None else "",
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )


def write_script(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def json_events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def tool_call(cid: str, name: str, **input: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "input": input}
