from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from skilldeck.errors import PolicyError, SkillNotFoundError
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.model.spec import SkillMetadata
from skilldeck.skills.policy.select import is_coding_task, select


def mk(name: str, **fields: Any) -> Skill:
    meta = SkillMetadata(
        name=name, description=fields.pop("description", f"{name} skill"), **fields
    )
    return Skill(metadata=meta, folder=Path(f"/s/{name}"), skill_md=Path(f"/s/{name}/SKILL.md"))


class Lookup:
    def __init__(self, *skills: Skill) -> None:
        self.by_name = {s.name: s for s in skills}

    def get(self, name: str, version: str | None = None) -> Skill:
        if name not in self.by_name:
            raise SkillNotFoundError(name)
        return self.by_name[name]

    def why_unavailable(self, skill: Skill) -> str | None:
        return None


@dataclass
class M:
    name: str
    score: float


class FakeRanker:
    def __init__(self, *matches: M) -> None:
        self.matches = list(matches)

    def rank(self, query: str, *, k: int = 10) -> list[M]:
        return self.matches[:k]


SPEC = mk(
    "specification-engine",
    allowed_tools=["Read"],
    requires=["opencode-implementer"],
    before=["opencode-implementer"],
)
IMPL = mk(
    "opencode-implementer",
    allowed_tools=["Bash(opencode run:*)"],
    forbidden_tools=["Write", "Edit"],
    requires=["specification-engine"],
)
RESEARCH = mk(
    "research", allowed_tools=["WebSearch", "WebFetch(domain:arxiv.org)"], tags=["research"]
)
WRITER = mk("writer", allowed_tools=["Write"], conflicts=["research"])
SHELL = mk("shell-helper", allowed_tools=["Bash"])


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("Refactor the API client and add unit tests", True),
        ("fix the crash in parse_config()", True),
        ("Why does `foo.py` fail?", True),
        ("Refatorar a API e melhorar performance", True),
        ("Pesquisar frameworks de IA", False),
        ("Summarize this meeting transcript for the team", False),
        ("Plan a trip to Lisbon", False),
    ],
)
def test_coding_detection(task: str, expected: bool) -> None:
    assert is_coding_task(task) is expected


def test_metadata_overrides_detection() -> None:
    assert is_coding_task("Plan a trip", {"type": "coding"})
    assert not is_coding_task("implement it", {"coding": False})


def test_coding_task_gets_whole_pipeline_first() -> None:
    lookup = Lookup(SPEC, IMPL, RESEARCH)
    ranker = FakeRanker(M("research", 0.9))
    names = select("Implement a caching layer in cache.py", lookup, ranker=ranker)
    assert names[:2] == ["specification-engine", "opencode-implementer"]
    assert "research" in names


def test_incomplete_pipeline_is_refused() -> None:
    with pytest.raises(PolicyError, match="coding pipeline") as info:
        select("fix the bug in main.py", Lookup(SPEC), coding=True)
    assert info.value.diagnostics


def test_non_coding_several_skills_and_conflicts_skipped() -> None:
    lookup = Lookup(SPEC, IMPL, RESEARCH, WRITER, SHELL)
    ranker = FakeRanker(M("research", 0.8), M("writer", 0.7), M("shell-helper", 0.6), M("x", 0.9))
    names = select("research AI frameworks", lookup, ranker=ranker, coding=False)
    assert names == ["research", "shell-helper"]  # writer conflicts; x unknown


def test_threshold_risk_and_domain() -> None:
    lookup = Lookup(RESEARCH, SHELL)
    ranker = FakeRanker(M("research", 0.5), M("shell-helper", 0.9))
    assert select("t", lookup, ranker=ranker, coding=False, threshold=0.6) == ["shell-helper"]
    assert select("t", lookup, ranker=ranker, coding=False, risk="high") == ["research"]
    assert select("t", lookup, ranker=ranker, coding=False, domain="research") == ["research"]
    assert select("t", lookup, coding=False) == []
