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
    assert brand_keys(_skill("pymc-bayesian-automation", "x", "pymc")) == {
        "pymcbayesian",
        "pymc",
    }


def test_only_a_wrapper_has_a_brand_and_a_nested_folder_is_not_one() -> None:
    """ "She was hired as a Data Scientist" asks for no skill: ``data-scientist`` is a
    role, not a product; a folder named ``ios`` under an SDK's skills is no brand."""
    assert brand_keys(_skill("data-scientist", "x")) == frozenset()
    assert brand_keys(_skill("zoom-meeting-sdk-ios", "x", "ios")) == {"zoommeetingios"}


def test_runs_are_consecutive_words_written_as_names() -> None:
    runs = {r.key for r in NamedInRequest("move it into my Google Drive, please").runs()}
    assert runs == {"google", "drive", "googledrive"}
    assert not {r.key for r in NamedInRequest("log two hours in timely fashion").runs()}
    spelled = {r.key for r in NamedInRequest("use remove.bg, then auth0 and sevDesk").runs()}
    assert spelled == {"removebg", "auth0", "sevdesk"}  # no capital needed
    titled = {r.key for r in NamedInRequest("a novel called The Odds, by Ann").runs()}
    assert titled == {"odds", "ann"}  # an article is never part of a name


def test_a_long_request_costs_linear_time() -> None:
    """Sentence starts are found in one pass (they were searched again for every
    word: 8,000 title-case words took seconds)."""
    words = NamedInRequest(" ".join(["Alpha Beta."] * 4000))._all_words()
    assert [inside for _, inside, _ in words[:4]] == [False, True, False, True]


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


#: brand key → rows of a made-up catalog of 900 skills
BRANDS = {
    "happyscribe": (3,),
    "scribe": (4,),
    "timely": (5,),
    "cloudflare": (6,),
    "removebg": (7,),
    "v0": (8,),
    "pdfio": (9,),
}


def evidence(query: str, tokens: Sequence[str]) -> dict[int, float]:
    return name_evidence(
        query, tokens, 900, {}.get, lambda row: frozenset(), lambda key: BRANDS.get(key, ())
    )


def test_a_brand_written_as_a_name_is_evidence_however_common_its_words() -> None:
    assert evidence("export it from Happy Scribe", ["export", "happy", "scrib"]) == {
        3: _name_words.BRAND_EVIDENCE
    }
    assert evidence("cut it out via remove.bg", ["cut", "remov", "bg"]) == {
        7: _name_words.BRAND_EVIDENCE
    }
    assert evidence("export it, happy scribe", ["export", "happy", "scrib"]) == {}


def test_one_plain_word_or_a_version_is_no_brand() -> None:
    """A lone capitalised word is a person, a place or a title as often as a product
    ("Tell Kit I'm late", "meet at Harvest"); a version is not a name."""
    assert evidence("Tell Timely I'm late", ["tell", "timely", "late"]) == {}
    assert evidence("meet me at Cloudflare tomorrow", ["meet", "cloudflar", "tomorrow"]) == {}
    assert evidence("we shipped v0 of the app", ["ship", "v0", "app"]) == {}
    assert evidence("build it in V0 now", ["build", "v0"]) == {}  # a version, even after "in"


def test_one_plain_word_after_a_tool_word_is_a_brand() -> None:
    """ "log two hours in Timely", "On Cloudflare, purge…", "through Carbone": a word
    that introduces a tool makes a lone capital the tool's name — but only when it
    stands alone ("in Cloudflare Workers" is another product) and is capitalised."""
    assert evidence("log two hours in Timely", ["hour", "timely"]) == {
        5: _name_words.BRAND_EVIDENCE
    }
    assert evidence("On Cloudflare, purge the cache", ["cloudflar", "purg", "cach"]) == {
        6: _name_words.BRAND_EVIDENCE
    }
    assert evidence("deploy it on Cloudflare Workers", ["deploy", "cloudflar", "worker"]) == {}
    assert evidence("log two hours in timely fashion", ["hour", "timely", "fashion"]) == {}


def test_a_wrapper_word_inside_a_run_is_no_part_of_the_brand() -> None:
    """ "PDF API IO" spells ``pdf-api-io-automation``'s brand as brand_keys writes
    it, without the wrapper word (``pdfio``)."""
    assert evidence("fill it with PDF API IO", ["fill", "pdf", "api", "io"]) == {
        9: _name_words.BRAND_EVIDENCE
    }
    assert not [r for r in NamedInRequest("read the API docs").runs() if r.key == ""]


def test_punctuation_and_numbers_end_a_run() -> None:
    """A product's name holds no comma, no "、" and no bare number: "Slack、Notion"
    are two products, each standing alone; "in Timely 2 hours" names Timely."""
    named = NamedInRequest("用 Slack、Notion 和 Jira 同步任务")
    assert {(r.key, r.alone) for r in named.runs()} == {
        ("slack", True),
        ("notion", True),
        ("jira", True),
    }
    assert evidence("log in Timely 2 hours for Maria", ["log", "timely", "hour"]) == {
        5: _name_words.BRAND_EVIDENCE
    }


def test_a_tool_word_must_touch_the_name() -> None:
    """ "Once the lights came on, Kit started to cry": a comma between them, so "on"
    introduces nothing; "in Kit's flat" is a person's flat."""
    brands = {"kit": (1,)}

    def kit(query: str) -> dict[int, float]:
        return name_evidence(query, ["kit"], 900, {}.get, lambda row: frozenset(), brands.get)

    assert kit("Once the lights came on, Kit started to cry") == {}
    assert kit("we stayed in Kit's flat for a week") == {}
    assert kit("we stayed in Kit’s flat for a week") == {}
    assert kit("add the subscriber in Kit, then tag them") == {1: _name_words.BRAND_EVIDENCE}
    assert kit("tag the new subscribers in Kit and send the welcome") == {
        1: _name_words.BRAND_EVIDENCE
    }
    assert kit("we meet in Kit cafe on Fridays") == {}  # a modifier: a place's name


def test_a_leading_wrapper_word_stays_and_a_version_is_never_a_brand() -> None:
    """ "API Developer" is a job, not ``cli-developer``'s brand ``developer``; "V0 API"
    leaves ``v0``, a version."""
    found = name_evidence(
        "hired as an API Developer",
        ["hire", "api", "develop"],
        900,
        {}.get,
        lambda row: frozenset(),
        {"developer": (1,)}.get,
    )
    assert found == {}
    assert evidence("build the page in V0 API mode", ["build", "page", "v0", "api"]) == {}


def test_the_longest_brand_takes_its_words() -> None:
    """ "Happy Scribe" names happy-scribe, not the ``scribe`` skill as well."""
    assert set(evidence("export it from Happy Scribe", ["export", "happy", "scrib"])) == {3}


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
    monkeypatch.setattr(_name_words, "BRAND_EVIDENCE", 0.0)
    assert matcher.rank(query, k=1)[0].name == "invoice-writer"


def test_a_non_english_request_gets_no_brand_evidence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its keyword scores are small (the dictionary's words), so a brand's floor
    would decide the ranking, and a product named only as the context would win
    ("OpenAIのSoraで…" on a fresh split): rare words alone are its semantic half."""
    matcher = SkillMatcher.from_skills(_catalog(), embedder=WorkOrPlanting())
    query = "Посади 10 деревьев через More Trees"
    before = [m.name for m in matcher.rank(query, k=5)]
    monkeypatch.setattr(_name_words, "BRAND_EVIDENCE", 1.0)
    assert [m.name for m in matcher.rank(query, k=5)] == before
    english = "plant 10 trees with More Trees for the March signups"
    assert matcher.rank(english, k=1)[0].name == "more-trees-automation"


def test_text_mostly_in_another_script_is_not_english() -> None:
    assert looks_foreign("нужна векторная база для rag")
    assert looks_foreign("пишу расширение для chrome на manifest v3")
    assert looks_foreign("θελω να φτιαξω ενα γραφημα")
    assert not looks_foreign("the β of each stock against the index")
