"""Brand evidence: a request that writes a skill's whole product name as a name —
"in Timely", "my Google Drive" — floors its cosine even when the words are common,
and non-English requests get name evidence too (src/skilldeck/skills/routing/
_name_words.py, match.py, _warm.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from skilldeck.skills.model.skill import Skill
from skilldeck.skills.model.spec import SkillMetadata
from skilldeck.skills.routing import SkillMatcher, _name_words
from skilldeck.skills.routing._bm25f import F32
from skilldeck.skills.routing._name_words import NamedInRequest, brand_keys, name_evidence
from skilldeck.skills.routing.multilingual import looks_foreign


def _skill(name: str, description: str, folder: str | None = None) -> Skill:
    where = Path("/virtual") / (folder or name)
    return Skill(SkillMetadata(name=name, description=description), where, where / "SKILL.md")


def test_a_brand_is_the_name_without_separators_or_wrapper_words() -> None:
    assert brand_keys(_skill("googledrive-automation", "x")) == {"googledrive"}
    assert brand_keys(_skill("Google Drive Automation", "x", "google_drive-automation")) == {
        "googledrive"
    }
    assert brand_keys(_skill("zoho_invoice-automation", "x")) == {"zohoinvoice"}
    assert brand_keys(_skill("stripe-integration", "x", "stripe-api")) == {"stripe"}
    assert brand_keys(_skill("remove-bg-automation", "x")) == {"removebg"}


def test_runs_are_consecutive_words_written_as_names() -> None:
    runs = {r.key for r in NamedInRequest("move it into my Google Drive, please").runs()}
    assert runs == {"google", "drive", "googledrive"}
    assert not {r.key for r in NamedInRequest("log two hours in timely fashion").runs()}
    spelled = {r.key for r in NamedInRequest("use remove.bg, then auth0 and sevDesk").runs()}
    assert spelled == {"removebg", "auth0", "sevdesk"}  # no capital needed


def test_runs_are_found_from_the_spelling_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding runs never consults the English word list (loading it costs ~0.3 s of
    a warm ``skills match``); only a one-word brand already matched does."""

    def refuse(word: str) -> bool:
        raise AssertionError(f"looked up {word!r}")

    monkeypatch.setattr(_name_words, "_is_english", refuse)
    assert NamedInRequest("please extract the tables from this pdf file").runs() == []
    assert [r.key for r in NamedInRequest("sync it with Google Drive").runs()][-1] == "drive"


def test_weekdays_and_months_are_not_names() -> None:
    assert not NamedInRequest("send it on Monday").runs()
    assert not NamedInRequest("the report for March").runs()
    assert [r.key for r in NamedInRequest("post it to Monday.com").runs()] == ["mondaycom"]


#: token → (idf, rows): a made-up catalog of 900 skills; "scrib" and "happy" are common
POSTINGS = {
    "happy": (2.0, list(range(30))),
    "scrib": (2.5, [3, 4, *range(40, 60)]),
    "timely": (2.0, [5, *range(60, 90)]),
    "cloudflar": (2.0, [6, *range(90, 100)]),
    "hour": (1.5, list(range(100, 200))),
}
BRANDS = {
    3: frozenset({"happyscribe"}),
    4: frozenset({"scribe"}),
    5: frozenset({"timely"}),
    6: frozenset({"cloudflare"}),
}


def evidence(query: str, tokens: Sequence[str]) -> dict[int, float]:
    return name_evidence(
        query,
        tokens,
        900,
        POSTINGS.get,
        lambda row: frozenset(),
        lambda r: BRANDS.get(r, frozenset()),
    )


def test_a_brand_written_as_a_name_is_evidence_however_common_its_words() -> None:
    assert evidence("export it from Happy Scribe", ["export", "happy", "scrib"]) == {
        3: _name_words.BRAND_EVIDENCE
    }
    assert evidence("purge the cache on Cloudflare", ["purg", "cach", "cloudflar"]) == {
        6: _name_words.BRAND_EVIDENCE
    }
    assert evidence("export it, happy scribe", ["export", "happy", "scrib"]) == {}


def test_a_brand_of_one_english_word_is_no_evidence() -> None:
    """A capital is not enough for one English word: people and places have them too
    ("Tell Kit I'm late", "meet at Harvest"). "Happy Scribe" (two words) and
    "Cloudflare" (not English) are names; "Timely" alone is not evidence."""
    assert evidence("log two hours in Timely", ["hour", "timely"]) == {}


def test_the_longest_brand_takes_its_words() -> None:
    """ "Happy Scribe" names happy-scribe, not the ``scribe`` skill as well."""
    assert set(evidence("export it from Happy Scribe", ["export", "happy", "scrib"])) == {3}
    assert set(evidence("export it from Scrib.io", ["export", "scrib"])) == set()


class WorkOrPlanting:
    """A stand-in embedder: a request about planting is close to text about work, and
    the product's wrapper ("Automate More Trees tasks") gets no semantic credit, as a
    static model that reads "More Trees" as two ordinary words gives it none."""

    def embed(self, texts: Sequence[str]) -> F32:
        def vector(text: str) -> list[float]:
            if "work" in text.lower():
                return [1.0, 0.0]
            return [0.6, 0.8] if "plant" in text.lower() else [0.0, -1.0]

        return np.asarray([vector(t) for t in texts], dtype=np.float32)


def _catalog() -> list[Skill]:
    """A product wrapper named by common words (used by 20 other skills), a generic
    skill the embedder favours, and unrelated skills."""
    described = {
        "more-trees-automation": "Automate More Trees tasks via Rube MCP.",
        "tree-planter": "Track work for client projects.",
        "sevdesk-automation": "Automate sevDesk tasks via Rube MCP.",
        "invoice-writer": "Leg eine Rechnung für eine GmbH an, etwa für Müller.",
        **{f"grove-{n}": f"Answer questions about trees, topic{n}." for n in range(20)},
        **{f"topic-{n}": f"Background subject number{n} about area{n}." for n in range(600)},
    }
    return [_skill(name, text).with_body("") for name, text in described.items()]


def test_a_request_naming_a_product_by_common_words_ranks_it_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    matcher = SkillMatcher.from_skills(_catalog(), embedder=WorkOrPlanting())
    query = "plant 10 trees with More Trees for the March signups"
    assert matcher.rank(query, k=1)[0].name == "more-trees-automation"
    monkeypatch.setattr(_name_words, "BRAND_EVIDENCE", 0.0)
    assert matcher.rank(query, k=1)[0].name == "tree-planter"  # what it did before


def test_a_non_english_request_naming_a_product_ranks_it_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Non-English requests skip the English embeddings; their rare name words are
    the semantic half instead (before, they were ranked by words alone)."""
    matcher = SkillMatcher.from_skills(_catalog(), embedder=WorkOrPlanting())
    query = "Leg bitte in sevDesk eine Rechnung für die Müller GmbH an"
    assert matcher.rank(query, k=1)[0].name == "sevdesk-automation"
    monkeypatch.setattr(_name_words, "NAME_EVIDENCE_SCALE", 0.0)
    assert matcher.rank(query, k=1)[0].name == "invoice-writer"


def test_text_mostly_in_another_script_is_not_english() -> None:
    assert looks_foreign("нужна векторная база для rag")
    assert looks_foreign("пишу расширение для chrome на manifest v3")
    assert looks_foreign("θελω να φτιαξω ενα γραφημα")
    assert not looks_foreign("the β of each stock against the index")
