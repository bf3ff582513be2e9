"""Level-3 resource reads stay inside the skill folder.

``Skill.resolve_resource`` / ``Skill.read_resource`` (what disclosure and integrations
use) and the MCP server's ``read_skill_resource`` (``mcp.catalog.resource_text``) must
refuse ``..``, absolute paths, symlinks and hard links pointing outside, and a
resource swapped for a link after the check.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import anyio
import pytest
from hardening_helpers import good_skill

from skilldeck.config import load_settings
from skilldeck.errors import ResourceAccessError, SkilldeckError
from skilldeck.mcp.catalog import resource_text
from skilldeck.mcp.server import SkillMCPServer
from skilldeck.skills.format import load_skill
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.registry import SkillRegistry

SECRET = "RESOURCE-OUTSIDE-SECRET"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Skill, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(SECRET, encoding="utf-8")
    md = good_skill(tmp_path / "root", "res-skill")
    folder = md.parent
    (folder / "references").mkdir()
    (folder / "references" / "guide.md").write_text("# Guide\n", encoding="utf-8")
    (folder / "references" / "link.md").symlink_to(outside / "secret.md")
    (folder / "linkdir").symlink_to(outside, target_is_directory=True)
    skill, _ = load_skill(folder)
    assert skill is not None
    return skill, outside


ESCAPES = [
    "../../outside/secret.md",
    "references/../../../outside/secret.md",
    "ABS",
    "references/link.md",
    "linkdir/secret.md",
    "/etc/passwd",
    "references/guide.md\x00",
    "",
    "~/secret.md",
]


def _spec(spec: str, outside: Path) -> str:
    return str(outside / "secret.md") if spec == "ABS" else spec


def _read_all(skill: Skill, rel: str) -> list[str]:
    """Every level-3 read path; each must refuse (raise) or not leak."""
    leaks = []
    for reader in (skill.read_resource, lambda r: resource_text(skill, r)):
        try:
            text = reader(rel)
        except SkilldeckError:
            continue
        if SECRET in text:
            leaks.append(rel)
    return leaks


@pytest.mark.parametrize("spec", ESCAPES)
def test_escapes_are_refused(setup: tuple[Skill, Path], spec: str) -> None:
    skill, outside = setup
    rel = _spec(spec, outside)
    with pytest.raises(ResourceAccessError):
        skill.read_resource(rel)
    assert _read_all(skill, rel) == []


def test_inside_reads_work_and_listing_hides_links_out(setup: tuple[Skill, Path]) -> None:
    skill, _ = setup
    assert skill.read_resource("references/guide.md") == "# Guide\n"
    listed = skill.list_resources()
    assert "references/guide.md" in listed
    assert "references/link.md" not in listed
    assert not any(p.startswith("linkdir") for p in listed)


def test_mcp_read_skill_resource_refuses(setup: tuple[Skill, Path], tmp_path: Path) -> None:
    skill, outside = setup
    settings = load_settings(workspace=tmp_path, home=tmp_path / "home")
    registry = SkillRegistry.discover(
        settings, roots=[skill.folder.parent], no_defaults=True, use_cache=False
    )
    server = SkillMCPServer(registry)

    def read(path: str) -> str:
        answer = server.read_skill_resource("res-skill", path)
        if inspect.isawaitable(answer):  # the server's tools may be sync or async
            return str(anyio.run(lambda: answer))
        return str(answer)

    assert read("references/guide.md") == "# Guide\n"
    for spec in ESCAPES:
        try:
            text = read(_spec(spec, outside))
        except Exception as e:  # the MCP SDK's ToolError: the client sees an error
            assert SECRET not in str(e)
            continue
        raise AssertionError(f"{spec!r} was not refused: {text[:80]!r}")


def test_hard_link_out_is_refused(setup: tuple[Skill, Path]) -> None:
    skill, outside = setup
    os.link(outside / "secret.md", skill.folder / "references" / "hard.md")
    assert _read_all(skill, "references/hard.md") == []


def test_resource_swapped_for_a_link_after_the_check(
    setup: tuple[Skill, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    skill, outside = setup
    real_resolve = Skill.resolve_resource

    def racing(self: Skill, relative: str) -> Path:
        target = real_resolve(self, relative)
        if target.name == "guide.md":  # the attacker wins the race
            target.unlink()
            target.symlink_to(outside / "secret.md")
        return target

    monkeypatch.setattr(Skill, "resolve_resource", racing)
    leaked = []
    for reader in (skill.read_resource, lambda r: resource_text(skill, r)):
        (skill.folder / "references" / "guide.md").unlink(missing_ok=True)
        (skill.folder / "references" / "guide.md").write_text("# Guide\n", encoding="utf-8")
        try:
            if SECRET in reader("references/guide.md"):
                leaked.append(reader)
        except SkilldeckError:
            pass
    assert leaked == []
