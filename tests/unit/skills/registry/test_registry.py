"""SkillRegistry: precedence, shadowing, registration, versions, enable/disable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skill_fixtures import age_tree
from skilldeck.config import load_settings, read_toml
from skilldeck.errors import SkillNotFoundError, SkillUnavailableError
from skilldeck.skills.model.skill import Skill, SkillSource
from skilldeck.skills.model.spec import SkillMetadata
from skilldeck.skills.registry import EntryStatus, SkillRegistry


def write_skill(
    folder: Path, name: str | None = None, description: str = "Does things.", **extra: str
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"name: {name or folder.name}", f"description: {description}"]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    md = folder / "SKILL.md"
    md.write_text("---\n" + "\n".join(lines) + "\n---\n\nBody\n", encoding="utf-8")
    return md


def code_skill(name: str, folder: Path, version: str | None = None) -> Skill:
    meta = SkillMetadata(name=name, description=f"{name} from code", version=version)
    return Skill(metadata=meta, folder=folder, skill_md=folder / "SKILL.md").with_body("hi")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    return workspace


@pytest.fixture
def layered(ws: Path, skilldeck_home: Path, tmp_path: Path) -> dict[str, Path]:
    """The same name `pdf` in workspace, user and an extra dir; unique names too."""
    paths = {
        "workspace": ws / ".claude" / "skills",
        "user": skilldeck_home / "skills",
        "extra": tmp_path / "extra",
    }
    write_skill(paths["workspace"] / "pdf", description="Workspace pdf.", version="3.0")
    write_skill(paths["user"] / "pdf", description="User pdf.", version="2.0")
    write_skill(paths["extra"] / "pdf", description="Extra pdf.", version="1.0")
    write_skill(paths["user"] / "docx")
    write_skill(paths["extra"] / "xlsx")
    return paths


def registry(**kwargs: object) -> SkillRegistry:
    settings = load_settings(**kwargs)  # type: ignore[arg-type]
    return SkillRegistry.discover(settings)


def test_higher_root_wins_and_shadowed_are_listed(layered: dict[str, Path]) -> None:
    reg = registry(skills={"dirs": [str(layered["extra"])]})
    pdf = reg.get("pdf")
    assert pdf.description == "Workspace pdf." and pdf.source is SkillSource.WORKSPACE
    rows = [e for e in reg.entries() if e.name == "pdf"]
    assert [(e.status, e.source) for e in rows] == [
        (EntryStatus.ACTIVE, SkillSource.WORKSPACE),
        (EntryStatus.SHADOWED, SkillSource.USER),
        (EntryStatus.SHADOWED, SkillSource.EXTRA),
    ]
    assert rows[1].shadowed_by == layered["workspace"] / "pdf"
    assert "has precedence over" in (rows[1].reason or "")
    assert {"docx", "xlsx"} <= set(reg.names())


def test_explicit_root_beats_defaults_in_listed_order(
    layered: dict[str, Path], tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write_skill(first / "pdf", description="First.")
    write_skill(second / "pdf", description="Second.")
    settings = load_settings()
    reg = SkillRegistry.discover(settings, roots=[first, second])
    assert reg.get("pdf").description == "First."
    assert reg.get("pdf").source is SkillSource.ROOT
    only = SkillRegistry.discover(settings, roots=[second], no_defaults=True)
    assert only.names() == ["pdf"] and only.get("pdf").description == "Second."


def test_same_name_twice_in_one_root(tmp_path: Path) -> None:
    write_skill(tmp_path / "a" / "dup", description="first by path")
    write_skill(tmp_path / "b" / "dup", description="second by path")
    reg = SkillRegistry.discover(load_settings(), roots=[tmp_path], no_defaults=True)
    assert reg.get("dup").description == "first by path"
    [shadow] = reg.shadowing()
    assert shadow.hidden.folder == tmp_path / "b" / "dup"
    assert "comes first in scan order" in shadow.reason


def test_shadowing_report(layered: dict[str, Path]) -> None:
    reg = registry(skills={"dirs": [str(layered["extra"])]})
    report = reg.shadowing()
    assert [(s.name, s.winner.source, s.hidden.source) for s in report] == [
        ("pdf", SkillSource.WORKSPACE, SkillSource.USER),
        ("pdf", SkillSource.WORKSPACE, SkillSource.EXTRA),
    ]
    assert str(layered["user"]) in report[0].reason
    assert report[0].to_dict()["hidden"]["source"] == "user"


def test_registered_beats_discovered(layered: dict[str, Path], tmp_path: Path) -> None:
    reg = registry()
    mine = code_skill("pdf", tmp_path / "code")
    reg.register(mine)
    assert reg.get("pdf") is mine
    assert reg.entries()[[e.name for e in reg.entries()].index("pdf")].skill is mine
    assert any("registered in code" in s.reason for s in reg.shadowing())
    reg.unregister("pdf")
    with pytest.raises(SkillNotFoundError):
        reg.get("pdf")
    reg.register(mine)
    assert reg.get("pdf") is mine


def test_register_into_empty_registry(tmp_path: Path) -> None:
    reg = SkillRegistry(load_settings())
    reg.register(code_skill("solo", tmp_path))
    assert reg.names() == ["solo"] and reg.get("solo").body == "hi"
    reg.unregister("solo")
    assert reg.names() == []
    with pytest.raises(SkillNotFoundError):
        reg.unregister("solo")


def test_unregister_survives_refresh(layered: dict[str, Path]) -> None:
    reg = registry()
    reg.unregister("docx")
    reg.refresh()
    assert "docx" not in reg


def test_get_suggests_close_matches(layered: dict[str, Path]) -> None:
    reg = registry()
    with pytest.raises(SkillNotFoundError) as info:
        reg.get("pfd")
    assert "pdf" in info.value.suggestions
    assert "Did you mean" in str(info.value)
    with pytest.raises(SkillNotFoundError) as info2:
        reg.get("doc")
    assert "docx" in info2.value.suggestions
    assert reg.find("nothing-like-it") is None


def test_versions_side_by_side_and_override(layered: dict[str, Path]) -> None:
    reg = registry(skills={"dirs": [str(layered["extra"])]})
    assert [s.version for s in reg.versions("pdf")] == ["3.0", "2.0", "1.0"]
    assert reg.get("pdf", "1.0").description == "Extra pdf."
    before = reg.fingerprint
    reg.override_version("pdf", "2.0")
    assert reg.get("pdf").description == "User pdf."
    assert reg.fingerprint != before
    rows = {e.source: e.status for e in reg.entries() if e.name == "pdf"}
    assert rows[SkillSource.USER] is EntryStatus.ACTIVE
    assert rows[SkillSource.WORKSPACE] is EntryStatus.SHADOWED
    assert any("override_version" in s.reason for s in reg.shadowing())
    with pytest.raises(SkillNotFoundError) as info:
        reg.override_version("pdf", "9.9")
    assert "pdf@3.0" in info.value.suggestions


def test_registered_versions_coexist(tmp_path: Path) -> None:
    reg = SkillRegistry(load_settings())
    v1, v2 = code_skill("tool", tmp_path / "1", "1.0"), code_skill("tool", tmp_path / "2", "2.0")
    reg.register(v1)
    reg.register(v2)
    assert reg.get("tool") is v2  # the later registration wins
    assert reg.versions("tool") == [v2, v1]
    reg.override_version("tool", "1.0")
    assert reg.get("tool") is v1
    again = code_skill("tool", tmp_path / "2b", "2.0")
    reg.register(again)  # same name and version: replaces
    assert reg.versions("tool") == [again, v1]


def test_disable_persists_and_enable_undoes(
    layered: dict[str, Path], skilldeck_home: Path, ws: Path
) -> None:
    reg = registry()
    reg.disable("docx")
    config = read_toml(skilldeck_home / "config.toml")
    assert config["skills"]["disabled"] == ["docx"]
    assert "docx" not in [s.name for s in reg.list()]
    assert "docx" in [s.name for s in reg.list(include_disabled=True)]
    [row] = [e for e in reg.entries() if e.name == "docx"]
    assert row.status is EntryStatus.DISABLED and row.to_dict()["enabled"] is False
    with pytest.raises(SkillUnavailableError):
        reg.get("docx")
    assert reg.find("docx") is None
    docx = reg.get("docx", include_disabled=True)
    assert reg.is_enabled(docx) is False  # the registry's view (the skill holds none)
    assert reg.why_unavailable(docx) == "disabled in config"

    fresh = registry()  # a new process would see the same
    assert fresh.is_disabled("docx")
    assert not fresh.is_enabled(fresh.get("docx", include_disabled=True))
    fresh.enable("docx")
    assert read_toml(skilldeck_home / "config.toml")["skills"]["disabled"] == []
    again = registry()
    assert again.is_enabled(again.get("docx"))


def test_enable_clears_the_workspace_config_too(layered: dict[str, Path], ws: Path) -> None:
    (ws / ".skilldeck").mkdir()
    (ws / ".skilldeck" / "config.toml").write_text(
        '[skills]\ndisabled = ["docx"]\nprompt_budget = 500\n', encoding="utf-8"
    )
    reg = registry()
    assert not reg.find("docx")
    reg.enable("docx")
    workspace_config = read_toml(ws / ".skilldeck" / "config.toml")
    assert workspace_config["skills"] == {"disabled": [], "prompt_budget": 500}
    assert registry().find("docx") is not None


def test_disable_unknown_name_suggests(layered: dict[str, Path]) -> None:
    reg = registry()
    with pytest.raises(SkillNotFoundError) as info:
        reg.disable("docz")
    assert info.value.suggestions == ["docx"]


def test_invalid_skills_are_entries_with_errors(tmp_path: Path) -> None:
    write_skill(tmp_path / "good")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "SKILL.md").write_text("---\nname: bad\n---\n", encoding="utf-8")
    reg = SkillRegistry.discover(load_settings(), roots=[tmp_path], no_defaults=True)
    assert reg.names() == ["good"]
    [bad] = [e for e in reg.entries() if e.status is EntryStatus.INVALID]
    assert bad.name == "bad" and bad.errors
    data = bad.to_dict()
    assert data["status"] == "invalid" and data["errors"][0]["code"].startswith("SD")
    assert [i.name for i in reg.invalid] == ["bad"]


def test_unavailable_winner_has_its_own_status(tmp_path: Path) -> None:
    write_skill(tmp_path / "gated", **{"requires-bins": "[definitely-not-a-program-xyz]"})
    reg = SkillRegistry.discover(load_settings(), roots=[tmp_path], no_defaults=True)
    [row] = reg.entries()
    assert row.status is EntryStatus.UNAVAILABLE and row.reason is not None
    assert "definitely-not-a-program-xyz" in row.reason
    assert reg.usable() == [] and reg.active_rows() == []


def test_active_rows_are_the_active_entries_whatever_the_view_says(tmp_path: Path) -> None:
    """``active_rows`` tests availability inline: it must agree with the entries
    (disabled, machine-gated, and ``requires-tools``, unchecked without a tool set)."""
    write_skill(tmp_path / "plain")
    write_skill(tmp_path / "off")
    write_skill(tmp_path / "gated", **{"requires-bins": "[definitely-not-a-program-xyz]"})
    write_skill(tmp_path / "tooled", **{"requires-tools": "[NoSuchTool]"})
    settings = load_settings()
    settings.skills.disabled = ["off"]
    reg = SkillRegistry.discover(settings, roots=[tmp_path], no_defaults=True)
    entries = [e.to_dict() for e in reg.entries()]
    assert reg.active_rows() == [e for e in entries if e["status"] == "active"]
    assert [r["name"] for r in reg.active_rows()] == ["plain", "tooled"]


def test_refresh_reports_added_changed_removed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write_skill(root / "keep")
    write_skill(root / "change")
    write_skill(root / "drop")
    age_tree(root)
    reg = SkillRegistry.discover(load_settings(), roots=[root], no_defaults=True)
    before = reg.fingerprint
    assert not reg.refresh().any
    assert reg.fingerprint == before
    write_skill(root / "change", description="Changed and longer than before.")
    write_skill(root / "new")
    for f in (root / "drop").iterdir():
        f.unlink()
    (root / "drop").rmdir()
    result = reg.refresh()
    assert (result.added, result.changed, result.removed) == (["new"], ["change"], ["drop"])
    assert reg.get("change").description == "Changed and longer than before."
    assert reg.fingerprint != before


def test_fingerprint_tracks_registrations_and_disabled(tmp_path: Path) -> None:
    write_skill(tmp_path / "one")
    reg = SkillRegistry.discover(load_settings(), roots=[tmp_path], no_defaults=True)
    a = reg.fingerprint
    assert (
        a == SkillRegistry.discover(load_settings(), roots=[tmp_path], no_defaults=True).fingerprint
    )
    reg.register(code_skill("two", tmp_path / "x"))
    b = reg.fingerprint
    assert b != a
    reg.disable("one")
    assert reg.fingerprint not in {a, b}


def test_scan_diagnostics_are_exposed(tmp_path: Path) -> None:
    write_skill(tmp_path / "ok")
    os.symlink(tmp_path / "missing", tmp_path / "dangling")
    reg = SkillRegistry.discover(load_settings(), roots=[tmp_path], no_defaults=True)
    assert [d.code for d in reg.diagnostics] == ["SD202"]
    assert [r.path for r in reg.roots] == [tmp_path]


def test_a_loaded_skill_registered_in_code_still_counts_as_registered(
    layered: dict[str, Path], tmp_path: Path
) -> None:
    from skilldeck.skills.format import load_skill

    write_skill(tmp_path / "elsewhere" / "docx", description="Mine.")
    mine, _ = load_skill(tmp_path / "elsewhere" / "docx")
    assert mine is not None
    reg = registry()
    reg.register(mine)
    assert reg.get("docx") is mine
    [shadow] = [s for s in reg.shadowing() if s.name == "docx"]
    assert shadow.reason == "registered in code, which beats discovered skills"
    assert not reg.refresh().any  # nothing on disk changed; the registration stays
    assert reg.get("docx") is mine


def test_entries_report_the_registrys_view_not_the_skill_objects(
    layered: dict[str, Path],
) -> None:
    """``enabled`` and the reason in ``entries()`` come from the registry
    (``is_enabled``, ``why_unavailable``); nothing of that view is written onto the
    shared ``Skill`` objects."""
    reg = registry(skills={"dirs": [str(layered["extra"])], "disabled": ["docx"]})
    for name in reg.names():
        for skill in reg.versions(name):
            assert not {"enabled", "unavailable_reason", "available"} & set(dir(skill))
    rows = {(e.name, str(e.folder)): e.to_dict() for e in reg.entries()}
    pdf = [row for (name, _), row in rows.items() if name == "pdf"]
    assert pdf and all(row["enabled"] for row in pdf)
    docx = next(row for (name, _), row in rows.items() if name == "docx")
    assert docx["enabled"] is False and docx["status"] == "disabled"
    assert docx["reason"] == "disabled in config"
