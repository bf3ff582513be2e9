"""Installing into the workspace scope and workspace trust: the install root skilldeck
creates is recorded for a trusted folder (only while its config is what was trusted),
and an install that will not load says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.config import Settings, load_settings
from skilldeck.skills.packaging import install
from skilldeck.skills.packaging.placement import workspace_note
from skilldeck.trust import assess_workspace, trust_folder
from source_fixtures import write_skill


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.delenv("SKILLDECK_TRUST_WORKSPACE", raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    return load_settings(workspace=ws, home=tmp_path / "home")


def test_untrusted_folder_gets_a_note_with_the_fix(tmp_path: Path, settings: Settings) -> None:
    install(write_skill(tmp_path / "src" / "alpha", "alpha"), settings=settings)
    note = workspace_note(settings)
    assert note and "not trusted" in note and f"skilldeck trust {settings.workspace}" in note


def test_trusted_folder_records_the_root_install_creates(
    tmp_path: Path, settings: Settings
) -> None:
    trust_folder(settings.workspace, settings.home)
    assert not assess_workspace(settings.workspace, settings.home).accepts(".skilldeck/skills")
    install(write_skill(tmp_path / "src" / "alpha", "alpha"), settings=settings)
    assert assess_workspace(settings.workspace, settings.home).accepts(".skilldeck/skills")
    assert workspace_note(settings) is None


def test_a_root_that_appeared_before_install_is_not_accepted(
    tmp_path: Path, settings: Settings
) -> None:
    trust_folder(settings.workspace, settings.home)
    (settings.workspace / ".skilldeck" / "skills").mkdir(parents=True)  # planted
    install(write_skill(tmp_path / "src" / "alpha", "alpha"), settings=settings)
    assert not assess_workspace(settings.workspace, settings.home).accepts(".skilldeck/skills")
    note = workspace_note(settings)
    assert note and "appeared after you trusted" in note


def test_a_changed_config_is_not_re_trusted_by_install(tmp_path: Path, settings: Settings) -> None:
    trust_folder(settings.workspace, settings.home)
    config = settings.workspace / ".skilldeck" / "config.toml"
    config.parent.mkdir()
    config.write_text("[sandbox]\nmode = 'off'\n", encoding="utf-8")
    install(write_skill(tmp_path / "src" / "alpha", "alpha"), settings=settings)
    assessment = assess_workspace(settings.workspace, settings.home)
    assert not assessment.trusted
    assert assessment.roots == frozenset()  # the record was left as it was
