"""compose / validate_skill_set given one name as a str, or what is not a name."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.config import load_settings
from skilldeck.errors import PolicyError
from skilldeck.skills.policy.policy import compose, validate_skill_set
from skilldeck.skills.registry import SkillRegistry


@pytest.fixture
def registry(tmp_path: Path) -> SkillRegistry:
    root = tmp_path / "skills" / "pdf-tables"
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(
        "---\nname: pdf-tables\ndescription: Tables from PDFs.\nallowed-tools: Read\n---\n",
        encoding="utf-8",
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = load_settings(workspace=ws, home=tmp_path / "home")
    return SkillRegistry.discover(settings, roots=[root.parent], no_defaults=True, use_cache=False)


def test_one_name_as_a_str_is_a_set_of_one(registry: SkillRegistry) -> None:
    assert compose("pdf-tables", registry).names == ["pdf-tables"]
    assert validate_skill_set("pdf-tables", registry).valid


def test_an_unknown_name_as_a_str_is_one_sd301_not_one_per_letter(registry: SkillRegistry) -> None:
    with pytest.raises(PolicyError) as caught:
        compose("pdf-tablez", registry)
    assert [d.code for d in caught.value.diagnostics] == ["SD301"]
    assert "Cannot compose skills ['pdf-tablez']" in str(caught.value)


@pytest.mark.parametrize("refs", [[3], [None], ["pdf-tables", Path("x")]])
def test_what_is_not_a_name_is_refused(registry: SkillRegistry, refs: list[object]) -> None:
    with pytest.raises(TypeError, match=r"A skill set holds names"):
        compose(refs, registry)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"A skill set holds names"):
        validate_skill_set(refs, registry)  # type: ignore[arg-type]
