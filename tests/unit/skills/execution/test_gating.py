"""Gating: missing tools, programs, environment and incompatible platforms."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.skills.execution import compatibility_problem, gating_reason, machine_gating
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.model.spec import SkillMetadata


def make(name: str = "g", **meta: object) -> Skill:
    folder = Path("/skills") / name
    metadata = SkillMetadata(name=name, description="d", **meta)  # type: ignore[arg-type]
    return Skill(metadata=metadata, folder=folder, skill_md=folder / "SKILL.md")


def no_bins(name: str) -> str | None:
    return None


def test_plain_skill_is_available() -> None:
    assert gating_reason(make(), available_tools={"Read"}, environ={}) is None


def test_requires_tools() -> None:
    skill = make(requires_tools=["Read", "WebFetch", "Bash"])
    reason = gating_reason(skill, available_tools={"Read", "Bash"}, environ={})
    assert reason == "needs tool(s) this agent lacks: WebFetch"
    assert gating_reason(skill, available_tools=None, environ={}) is None  # unknown tool set


def test_requires_bins() -> None:
    skill = make(requires_bins=["gh", "jq"])
    reason = gating_reason(skill, available_tools=None, which=lambda b: None if b == "gh" else b)
    assert reason == "needs program(s) not found on PATH: gh"


def test_requires_env() -> None:
    skill = make(requires_env=["GITHUB_TOKEN", "HOME_REGION"])
    reason = gating_reason(
        skill, available_tools=None, environ={"HOME_REGION": "eu", "GITHUB_TOKEN": ""}
    )
    assert reason == "needs environment variable(s) not set: GITHUB_TOKEN"


def test_reasons_are_combined() -> None:
    skill = make(requires_bins=["zz-nope"], requires_env=["NOPE_VAR"], compatibility="Windows only")
    reason = gating_reason(skill, available_tools=None, which=no_bins, environ={}, platform="linux")
    assert reason is not None
    assert (
        reason.count(";") == 2
        and "zz-nope" in reason
        and "NOPE_VAR" in reason
        and "Windows" in reason
    )


@pytest.mark.parametrize(
    ("text", "platform", "problem"),
    [
        ("Linux only", "linux", None),
        ("Linux only", "darwin", "needs Linux (this is macOS)"),
        ("Requires macOS", "linux", "needs macOS (this is Linux)"),
        ("Only runs on Windows", "linux", "needs Windows (this is Linux)"),
        ("Works on Linux and macOS", "win32", None),  # informational, not a restriction
        ("Requires Cowork desktop app environment", "linux", None),
        ("", "linux", None),
    ],
)
def test_compatibility_platforms(text: str, platform: str, problem: str | None) -> None:
    found = compatibility_problem(text, platform=platform, python=(3, 12))
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


@pytest.mark.parametrize(
    ("text", "blocked"),
    [("Python 3.13+", True), ("python >= 3.12", False), ("Requires Python 3.10+, git", False)],
)
def test_compatibility_python_version(text: str, blocked: bool) -> None:
    found = compatibility_problem(text, platform="linux", python=(3, 12))
    assert (found is not None) is blocked


def test_machine_gating_answers_and_writes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    needs = make("needs", requires_env=["SKILLDECK_GATING_TEST"])
    fine = make("fine")
    monkeypatch.delenv("SKILLDECK_GATING_TEST", raising=False)
    reasons = machine_gating([needs, fine])
    assert list(reasons) == [needs] and "SKILLDECK_GATING_TEST" in reasons[needs]
    assert "unavailable_reason" not in vars(needs)  # the registry keeps the answer
    monkeypatch.setenv("SKILLDECK_GATING_TEST", "1")
    assert machine_gating([needs]) == {}
