"""SkillRegistry used wrongly as a library: what is refused, and how it says so."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from skill_fixtures import write_skill
from skilldeck.config import Settings, load_settings
from skilldeck.errors import SkillInvalidError, SkillNotFoundError
from skilldeck.skills.registry import SkillRegistry

_BAD_YAML = "---\nname: csv-clean\ndescription: Clean CSV files: dedupe rows, fix headers.\n---\n"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    ws = tmp_path / "ws"
    ws.mkdir()
    return load_settings(workspace=ws, home=tmp_path / "home")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "demo")
    (root / "csv-clean").mkdir()
    (root / "csv-clean" / "SKILL.md").write_text(_BAD_YAML, encoding="utf-8")
    return root


def _registry(settings: Settings, roots: object) -> SkillRegistry:
    return SkillRegistry.discover(settings, roots=roots, no_defaults=True, use_cache=False)  # type: ignore[arg-type]


@pytest.mark.parametrize("thing", ["demo", ("skill", []), None])
def test_register_refuses_what_is_not_a_skill_and_changes_nothing(
    settings: Settings, root: Path, thing: object
) -> None:
    registry = _registry(settings, [root])
    before = (registry.names(), registry.fingerprint)
    with pytest.raises(TypeError, match=r"takes a Skill.*nothing was registered"):
        registry.register(thing)  # type: ignore[arg-type]
    assert (registry.names(), registry.fingerprint) == before
    assert registry.refresh().added == []  # still works


def test_register_hints_at_load_skill_tuple(settings: Settings) -> None:
    with pytest.raises(TypeError, match=r"returns \(skill, diagnostics\)"):
        SkillRegistry(settings).register(("skill", []))  # type: ignore[arg-type]


def test_get_of_an_invalid_skill_says_it_is_invalid_and_where(
    settings: Settings, root: Path
) -> None:
    registry = _registry(settings, [root])
    with pytest.raises(SkillInvalidError) as caught:
        registry.get("csv-clean")
    message = str(caught.value)
    md = root / "csv-clean" / "SKILL.md"
    assert message.startswith("Skill 'csv-clean' is invalid: ")
    assert f"{md}:3: SD003" in message
    assert "Did you mean" not in message
    assert f"skilldeck skills validate {md.parent}`" in message
    assert caught.value.diagnostics[0].code == "SD003"
    assert caught.value.path == md
    assert isinstance(caught.value, SkillNotFoundError)  # callers catching "not found" still do
    with pytest.raises(SkillInvalidError):
        registry.versions("csv-clean")
    with pytest.raises(SkillInvalidError):
        registry.get("csv-clean", "1.0")


def test_unknown_names_are_still_not_found(settings: Settings, root: Path) -> None:
    with pytest.raises(SkillNotFoundError, match="Did you mean: demo") as caught:
        _registry(settings, [root]).get("dem")
    assert not isinstance(caught.value, SkillInvalidError)


@pytest.mark.parametrize("form", ["list-of-str", "str", "path", "tuple-of-path"])
def test_discover_takes_str_pathlike_and_a_single_path(
    settings: Settings, root: Path, form: str
) -> None:
    roots = {
        "list-of-str": [str(root)],
        "str": str(root),
        "path": root,
        "tuple-of-path": (root,),
    }[form]
    registry = _registry(settings, roots)
    assert registry.names() == ["demo"]
    assert [r.path for r in registry.roots] == [root]
    assert registry.refresh().removed == []


@pytest.mark.parametrize("bad", [[1], 3, [b"/tmp"], [None]])
def test_discover_refuses_roots_that_are_not_paths(settings: Settings, bad: object) -> None:
    with pytest.raises(TypeError, match="roots"):
        _registry(settings, bad)


def test_a_missing_explicit_root_is_a_logged_warning(
    settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = tmp_path / "nope"
    with caplog.at_level(logging.WARNING, logger="skilldeck.skills.registry"):
        registry = _registry(settings, [missing])
    assert len(registry) == 0
    assert [d.code for d in registry.diagnostics] == ["SD204"]
    (record,) = caplog.records
    assert str(missing) in record.getMessage()
    assert str(settings.workspace) in record.getMessage()


def test_a_relative_root_resolves_against_the_workspace(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    write_skill(settings.workspace / "team", "here")
    with caplog.at_level(logging.WARNING, logger="skilldeck.skills.registry"):
        registry = _registry(settings, ["team"])
    assert registry.names() == ["here"]
    assert not caplog.records


def test_absent_configured_dirs_are_not_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = load_settings(
        workspace=ws, home=tmp_path / "home", skills={"dirs": [str(tmp_path / "gone")]}
    )
    with caplog.at_level(logging.WARNING, logger="skilldeck.skills.registry"):
        registry = SkillRegistry.discover(settings, use_cache=False)
    assert tmp_path / "gone" in [r.path for r in registry.roots]
    assert not caplog.records
