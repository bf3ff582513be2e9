"""``Layer`` and ``Layers`` behave as the frozen dataclasses they were (immutable,
equal and hashed by value, the same repr, pickled), and a read-only use of the
settings package does not import its writes."""

from __future__ import annotations

import pickle
import subprocess
import sys
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from skilldeck.settings import Layer, Layers, read_layers


def test_layer_value_semantics() -> None:
    layer = Layer("user", "/h/config.toml")
    assert layer.data == {} and layer.error is None and layer.is_file
    assert layer.data is not Layer("user", "/h/config.toml").data  # a fresh table each
    assert layer == Layer("user", "/h/config.toml", {}, None)
    assert layer != Layer("user", "/h/config.toml", {"a": 1})
    assert repr(layer) == "Layer(kind='user', where='/h/config.toml', data={}, error=None)"
    assert pickle.loads(pickle.dumps(layer)) == layer
    with pytest.raises(FrozenInstanceError):
        layer.kind = "workspace"
    with pytest.raises(TypeError):
        hash(layer)  # holds a dict, as the dataclass did


def test_layers_value_semantics(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    layers = read_layers(home=home, workspace=workspace, environ={})
    again = read_layers(home=home, workspace=workspace, environ={})
    assert isinstance(layers, Layers) and layers == again
    assert layers.with_arguments({"model": "m"}).get("arguments").data == {"model": "m"}
    assert repr(layers).startswith(f"Layers(home={home!r}, workspace={workspace.resolve()!r}, ")
    with pytest.raises(FrozenInstanceError):
        del layers.home


def test_reading_settings_does_not_import_the_writes() -> None:
    code = (
        "import sys, skilldeck.settings as s, skilldeck.skills.registry.registry;"
        "assert 'skilldeck.settings.writes' not in sys.modules;"
        "s.record_enabled;"
        "assert 'skilldeck.settings.writes' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
