"""Fixtures for the remote-source tests: settings in a temp workspace, and where
``owner/repo`` shorthand points (a folder of local repositories)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.config import Settings, load_settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    ws = tmp_path / "ws"
    ws.mkdir()
    return load_settings(workspace=ws, home=tmp_path / "home")
