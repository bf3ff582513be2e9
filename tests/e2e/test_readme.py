"""The README cannot rot: its two set-up commands are the ones CI runs, and its
offline demo and Python examples run as written (against a temporary workspace)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.DOTALL)


def test_first_two_commands_are_what_ci_runs() -> None:
    install, test = blocks("bash")[0].strip().splitlines()
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert install in ci and test in ci
    assert ci.index(install) < ci.index(test)


def run_cli(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skilldeck.cli.main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_offline_demo_runs_as_written(tmp_path: Path, skilldeck_home: Path) -> None:
    demo = blocks("bash")[1]
    command = " ".join(
        line.strip().rstrip("\\").strip()
        for line in demo.split("skilldeck run", 1)[1].split("skilldeck sessions")[0].splitlines()
    )
    args = ["run", *_split(command.replace("/tmp/skilldeck-demo", str(tmp_path))), "--json"]
    env = {**os.environ, "SKILLDECK_HOME": str(skilldeck_home)}
    proc = run_cli(args, REPO, env)
    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout.strip().splitlines()[-1])
    assert done["type"] == "done" and done["status"] == "completed"
    assert (tmp_path / "fizzbuzz.py").is_file()
    listed = run_cli(["sessions", "list", "--json"], REPO, env)
    assert done["session_id"] in listed.stdout


def test_python_examples_run(tmp_path: Path, skilldeck_home: Path) -> None:
    env = {**os.environ, "SKILLDECK_HOME": str(skilldeck_home)}
    for code in blocks("python"):
        script = code.replace(
            "load_settings()",
            f'load_settings(workspace=__import__("pathlib").Path({str(tmp_path)!r}))',
        )
        script = script.replace("examples/demo.jsonl", str(REPO / "examples" / "demo.jsonl"))
        proc = subprocess.run(
            [sys.executable, "-c", script],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        if "run_sync" in code:
            assert proc.stdout.startswith("completed"), proc.stdout


def _split(command: str) -> list[str]:
    import shlex

    return shlex.split(command)
