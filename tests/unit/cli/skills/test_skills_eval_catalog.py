"""``skills eval``'s catalog: a disabled skill the author names is held as if enabled
— in the router's index and in the level-1 block the model mode's agent is shown —
without touching the config; skills nobody named stay as configured."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skilldeck.cli.skills.skills_eval_catalog import catalog, disabled_targets, split_unpickable
from skilldeck.integrations.trigger_probe import probe_agent
from skilldeck.skills.routing import TriggerCase


def write(root: Path, name: str, description: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = tmp_path / "skills"
    write(base, "pdf-tools", "Extract text and tables from PDF files.")
    write(base, "mine", "Summarise meeting notes into action items.")
    write(base, "other", "Draft release notes from merged pull requests.")
    config = Path(os.environ["SKILLDECK_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[skills]\ndisabled = ["mine", "other"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return base


def test_named_disabled_skills_join_the_catalog_as_if_enabled(root: Path) -> None:
    current = catalog(["mine"], [root], True)
    registry = current.registry
    assert current.as_if_enabled == ["mine"]
    assert [s.name for s in registry.usable()] == ["mine", "pdf-tools"]  # not "other"
    assert registry.settings.skills.disabled == ["other"]
    config = Path(os.environ["SKILLDECK_HOME"]) / "config.toml"
    assert '"mine"' in config.read_text(encoding="utf-8")  # nothing written


def test_the_model_is_shown_the_named_skill(root: Path, tmp_path: Path) -> None:
    script = tmp_path / "model.jsonl"
    script.write_text('{"text": "ok"}\n', encoding="utf-8")
    registry = catalog([str(root / "mine")], [root], True).registry
    with probe_agent(registry.settings, registry, f"scripted:{script}") as agent:
        system = agent.system_prompt
        prompt = system("summarise my notes") if callable(system) else system
    assert "<name>mine</name>" in prompt and "<name>other</name>" not in prompt


def test_targets_name_disabled_skills_by_folder_file_or_name(root: Path) -> None:
    registry = catalog([], [root], True).registry
    evals = root / "mine" / "evals" / "trigger_evals.json"
    evals.parent.mkdir()
    evals.write_text("[]", encoding="utf-8")
    assert disabled_targets(registry, [str(root / "mine")]) == ["mine"]
    assert disabled_targets(registry, [str(evals)]) == ["mine"]
    assert disabled_targets(registry, ["mine", "other", "pdf-tools"]) == ["mine", "other"]
    assert disabled_targets(registry, [str(root / "pdf-tools"), "missing"]) == []


def test_unnamed_disabled_skills_are_not_run_and_say_how_to_evaluate_them(
    root: Path,
) -> None:
    registry = catalog([], [root], True).registry
    cases = [TriggerCase("other", "draft release notes", True)]
    kept, not_run = split_unpickable(registry, cases)
    assert kept == [] and [n.skill for n in not_run] == ["other"]
    assert not_run[0].reason.startswith("disabled in config; `skilldeck skills eval other`")
