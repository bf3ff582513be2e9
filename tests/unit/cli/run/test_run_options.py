"""What ``run``, ``resume`` and ``chat`` share: flags checked before any agent is
built (a bad one exits 2), sampling flags winning over every options table, and the
``cli.run`` facade naming each shared piece."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

import skilldeck.cli.run as facade
from skilldeck.cli.run.launch import with_sampling
from skilldeck.cli.run.options import permission_flags, workdir_option
from skilldeck.settings.model import ModelOptions, Settings


def test_permission_flags_become_builder_keywords() -> None:
    flags = permission_flags("plan", ["Read"], None, ["Bash(rm:*)"])
    assert flags == {
        "permission_mode": "plan",
        "allow": ["Read"],
        "ask": [],
        "deny": ["Bash(rm:*)"],
    }


@pytest.mark.parametrize(
    ("mode", "allow"), [("yolo", None), (None, ["Bash(unclosed"])], ids=["mode", "rule"]
)
def test_a_bad_flag_exits_2(
    mode: str | None, allow: list[str] | None, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(typer.Exit) as exit_:
        permission_flags(mode, allow, None, None)
    assert exit_.value.exit_code == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_cwd_must_be_a_folder(tmp_path: Path) -> None:
    assert workdir_option(tmp_path) == tmp_path.resolve()
    with pytest.raises(typer.Exit):
        workdir_option(tmp_path / "missing")


def test_sampling_flags_win_over_every_options_table(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    models = settings.models.model_copy(
        update={"options": {"ollama": ModelOptions(temperature=0.9, top_p=0.5)}}
    )
    settings = settings.model_copy(update={"models": models})
    changed = with_sampling(settings, {"temperature": 0.0, "seed": None})
    assert changed.models.options["ollama"].temperature == 0.0
    assert changed.models.options["ollama"].top_p == 0.5
    assert changed.models.options["*"].temperature == 0.0
    assert changed.models.options["*"].seed is None
    assert with_sampling(settings, {"temperature": None}) is settings


def test_the_facade_names_resolve() -> None:
    for name in facade.__all__:
        assert getattr(facade, name) is not None, name
