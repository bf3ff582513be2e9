"""A bad setting is reported with the place it came from, so the user knows what to edit."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.config import load_settings
from skilldeck.errors import ConfigError


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skilldeck_home: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / ".skilldeck").mkdir(parents=True)
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(workspace)
    return workspace


def error_of(**overrides: object) -> str:
    with pytest.raises(ConfigError) as info:
        load_settings(**overrides)
    return str(info.value)


def test_bad_value_in_the_user_file_names_that_file(ws: Path, skilldeck_home: Path) -> None:
    (skilldeck_home / "config.toml").write_text('[skills]\nprompt_budget = "x"\n')
    message = error_of()
    assert "'skills.prompt_budget'" in message
    assert message.endswith(f"Fix it in {skilldeck_home / 'config.toml'}.")


def test_the_workspace_file_wins_and_is_named(ws: Path, skilldeck_home: Path) -> None:
    (skilldeck_home / "config.toml").write_text('[skills]\nprompt_budget = "x"\n')
    (ws / ".skilldeck" / "config.toml").write_text('[skills]\nprompt_budget = "y"\n')
    assert error_of().endswith(f"Fix it in {ws / '.skilldeck' / 'config.toml'}.")


def test_a_bad_environment_variable_is_named(
    ws: Path, skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (skilldeck_home / "config.toml").write_text("[skills]\nprompt_budget = 9000\n")
    monkeypatch.setenv("SKILLDECK_SKILLS__PROMPT_BUDGET", "lots")
    assert error_of().endswith("Fix it in SKILLDECK_SKILLS__PROMPT_BUDGET.")


def test_a_bad_list_item_from_the_environment_names_the_variable(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLDECK_PERMISSIONS__ALLOW", '["Read", 3]')
    message = error_of()
    assert "'permissions.allow.1'" in message
    assert message.endswith("Fix it in SKILLDECK_PERMISSIONS__ALLOW.")


def test_a_bad_argument_is_named(ws: Path) -> None:
    message = error_of(agent={"max_turns": "many"})
    assert "'agent.max_turns'" in message
    assert message.endswith("Fix it in the arguments given.")


def test_a_valid_setting_still_loads(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLDECK_SKILLS__PROMPT_BUDGET", "9000")
    assert load_settings().skills.prompt_budget == 9000


def test_discovery_workers_is_a_count_from_zero(ws: Path, skilldeck_home: Path) -> None:
    (skilldeck_home / "config.toml").write_text("[skills]\ndiscovery_workers = -2\n")
    message = error_of()
    assert "'skills.discovery_workers'" in message and "greater than or equal to 0" in message
    (skilldeck_home / "config.toml").write_text("[skills]\ndiscovery_workers = 3\n")
    assert load_settings().skills.discovery_workers == 3
