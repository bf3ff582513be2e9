"""The registry's view of availability (issue 16): computed from the skills, held by
the registry, never written onto a ``Skill``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skilldeck.config import Settings
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.model.spec import SkillMetadata
from skilldeck.skills.registry.availability import Availability


def make(name: str, **meta: Any) -> Skill:
    folder = Path(f"/skills/{name}")
    return Skill(
        metadata=SkillMetadata(name=name, description=f"The {name} skill", **meta),
        folder=folder,
        skill_md=folder / "SKILL.md",
    )


def test_disabled_then_tools_then_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SKILLDECK_AVAILABILITY_TEST", raising=False)
    both = make("both", requires_tools=["WebFetch"], requires_env=["SKILLDECK_AVAILABILITY_TEST"])
    off = make("off", requires_env=["SKILLDECK_AVAILABILITY_TEST"])
    fine = make("fine")
    settings = Settings(workspace=tmp_path, home=tmp_path / "home")
    view = Availability.compute({"off"}, [both, off, fine], [], settings)
    assert view.why_unavailable(off) == "disabled in config" and not view.is_enabled(off)
    assert view.why_unavailable(fine) is None and view.machine_reason(fine) is None
    machine = view.machine_reason(both)
    assert machine is not None and "SKILLDECK_AVAILABILITY_TEST" in machine
    assert view.why_unavailable(both) == machine  # tools unknown: not checked
    joined = view.why_unavailable(both, {"Read"})
    assert joined is not None and joined.index("WebFetch") < joined.index("SKILLDECK")
    for skill in (both, off, fine):
        assert not {"enabled", "unavailable_reason", "available"} & set(dir(skill))


def test_a_view_is_a_snapshot_of_one_refresh(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The machine is asked at compute time only: a later change shows in the next
    refresh's view, and an older view is not changed behind its holder's back."""
    needs = make("needs", requires_env=["SKILLDECK_AVAILABILITY_TEST"])
    settings = Settings(workspace=tmp_path, home=tmp_path / "home")
    monkeypatch.delenv("SKILLDECK_AVAILABILITY_TEST", raising=False)
    before = Availability.compute((), [needs], [], settings)
    monkeypatch.setenv("SKILLDECK_AVAILABILITY_TEST", "1")
    after = Availability.compute((), [needs], [], settings)
    assert before.why_unavailable(needs) is not None
    assert after.why_unavailable(needs) is None
