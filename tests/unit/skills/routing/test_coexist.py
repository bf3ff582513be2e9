"""``--coexist`` ranks both catalogs as an agent ranks them: with embeddings fused in,
a new skill the words alone would not pick can still take an existing skill's request,
and the report must say so (``skills/routing/coexist.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from skilldeck.skills.format import load_skill
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.routing import SkillMatcher
from skilldeck.skills.routing._bm25f import F32
from skilldeck.skills.routing.coexist import RankedCatalog, coexistence, compare_catalogs
from skilldeck.skills.routing.evals import TriggerCase

CATALOG = {
    "pdf-tools": "Extract text and tables from PDF files, fill PDF forms, merge PDF documents.",
    "git-commit": "Write conventional commit messages for staged git changes.",
    "slack-gif-creator": "Create animated GIFs sized for Slack emoji and messages.",
    "invoice-chase": "Follow up politely with customers about unpaid invoices they owe.",
}
#: the new skill shares no word with the request: only its meaning is close
BINDER = ("page-binder", "Bind loose pages together into a single bound file.")
REQUEST = "merge these PDF documents"


class BindingTopic:
    """A stand-in embedder: binding pages together (the new skill, and the request)
    points one way, everything else the other — as a model that knows "merge these"
    and "bind together" mean the same would."""

    def embed(self, texts: Sequence[str]) -> F32:
        near = ("bind", "merge these")
        rows = [[1.0, 0.0] if any(w in t.lower() for w in near) else [0.0, 1.0] for t in texts]
        return np.asarray(rows, dtype=np.float32)


def write(root: Path, name: str, description: str) -> Skill:
    folder = root / name
    folder.mkdir(parents=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    skill, diagnostics = load_skill(folder)
    assert skill is not None, diagnostics
    return skill


def catalog(tmp_path: Path) -> tuple[list[Skill], Skill]:
    existing = [write(tmp_path / "catalog", n, d) for n, d in CATALOG.items()]
    return existing, write(tmp_path / "new", *BINDER)


CASES = [TriggerCase("pdf-tools", REQUEST, True), TriggerCase("git-commit", "commit", False)]


def test_the_fused_ranking_decides_who_loses(tmp_path: Path) -> None:
    existing, new = catalog(tmp_path)
    by_words = coexistence(existing, new, CASES, threshold=0.05, budget=100_000)
    assert by_words.checked == 1 and by_words.lost == []  # words alone: harmless
    fused = coexistence(
        existing, new, CASES, threshold=0.05, budget=100_000, embedder=BindingTopic()
    )
    assert fused.losers == ["pdf-tools"]
    assert fused.lost[0].taken_by == "page-binder"
    assert fused.to_dict()["skills_losing_top1"] == ["pdf-tools"]


def test_compare_catalogs_ranks_with_the_matchers_it_is_given(tmp_path: Path) -> None:
    existing, new = catalog(tmp_path)
    embedder = BindingTopic()
    before = SkillMatcher.from_skills(existing, embedder=embedder)
    after = SkillMatcher.from_skills([*existing, new], embedder=embedder)
    result = compare_catalogs(
        RankedCatalog(before), RankedCatalog(after), new.name, CASES, threshold=0.05, budget=8000
    )
    assert [(r.skill, r.taken_by) for r in result.lost] == [("pdf-tools", "page-binder")]
    assert (result.before.skills, result.after.skills) == (4, 5)


def test_the_new_skill_counts_as_usable_and_replaces_its_namesake(tmp_path: Path) -> None:
    existing, new = catalog(tmp_path)
    old_binder = write(tmp_path / "old", "page-binder", "Staple paper receipts.")
    embedder = BindingTopic()
    result = coexistence(
        [*existing, old_binder],
        new,
        CASES,
        threshold=0.05,
        budget=100_000,
        usable=lambda skill: skill.name != "page-binder",  # e.g. its name is gated here
        embedder=embedder,
    )
    assert result.losers == ["pdf-tools"]  # the new page-binder is usable after all
    assert (result.before.skills, result.after.skills) == (4, 5)
