"""The one precedence: layers merge lowest first; the model has its own documented order."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.settings import choose_model, file_rules, load_settings, merged, read_layers
from skilldeck.settings.precedence import resolve_model


@pytest.fixture
def ws(tmp_path: Path, skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace = tmp_path / "ws"
    (workspace / ".skilldeck").mkdir(parents=True)
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(workspace)
    return workspace


def write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def test_layers_carry_their_origin_in_precedence_order(ws: Path, skilldeck_home: Path) -> None:
    write(skilldeck_home / "config.toml", "[skills]\nprompt_budget = 1\nstrict = true\n")
    write(ws / ".skilldeck" / "config.toml", "[skills]\nprompt_budget = 2\n")
    layers = read_layers(arguments={"agent": {"max_turns": 4}})
    assert [layer.kind for layer in layers.layers] == [
        "user",
        "workspace",
        "environment",
        "arguments",
    ]
    assert layers.get("user").where == str(skilldeck_home / "config.toml")
    data = merged(layers)
    assert data["skills"] == {"prompt_budget": 2, "strict": True}  # tables merge
    assert data["agent"] == {"max_turns": 4}


def test_model_order_cli_then_definition_then_files_then_environment(
    ws: Path, skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLDECK_MODELS__DEFAULT", "env:default")
    assert choose_model(read_layers()) == "env:default"
    monkeypatch.setenv("SKILLDECK_MODEL", "env:model")
    assert choose_model(read_layers()) == "env:model"
    write(skilldeck_home / "config.toml", '[models]\ndefault = "user:default"\n')
    assert choose_model(read_layers()) == "user:default"  # files win over the environment
    write(skilldeck_home / "config.toml", 'model = "user:model"\n[models]\ndefault = "u:d"\n')
    assert choose_model(read_layers()) == "user:model"
    write(ws / ".skilldeck" / "config.toml", '[models]\ndefault = "ws:default"\n')
    layers = read_layers()
    assert choose_model(layers) == "ws:default"  # the workspace over the user
    assert choose_model(layers, definition="agent:model") == "agent:model"
    assert choose_model(layers, explicit="cli:model", definition="agent:model") == "cli:model"
    assert choose_model(read_layers(arguments={"model": "arg:model"})) == "arg:model"


def test_settings_model_is_the_model_a_run_uses(
    ws: Path, skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLDECK_MODEL", "env:model")
    write(skilldeck_home / "config.toml", 'model = "user:model"\n')
    settings = load_settings()
    assert settings.model == "user:model" == resolve_model(settings)
    assert resolve_model(settings, definition="agent:m") == "agent:m"
    assert resolve_model(settings, explicit="cli:m", definition="agent:m") == "cli:m"
    assert load_settings(model="arg:m").model == "arg:m"


def test_an_untrusted_workspace_names_no_model(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(ws / ".skilldeck" / "config.toml", 'model = "ws:model"\n')
    monkeypatch.setenv("SKILLDECK_TRUST_WORKSPACE", "0")
    with pytest.warns(UserWarning):
        settings = load_settings()
    assert settings.model is None and choose_model(settings.layers) is None


def test_permission_rules_add_up_over_the_files(ws: Path, skilldeck_home: Path) -> None:
    write(skilldeck_home / "config.toml", '[permissions]\ndeny = ["Bash"]\n')
    write(ws / ".skilldeck" / "config.toml", "[permissions]\ndeny = []\n")
    layers = read_layers()
    assert merged(layers)["permissions"]["deny"] == []  # merging replaces lists...
    assert file_rules(layers.files, "deny") == ["Bash"]  # ...the rules do not


def test_the_removed_coding_pipeline_setting_is_reported_as_unknown(
    ws: Path, skilldeck_home: Path
) -> None:
    """``skills.coding_pipeline`` was never read and is gone: a file that still sets it
    gets the unknown-key warning every other stray key gets, and still loads."""
    import warnings

    from skilldeck.errors import ConfigWarning

    user = skilldeck_home / "config.toml"
    write(user, '[skills]\ncoding_pipeline = ["a", "b"]\n')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        settings = load_settings()
    messages = [str(w.message) for w in caught if issubclass(w.category, ConfigWarning)]
    assert any(
        m.startswith(f"{user}: unknown setting `skills.coding_pipeline` is ignored")
        for m in messages
    ), messages
    assert not hasattr(settings.skills, "coding_pipeline")
