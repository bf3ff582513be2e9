"""Issue 16: ``Settings.model`` is the model actually used. The builder resolves the
model once (``settings.precedence.resolve_model``: ``--model``, then the agent
definition's, then config, then ``SKILLDECK_MODEL``) and the agent's settings — what
its tools, sub-agents and launch record see — name exactly that model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilldeck.agent.builder import build_agent
from skilldeck.agent.subagents import AgentDefinition
from skilldeck.config import Settings, load_settings
from skilldeck.llm.scripted import ScriptedModel


def script(folder: Path, name: str) -> str:
    """A ``scripted:`` spec (absolute, as the builder normalises it)."""
    path = folder / f"{name}.jsonl"
    path.write_text(json.dumps({"text": "ok"}) + "\n", encoding="utf-8")
    return f"scripted:{path}"


@pytest.fixture
def work(tmp_path: Path, skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("SKILLDECK_MODEL", raising=False)
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def used(settings: Settings, **kwargs: object) -> tuple[str, str | None, str]:
    """(the model spec used, ``agent.settings.model``, the launch record's model)."""
    with build_agent(settings, no_defaults=True, hints=False, **kwargs) as agent:  # type: ignore[arg-type]
        launch = agent.metadata["launch"]
        return agent.model_spec, agent.settings.model, launch["settings"].get("model")


def test_explicit_model_wins_and_is_the_settings_model(work: Path, skilldeck_home: Path) -> None:
    (skilldeck_home / "config.toml").write_text(f'model = "{script(work, "cfg")}"\n')
    settings = load_settings(workspace=work, home=skilldeck_home)
    flag = script(work, "flag")
    assert used(settings, model=flag, cwd=work) == (flag, flag, flag)
    assert settings.model == script(work, "cfg")  # the caller's settings are not touched


def test_definition_model_beats_config(work: Path, skilldeck_home: Path) -> None:
    (skilldeck_home / "config.toml").write_text(f'model = "{script(work, "cfg")}"\n')
    settings = load_settings(workspace=work, home=skilldeck_home)
    mine = script(work, "def")
    definition = AgentDefinition(name="mine", description="d", model=mine)
    assert used(settings, agent=definition, cwd=work) == (mine, mine, mine)
    flag = script(work, "flag")  # --model still beats the definition
    assert used(settings, agent=definition, model=flag, cwd=work)[1] == flag


def test_config_model_is_used(work: Path, skilldeck_home: Path) -> None:
    cfg = script(work, "cfg")
    (skilldeck_home / "config.toml").write_text(f'[models]\ndefault = "{cfg}"\n')
    settings = load_settings(workspace=work, home=skilldeck_home)
    assert used(settings, cwd=work) == (cfg, cfg, cfg)


def test_environment_model_is_used(
    work: Path, skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = script(work, "env")
    monkeypatch.setenv("SKILLDECK_MODEL", env)
    settings = load_settings(workspace=work, home=skilldeck_home)
    assert used(settings, cwd=work) == (env, env, env)


def test_a_model_object_names_the_settings_model(work: Path, skilldeck_home: Path) -> None:
    settings = load_settings(workspace=work, home=skilldeck_home)
    model = ScriptedModel.from_lines([{"text": "ok"}])
    spec, in_settings, _ = used(settings, model=model, cwd=work)
    assert spec == in_settings == model.name
