"""``skills enable``/``disable`` write through the settings package, atomically, and
rewriting a trusted workspace's config makes it untrusted until ``skilldeck trust``."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from skill_fixtures import write_skill_md
from skilldeck.cli.main import build_app
from skilldeck.settings import load_settings, read_toml, record_disabled, record_enabled
from skilldeck.trust import TrustState, assess_workspace, trust_folder


@pytest.fixture
def ws(tmp_path: Path, skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace = tmp_path / "ws"
    (workspace / ".skilldeck").mkdir(parents=True)
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(workspace)
    monkeypatch.delenv("SKILLDECK_TRUST_WORKSPACE")
    return workspace


def test_enable_in_a_trusted_workspace_needs_trust_again(ws: Path, skilldeck_home: Path) -> None:
    (ws / ".skilldeck" / "config.toml").write_text('[skills]\ndisabled = ["a", "b"]\n')
    trust_folder(ws, skilldeck_home)
    settings = load_settings()
    assert settings.workspace_trusted and settings.skills.disabled == ["a", "b"]
    written = record_enabled(settings, "a")
    assert written.paths == (ws / ".skilldeck" / "config.toml",)
    assert written.retrust is not None and written.retrust.state is TrustState.CHANGED
    assert settings.skills.disabled == ["b"]
    assert read_toml(ws / ".skilldeck" / "config.toml") == {"skills": {"disabled": ["b"]}}
    assert assess_workspace(ws, skilldeck_home).state is TrustState.CHANGED
    trust_folder(ws, skilldeck_home)
    assert load_settings().skills.disabled == ["b"]


def test_disable_writes_only_the_user_file(ws: Path, skilldeck_home: Path) -> None:
    settings = load_settings()
    assert record_disabled(settings, "x").paths == (skilldeck_home / "config.toml",)
    assert record_disabled(settings, "x").paths == ()  # already there
    assert read_toml(skilldeck_home / "config.toml") == {"skills": {"disabled": ["x"]}}
    assert record_enabled(settings, "x").retrust is None


def test_the_enable_command_says_to_trust_again(ws: Path, skilldeck_home: Path) -> None:
    write_skill_md(ws / ".skilldeck" / "skills" / "docx", "docx")
    (ws / ".skilldeck" / "config.toml").write_text('[skills]\ndisabled = ["docx"]\n')
    trust_folder(ws, skilldeck_home)
    argv = ["skills", "enable", "docx"]
    result = CliRunner().invoke(build_app(argv), argv)
    assert result.exit_code == 0, result.output
    assert "skilldeck trust" in result.stderr and "rewritten" in result.stderr
