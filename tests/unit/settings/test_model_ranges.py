"""Setting values that mean nothing are refused where they are read (settings/model.py),
with the file or variable to fix; the values that switch something off stay allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.config import load_settings
from skilldeck.errors import ConfigError


def _load(tmp_path: Path, toml: str) -> object:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(toml, encoding="utf-8")
    return load_settings(home=home, workspace=tmp_path)


@pytest.mark.parametrize(
    "toml",
    [
        "[skills]\nprompt_budget = -5\n",
        "[skills]\nscript_timeout = 0\n",
        "[models]\nrequest_timeout = -1\n",
        "[agent]\nmax_turns = 0\n",
        "[agent]\ncontext_fraction = 1.5\n",
        "[agent]\nmax_concurrent_subagents = 0\n",
        "[skills.hints]\nthreshold = -0.1\n",
    ],
)
def test_a_meaningless_value_is_refused_naming_the_file(tmp_path: Path, toml: str) -> None:
    with pytest.raises(ConfigError, match=r"config\.toml"):
        _load(tmp_path, toml)


def test_values_that_switch_a_feature_off_still_load(tmp_path: Path) -> None:
    settings = _load(
        tmp_path, "[skills]\nprompt_budget = 0\n[skills.hints]\nk = 0\nthreshold = 2\n"
    )
    assert settings.skills.prompt_budget == 0 and settings.skills.hints.k == 0  # type: ignore[attr-defined]
