"""The CLI fast path's settings agree with ``load_settings`` or step aside."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck._fastconfig import ENV_FIELDS, LightSettings, load_light_settings
from skilldeck.config import Settings, load_settings


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skilldeck_home: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    return workspace


def same_as_full(light: LightSettings) -> None:
    full = load_settings()
    assert (light.home, light.workspace, light.model) == (full.home, full.workspace, full.model)
    assert light.cache_dir == full.cache_dir
    assert light.user_config_path == full.user_config_path
    assert light.workspace_config_path == full.workspace_config_path
    assert light.skills.dirs == full.skills.dirs
    assert light.skills.disabled == full.skills.disabled
    assert light.skills.strict == full.skills.strict
    assert light.skills.prompt_budget == full.skills.prompt_budget
    assert light.skills.discovery_workers == full.skills.discovery_workers
    assert light.workspace_trusted == full.workspace_trusted


def test_no_config_files(ws: Path) -> None:
    light = load_light_settings()
    assert light is not None
    same_as_full(light)


def test_skills_keys_from_both_files_merge_like_load_settings(
    ws: Path, skilldeck_home: Path
) -> None:
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    (skilldeck_home / "config.toml").write_text(
        'model = "openai:x"\n[skills]\ndirs = ["/opt/skills", "rel"]\ndisabled = ["a"]\n',
        encoding="utf-8",
    )
    (ws / ".skilldeck").mkdir()
    (ws / ".skilldeck" / "config.toml").write_text(
        "[skills]\nstrict = true\nprompt_budget = 1234\ndiscovery_workers = 1\n",
        encoding="utf-8",
    )
    light = load_light_settings()
    assert light is not None
    same_as_full(light)
    assert light.skills.strict is True and light.skills.disabled == ["a"]
    assert light.skills.discovery_workers == 1


@pytest.mark.parametrize(
    "text",
    [
        "[agent]\nmax_turns = 3\n",  # another section: validated by the full path
        "[skills]\nstrict = 1\n",  # not exactly a bool
        "[skills]\nprompt_budget = true\n",  # a bool is not a budget
        "[skills]\ndirs = [1]\n",
        "[skills]\ndiscovery_workers = -1\n",  # out of range: the full path says so
        "[skills]\nhints = {k = 1}\n",
        "model = 3\n",
        "[skills\n",  # broken TOML: the full path reports it
    ],
)
def test_anything_else_steps_aside(ws: Path, skilldeck_home: Path, text: str) -> None:
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    (skilldeck_home / "config.toml").write_text(text, encoding="utf-8")
    assert load_light_settings() is None


def test_environment_overrides_step_aside(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLDECK_SKILLS__STRICT", "true")
    assert load_light_settings() is None
    monkeypatch.delenv("SKILLDECK_SKILLS__STRICT")
    monkeypatch.setenv("skilldeck_model", "x")  # pydantic-settings reads it too
    assert load_light_settings() is None
    monkeypatch.delenv("skilldeck_model")
    monkeypatch.setenv("SKILLDECK_UNRELATED", "x")  # not a setting: no effect
    light = load_light_settings()
    assert light is not None
    same_as_full(light)


def test_env_fields_match_the_settings_model() -> None:
    assert set(Settings.model_fields) - {"home", "workspace"} == ENV_FIELDS


def test_other_attributes_come_from_full_settings(ws: Path) -> None:
    light = load_light_settings()
    assert light is not None
    full = load_settings()
    assert light.agent.max_turns == full.agent.max_turns
    assert light.skills.hints.k == full.skills.hints.k
    assert light.sessions_db == full.sessions_db
    assert light.skill_settings("x") == {}
