"""A bad setting is reported with the place it came from, so the user knows what to edit."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.config import load_settings
from skilldeck.errors import ConfigError, ConfigWarning


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


def ignored(**overrides: object) -> list[str]:
    """The ConfigWarning messages ``load_settings`` gives, in order."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_settings(**overrides)
    return [str(w.message) for w in caught if issubclass(w.category, ConfigWarning)]


def test_a_mistyped_setting_is_named_with_its_file_and_the_likely_key(
    ws: Path, skilldeck_home: Path
) -> None:
    user = skilldeck_home / "config.toml"
    user.write_text("[skills]\npromt_budget = 100\nprompt-budget = 5\n[agnet]\nmax_turns = 3\n")
    (ws / ".skilldeck" / "config.toml").write_text('[mcp.servers.git]\ncomand = "git-mcp"\n')
    assert ignored() == [
        f"{user}: unknown setting `skills.promt_budget` is ignored "
        "(did you mean `skills.prompt_budget`?)",
        f"{user}: unknown setting `skills.prompt-budget` is ignored "
        "(did you mean `skills.prompt_budget`?)",
        f"{user}: unknown setting `agnet` is ignored (did you mean `agent`?)",
        f"{ws / '.skilldeck' / 'config.toml'}: unknown setting `mcp.servers.git.comand` is "
        "ignored (did you mean `mcp.servers.git.command`?)",
    ]
    with pytest.warns(ConfigWarning):
        assert load_settings().skills.prompt_budget == 8000  # the settings still load


def test_an_unknown_variable_names_itself(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLDECK_SKILLS__STRCT", "true")
    monkeypatch.setenv("SKILLDECK_NOT_A_SETTING", "x")  # no `__`: not read as a setting
    assert ignored() == [
        "SKILLDECK_SKILLS__STRCT: unknown setting `skills.strct` is ignored "
        "(did you mean `skills.strict`?)"
    ]


def test_free_form_tables_and_known_keys_raise_no_warning(ws: Path, skilldeck_home: Path) -> None:
    (skilldeck_home / "config.toml").write_text(
        'model = "scripted:x"\n[skills]\nprompt_budget = 100\n'
        '[skills.settings.my-skill]\nenv = ["TOKEN"]\nanything = 1\n'
        '[models.context_windows]\n"openai:gpt" = 128000\n'
        '[mcp.servers.git]\ncommand = "git-mcp"\nenv = { A = "1" }\n'
    )
    assert ignored(skills={"strict": True}) == []


def test_home_in_a_file_is_ignored_and_said_so(ws: Path, skilldeck_home: Path) -> None:
    (skilldeck_home / "config.toml").write_text('home = "/elsewhere"\n')
    [message] = ignored()
    assert "`home` cannot be set here (SKILLDECK_HOME sets it)" in message
