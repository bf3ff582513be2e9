"""The fast path's view is built from the same layers as the full settings, without
pydantic, and its fallback builds the full settings from those layers (no re-read)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skilldeck.settings import Settings, read_layers, settings_from_layers, view_from_layers


@pytest.fixture
def ws(tmp_path: Path, skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace = tmp_path / "ws"
    (workspace / ".skilldeck").mkdir(parents=True)
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(workspace)
    return workspace


def test_view_and_full_settings_agree_from_one_read(ws: Path, skilldeck_home: Path) -> None:
    (skilldeck_home / "config.toml").write_text('model = "a:b"\n[skills]\ndisabled = ["x"]\n')
    (ws / ".skilldeck" / "config.toml").write_text("[skills]\nstrict = true\n")
    layers = read_layers()
    view = view_from_layers(layers, os.environ)
    full = settings_from_layers(layers)
    assert view is not None and view.layers is layers and full.layers is layers
    assert (view.model, view.skills.disabled, view.skills.strict) == (
        full.model,
        full.skills.disabled,
        full.skills.strict,
    )
    # an attribute the view lacks comes from full settings of the same layers
    (skilldeck_home / "config.toml").write_text("[agent]\nmax_turns = 99\n")
    assert view.agent.max_turns == 25
    assert isinstance(view.full(), Settings) and view.full().layers is layers


def test_a_broken_file_steps_aside_and_the_full_path_reports_it(
    ws: Path, skilldeck_home: Path
) -> None:
    (skilldeck_home / "config.toml").write_text("[skills\n")
    layers = read_layers()
    assert view_from_layers(layers, os.environ) is None
    with pytest.raises(Exception, match="invalid TOML"):
        settings_from_layers(layers)


def test_the_view_and_the_facade_import_no_pydantic_and_no_cycle() -> None:
    code = (
        "import sys\n"
        "import skilldeck.settings, skilldeck.settings.view, skilldeck._fastconfig\n"
        "assert 'pydantic' not in sys.modules, 'pydantic imported'\n"
        "assert 'skilldeck.config' not in sys.modules, 'the view imports config'\n"
        "import skilldeck.config\n"
        "assert skilldeck.config.Settings is skilldeck.settings.Settings\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
