"""Name evidence on the real corpus: a request naming a product's wrapper ranks it
first, and everyday sentences whose words happen to be product names ("felt",
"brilliant", "doctor"; "Sage", "Harvest" as people and places) are not hinted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from bench.routing.corpus import load_corpus

from skilldeck.config import HintSettings
from skilldeck.skills.routing import SkillMatcher
from skilldeck.skills.routing._embeddings import load_embedder

pytestmark = pytest.mark.corpus
CORPUS = Path(os.environ.get("SKILLDECK_CORPUS", Path(__file__).parents[3] / "shared" / "corpus"))


@pytest.fixture(scope="module")
def matcher(tmp_path_factory: pytest.TempPathFactory) -> SkillMatcher:
    if not CORPUS.is_dir():
        pytest.skip(f"skill corpus not found at {CORPUS}")
    cache = tmp_path_factory.mktemp("routing")
    return SkillMatcher.from_skills(
        load_corpus(CORPUS), cache_path=cache / "index.npz", embedder=load_embedder(cache)
    )


@pytest.mark.parametrize(
    ("request_text", "skill"),
    [
        ("Render our Docmosis contract template into a PDF with this JSON", "docmosis-automation"),
        ("send a whatsapp message through 2chat to the waitlist", "-2chat-automation"),
        (
            "Add these 40 prospects to the 'Q1 fintech' campaign in PersistIQ",
            "persistiq-automation",
        ),
        # brands of common words, written as names (not rare: brand evidence)
        (
            "send Async Interview invitations to the five shortlisted backend candidates"
            " with 3 recorded video questions about system design",
            "async-interview-automation",
        ),
        ("use remove.bg to cut the background out of every jpg in ./shots", "remove-bg-automation"),
        ("In my Google Drive, move every PDF in 'Invoices' into 'Paid'", "googledrive-automation"),
        # non-English: the rare name word is the semantic half (no cosine)
        ("Leg bitte in sevDesk eine Rechnung für die Müller GmbH an", "sevdesk-automation"),
        ("Найди ИНН и КПП компании по названию через DaData", "dadata-ru-automation"),
        # one plain word right after a tool word; a wrapper word inside a brand run
        ("in Plain, list the open support threads from acme.io customers", "plain-automation"),
        ("put Maria Lopez into the pipeline for the accountant job in CATS", "cats-automation"),
        ("count words per page through the Claude API", "claude-api"),
    ],
)
def test_a_named_product_ranks_its_wrapper_first(
    matcher: SkillMatcher, request_text: str, skill: str
) -> None:
    assert matcher.rank(request_text, k=1)[0].name == skill


@pytest.mark.parametrize(
    "request_text",
    [
        "I felt tired all day, any tips to sleep better?",
        "the doctor said I need more rest",
        "sharpen the needle on my record player",
        "count to twelve in German",
        "I'm keen to learn the guitar",
        "remind me on Monday to call the dentist",
        "we had a happy time at the Parallel park last May",
        # one English word with a capital is a person or a place as often as a brand
        "Remind me that Sage is coming over",
        "Let's meet at Harvest Bar on Friday",
        "the Front door is stuck again",
        "Tell Kit I'll be late for dinner",
        "Did you see the Linear Park in Berlin?",
        # a role is no product, a version no name, a title's article no part of one
        "My sister just got hired as a Data Scientist at a bank.",
        "We shipped v0 of the app last week.",
        "I'm reading a novel called The Odds this summer.",
        # a capital after a tool word, but a modifier, a person's, or past a comma
        "She was born in Gemini season, so she says",
        "Once the lights came on, Kit started to cry",
        "we stayed in Kit's flat for a week",
    ],
)
def test_everyday_words_that_name_products_are_not_hinted(
    matcher: SkillMatcher, request_text: str
) -> None:
    best = matcher.rank(request_text, k=1)
    assert not best or best[0].score < HintSettings().threshold, best[0]
