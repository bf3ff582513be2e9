"""A missing API key is reported before the model SDK is imported (it costs seconds):
checked in a fresh interpreter, through the factory and through ``skilldeck run``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import json, sys
from skilldeck.errors import ModelConfigError
{call}
sdks = sorted(m for m in ("openai", "anthropic") if m in sys.modules)
print(json.dumps({{"error": error, "sdks": sdks}}))
"""

FACTORY = """
from pathlib import Path
from skilldeck.config import Settings
from skilldeck.llm.factory import make_model
try:
    make_model({spec!r}, settings=Settings(home=Path({home!r}), workspace=Path({home!r})))
    error = None
except ModelConfigError as e:
    error = str(e)
"""

CLI = """
from skilldeck.cli.main import main
sys.argv = ["skilldeck", "run", "hi", "--model", {spec!r}]
try:
    main()
    error = None
except SystemExit as e:
    error = f"exit {{e.code}}"
"""


def probe(tmp_path: Path, call: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_AUTH_TOKEN"))}
    env["SKILLDECK_HOME"] = str(tmp_path / "home")
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(call=call)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["stderr"] = proc.stderr
    return result


@pytest.mark.parametrize(
    ("spec", "variable"),
    [("openai:gpt-4.1", "OPENAI_API_KEY"), ("anthropic:claude-sonnet-4-6", "ANTHROPIC_API_KEY")],
)
def test_the_factory_names_the_key_without_importing_the_sdk(
    tmp_path: Path, spec: str, variable: str
) -> None:
    result = probe(tmp_path, FACTORY.format(spec=spec, home=str(tmp_path)))
    assert variable in str(result["error"])
    assert result["sdks"] == []


def test_run_reports_the_missing_key_in_one_line_before_the_sdk(tmp_path: Path) -> None:
    result = probe(tmp_path, CLI.format(spec="openai:gpt-4.1"))
    assert result["error"] == "exit 1"
    assert result["sdks"] == []
    lines = [line for line in str(result["stderr"]).splitlines() if line.strip()]
    assert len(lines) == 1 and "OPENAI_API_KEY" in lines[0], result["stderr"]
