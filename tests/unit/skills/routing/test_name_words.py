"""Name evidence: a rare word of a skill's name, spelled out by the request, is a floor
under the skill's cosine when embeddings are fused (src/skilldeck/skills/routing/
_name_words.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from skilldeck.config import load_settings
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.model.spec import SkillMetadata
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.routing import SkillMatcher, _name_words
from skilldeck.skills.routing._basics import MIN_CEILING
from skilldeck.skills.routing._bm25f import F32
from skilldeck.skills.routing._name_words import (
    NamedInRequest,
    name_evidence,
    name_tokens,
    rare_limit,
)

#: token → (idf, rows using it) of a made-up catalog of 900 skills (rare: ≤ 2 rows)
POSTINGS = {
    "docmosis": (6.5, [3]),
    "render": (3.0, list(range(40))),
    "pdf": (2.0, [1, 2, 3, 4, 5]),
    "contract": (6.0, [3, 7]),
}
NAMES = {3: frozenset({"docmosis", "automation", "pdf"}), 7: frozenset({"legal", "review"})}


def evidence(tokens: Sequence[str], query: str | None = None) -> dict[int, float]:
    """Name evidence in the made-up catalog; the request is the tokens' words unless
    given (these words are all "names": no English word among them)."""
    text = query if query is not None else " ".join(tokens)
    return name_evidence(text, tokens, 900, POSTINGS.get, lambda row: NAMES.get(row, frozenset()))


def test_a_rare_word_of_the_name_is_evidence_for_that_skill_only() -> None:
    found = evidence(["render", "docmosis", "contract", "pdf", "zzq", "qqz"])
    ceiling = 3.0 + 6.5 + 6.0 + 2.0 + 2 * math.log1p((900 - 0.5) / 1.5)
    assert found == {3: pytest.approx(_name_words.NAME_EVIDENCE_SCALE * 6.5 / ceiling)}


def test_common_words_and_words_outside_the_name_are_no_evidence() -> None:
    assert evidence(["pdf"]) == {}  # in the name, but five skills use it
    assert evidence(["contract"]) == {}  # rare, but not a word of row 7's name


def test_evidence_is_capped_at_one_and_unseen_words_raise_the_ceiling() -> None:
    assert evidence(["docmosis"]) == {3: pytest.approx(min(1.0, 4 * 6.5 / MIN_CEILING))}
    unseen = math.log1p((900 - 0.5) / 1.5)
    long = ["docmosis", "zzq", "qqz", "xxq", "qxq"]  # four words no skill uses
    assert evidence(long)[3] == pytest.approx(4 * 6.5 / (6.5 + 4 * unseen))


def test_a_rare_name_word_counts_only_where_the_request_writes_it_as_a_name() -> None:
    """An English word is a name only when capitalised inside a sentence: "the felt
    hat" does not name ``felt-automation``; "draw it in Felt" does."""
    postings = {"felt": (6.5, [3]), "hat": (3.0, list(range(40)))}
    names = {3: frozenset({"felt", "automation"})}

    def found(query: str) -> dict[int, float]:
        return name_evidence(query, ["felt", "hat"], 900, postings.get, names.__getitem__)

    assert found("I felt tired, so I bought a hat") == {}
    assert found("Felt hats are warm") == {}  # starts the sentence
    assert set(found("draw the hat in Felt")) == {3}
    assert set(found("the hat? Use Felt. Felt is good")) == {3}


def test_which_words_a_request_writes_as_names() -> None:
    def named(query: str) -> set[str]:
        words = NamedInRequest(query)
        return {
            t
            for t in ("docmosis", "2chat", "remov", "bg", "timely", "felt", "doctor")
            if words.covers(t)
        }

    assert named("render it with Docmosis or docmosis") == {"docmosis"}
    assert named("send it through 2chat") == {"2chat"}
    assert named("use remove.bg on it") == {"remov", "bg"}  # not an English word as a whole
    assert named("log two hours in Timely") == {"timely"}
    assert named("I felt tired and the doctor said rest") == set()


def test_rarity_scales_with_the_catalog() -> None:
    assert rare_limit(5) == 1
    assert rare_limit(3209) == 7  # idf >= 6 under BM25's formula on the corpus
    assert rare_limit(50_000) == 111


def test_the_name_field_is_the_name_and_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "googledrive-automation"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: Google Drive Automation\ndescription: Automate Google Drive.\n---\n"
    )
    (skill,) = _discover(tmp_path / "skills")
    assert {"googl", "driv", "googledriv", "automation"} <= set(name_tokens(skill))


class TwoTopics:
    """A stand-in embedder: text about documents points one way, anything else the
    other — the product's wrapper ("Automate Docmosis tasks") gets no semantic credit,
    as a static model that never saw the product's name gives it none."""

    def embed(self, texts: Sequence[str]) -> F32:
        topical = ("document", "template")
        rows = [[1.0, 0.0] if any(w in t.lower() for w in topical) else [0.0, 1.0] for t in texts]
        return np.asarray(rows, dtype=np.float32)


def _catalog() -> list[Skill]:
    """A product wrapper, a generic skill the embedder favours, and 600 unrelated
    skills, so that words used by one skill are rare as in a real catalog."""
    described = {
        "docmosis-automation": "Automate Docmosis tasks via Rube MCP.",
        "document-filler": "Fill templates with customer data and export them.",
        **{f"topic-{n}": f"Background subject number{n} about area{n}." for n in range(600)},
    }
    return [
        Skill(
            SkillMetadata(name=name, description=text),
            Path("/virtual") / name,
            Path("/virtual") / name / "SKILL.md",
        ).with_body("")
        for name, text in described.items()
    ]


def _discover(root: Path) -> list[Skill]:
    settings = load_settings(home=root.parent / "home", workspace=root.parent)
    return SkillRegistry.discover(settings, roots=[root], no_defaults=True).list()


def test_a_request_naming_a_thin_product_skill_ranks_it_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    matcher = SkillMatcher.from_skills(_catalog(), embedder=TwoTopics())
    query = "Docmosis document please"
    assert matcher.rank(query, k=1)[0].name == "docmosis-automation"
    monkeypatch.setattr(_name_words, "NAME_EVIDENCE_SCALE", 0.0)
    assert matcher.rank(query, k=1)[0].name == "document-filler"  # what it did before
