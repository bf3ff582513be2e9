from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.config import HintSettings, load_settings
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.model.spec import SkillMetadata
from skilldeck.skills.routing import SkillMatcher
from skilldeck.skills.routing.hints import (
    HINT_CLOSE,
    HINT_OPEN,
    _short,
    hint_from_settings,
    skill_hint,
)


def make_skill(name: str, description: str, body: str = "", **fields: object) -> Skill:
    meta = SkillMetadata(name=name, description=description, **fields)  # type: ignore[arg-type]
    folder = Path("/virtual") / name
    return Skill(meta, folder, folder / "SKILL.md").with_body(body)


FILLERS = [make_skill(f"helper-{i}", f"Unrelated helper number {i} for chores.") for i in range(40)]


@pytest.fixture
def matcher() -> SkillMatcher:
    skills = [
        make_skill("pdf-tools", "Extract text and tables from PDF files. Also fills forms."),
        make_skill("pdf-viewer", "Open and annotate PDF files in a viewer."),
        make_skill("git-commit", "Write conventional commit messages for staged changes."),
        *FILLERS,
    ]
    return SkillMatcher.from_skills(skills)


def test_a_clear_match_gets_a_marked_hint(matcher: SkillMatcher) -> None:
    result = skill_hint(matcher, "extract the text and tables from this PDF", k=2, threshold=0.3)
    assert result is not None
    text, names = result
    assert names[0] == "pdf-tools"
    assert text.startswith(HINT_OPEN) and text.endswith(HINT_CLOSE)
    assert "pdf-tools (Extract text and tables from PDF files)" in text
    assert "Skill tool" in text


def test_k_caps_the_number_of_skills_named(matcher: SkillMatcher) -> None:
    result = skill_hint(matcher, "extract text from pdf files", k=1, threshold=0.0)
    assert result is not None and len(result[1]) == 1


def test_nothing_passing_the_threshold_means_no_hint(matcher: SkillMatcher) -> None:
    assert skill_hint(matcher, "extract text from pdf files", k=3, threshold=1.01) is None
    assert skill_hint(matcher, "tell me a joke about penguins", k=3, threshold=0.35) is None
    assert skill_hint(matcher, "   ", k=3, threshold=0.0) is None
    assert skill_hint(matcher, "pdf", k=0, threshold=0.0) is None


def test_the_threshold_filters_weaker_matches(matcher: SkillMatcher) -> None:
    query = "extract text and tables from pdf files"
    scores = {m.name: m.score for m in matcher.rank(query, k=5)}
    between = (scores["pdf-tools"] + scores["pdf-viewer"]) / 2
    result = skill_hint(matcher, query, k=3, threshold=between)
    assert result is not None and result[1] == ["pdf-tools"]


def test_skills_the_model_may_not_invoke_are_never_hinted() -> None:
    skills = [
        make_skill("deploy", "Deploy the app to production.", disable_model_invocation=True),
        make_skill("deploy-preview", "Deploy the app to a preview URL."),
        *FILLERS,
    ]
    disabled = make_skill("deploy-docs", "Deploy the docs site to production.")
    matcher = SkillMatcher.from_skills([*skills, disabled])
    usable = lambda s: s is not disabled  # noqa: E731 - the registry's view, stood in
    result = skill_hint(matcher, "deploy the app to production", k=3, threshold=0.0, usable=usable)
    assert result is not None
    assert result[1] == ["deploy-preview"]


def test_hints_follow_the_settings(matcher: SkillMatcher, tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path / "home", workspace=tmp_path)
    assert settings.skills.hints == HintSettings()
    message = "extract the text and tables from this PDF"
    assert hint_from_settings(matcher, message, settings) is not None
    settings.skills.hints.enabled = False
    assert hint_from_settings(matcher, message, settings) is None
    settings.skills.hints.enabled = True
    settings.skills.hints.threshold = 1.01
    assert hint_from_settings(matcher, message, settings) is None


def test_descriptions_are_shortened_and_cannot_close_the_tag() -> None:
    assert _short("Extract text. Then more.") == "Extract text"
    long = "word " * 40
    short = _short(long)
    assert short.endswith("…") and len(short) <= 80
    assert "<" not in _short("Sneaky </skill-hint> description")
