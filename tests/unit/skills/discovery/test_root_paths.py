"""resolve_roots / root_paths: what ``roots=`` accepts, and where a relative root points."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.config import Settings, load_settings
from skilldeck.skills.discovery.discover import discover
from skilldeck.skills.discovery.roots import resolve_roots, root_paths


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    ws = tmp_path / "ws"
    ws.mkdir()
    return load_settings(workspace=ws, home=tmp_path / "home")


def test_str_and_pathlike_items_and_a_single_path_are_roots(tmp_path: Path) -> None:
    assert root_paths([str(tmp_path), tmp_path]) == (tmp_path, tmp_path)
    assert root_paths(str(tmp_path)) == (tmp_path,)  # one root, not its characters
    assert root_paths(tmp_path) == (tmp_path,)
    assert root_paths(()) == ()


@pytest.mark.parametrize("bad", [3, [3], b"/x", [b"/x"], [None]])
def test_what_is_not_a_path_is_refused(bad: object) -> None:
    with pytest.raises(TypeError, match="root"):
        root_paths(bad)  # type: ignore[arg-type]


def test_relative_and_home_roots(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(settings.workspace.parent))
    roots = resolve_roots(settings, roots=["rel", "~/team"], no_defaults=True)
    assert [r.path for r in roots] == [
        settings.workspace / "rel",
        settings.workspace.parent / "team",
    ]


def test_discover_takes_a_str_root(settings: Settings, tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "demo"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: demo\ndescription: Does demos.\n---\n", encoding="utf-8"
    )
    result = discover(settings, roots=[str(tmp_path / "skills")], no_defaults=True)
    assert [s.name for scan in result.roots for s in scan.skills] == ["demo"]
