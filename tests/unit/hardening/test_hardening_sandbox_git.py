"""Issue 15, class 2's git half: a narrowly allowed ``git status`` / ``git diff`` run
through the ``Bash`` tool must not execute what ``.git/config`` names — with the
sandbox off (the environment alone must hold) and on (it is also read-only there)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from skilldeck._gitguard import GIT_OVERRIDES, git_guard_env
from skilldeck.config import SandboxSettings, Settings
from skilldeck.sandbox import probe_sandbox
from skilldeck.tools.base import ToolContext
from skilldeck.tools.bash import BashTool

pytestmark = pytest.mark.anyio

MODES = [
    "off",
    pytest.param(
        "required",
        marks=pytest.mark.skipif(
            not probe_sandbox().available, reason="bubblewrap sandbox not usable here"
        ),
    ),
]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def hostile_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose config names a program (in the workspace) for every hook
    git offers; the program leaves a marker when it runs."""
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = ws / "MARKER"
    evil = ws / "evil.sh"
    evil.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\nexit 0\n')
    evil.chmod(0o755)
    _git(ws, "init", "-q")
    _git(
        ws, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "i"
    )
    (ws / "tracked.txt").write_text("one\n")
    _git(ws, "add", "tracked.txt")
    _git(ws, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", "t")
    (ws / "tracked.txt").write_text("two\n")
    for key in ("core.fsmonitor", "diff.external", "core.pager", "core.editor", "gpg.program"):
        _git(ws, "config", key, str(evil))
    _git(ws, "config", "core.hooksPath", str(ws))
    (ws / "pre-commit").write_text(evil.read_text())
    (ws / "pre-commit").chmod(0o755)
    _git(ws, "config", "commit.gpgSign", "true")
    return ws, marker


def make_ctx(ws: Path, mode: str) -> ToolContext:
    settings = Settings(workspace=ws, sandbox=SandboxSettings(mode=mode))  # type: ignore[arg-type]
    return ToolContext(session_id="s", workspace=ws.resolve(), settings=settings)


@pytest.mark.parametrize("mode", MODES)
async def test_git_does_not_run_what_the_repository_config_names(
    hostile_repo: tuple[Path, Path], mode: str
) -> None:
    ws, marker = hostile_repo
    # the attack is real: plain git runs the program
    subprocess.run(["git", "-C", str(ws), "status"], capture_output=True, check=False)
    assert marker.exists()
    marker.unlink()
    ctx = make_ctx(ws, mode)
    status = await BashTool().call({"command": "git status --short"}, ctx)
    diff = await BashTool().call({"command": "git diff"}, ctx)
    log = await BashTool().call({"command": "git log -p -1 | head -5"}, ctx)
    commit = await BashTool().call(
        {"command": "git -c user.name=a -c user.email=a@b commit -qam x; echo done"}, ctx
    )
    assert not marker.exists(), marker.read_text()
    assert "tracked.txt" in status.content
    assert "-one" in diff.content and "+two" in diff.content  # a real diff, all the same
    assert not log.is_error and "done" in commit.content


def test_the_guard_keeps_the_users_own_command_scope_config() -> None:
    env = git_guard_env(
        {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "me"}
    )
    assert env["GIT_CONFIG_KEY_0"] == "user.name"
    assert env["GIT_CONFIG_COUNT"] == str(1 + len(GIT_OVERRIDES))
    assert env["GIT_CONFIG_KEY_1"] == "core.fsmonitor" and env["GIT_PAGER"] == "cat"
    broken = git_guard_env({"GIT_CONFIG_COUNT": "5"})  # a gap git would refuse: start over
    assert broken["GIT_CONFIG_KEY_0"] == "core.fsmonitor"
