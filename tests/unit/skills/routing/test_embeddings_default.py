"""Embeddings on by default: the setting, the packaged model's arithmetic, the token
cache that spares the tokenizer, and the warm path ranking as the matcher does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import skilldeck.skills.routing.match as match_mod
from skilldeck.config import Settings, load_settings
from skilldeck.settings.view import SkillsView
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.routing import SkillMatcher, embeddings_on, warm_rank_embedded
from skilldeck.skills.routing import _embeddings as embeddings_mod
from skilldeck.skills.routing._embeddings import StaticEmbedder, TokenCache, load_embedder
from skilldeck.skills.routing._wordllama import query_vector

pytest.importorskip("wordllama")

CATALOG = {
    "pdf-tools": ("Extract text and tables from PDF files.", "Use pdfplumber. " * 20),
    "pdf-forms": ("Fill PDF forms and merge PDF documents.", "Forms, fields, text."),
    "git-commit": ("Write commit messages for staged changes.", "Run git diff --staged."),
    "churn-analysis": ("Find why subscribers cancel and who is at risk.", "Cohorts."),
    "borrow-checker": ("Fix Rust lifetime and ownership compiler errors.", "E0502."),
    "slack-gif": ("Create animated GIFs for Slack.", "Keep frames small."),
    "front-automation": ("Automate Front tasks via Rube MCP.", "Conversations, inboxes."),
    "front-desk": ("Greet guests at the front desk of a hotel.", "Check-in."),  # not rare
}
QUERIES = [
    "extract the tables from a PDF file",
    "customers keep cancelling after the trial",
    "the compiler is yelling about lifetimes",
    "commit message",
    "the team chats in Slack all day",  # a rare name word written as a name: evidence
    "make one with Slack Gif for the launch",  # a whole brand written as a name
    "Сделай анимированный GIF для Slack",  # another script: name evidence, no cosine
    "in Front, assign the billing conversations to Maria",  # a tool word: one-word brand
    "Назначь все разговоры в Front на Марию",  # a brand in Latin letters, another script
    "把账单对话都放进Front里",  # glued to CJK text
    "Tabellen aus einer PDF-Datei extrahieren",
    "kangaroo",
]


@pytest.fixture
def embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Undo the suite's SKILLDECK_EMBEDDINGS=none, with a fresh process-wide memo."""
    monkeypatch.delenv("SKILLDECK_EMBEDDINGS", raising=False)
    monkeypatch.setattr(embeddings_mod, "_EMBEDDERS", {})
    match_mod._INDEX_MEMO.clear()
    match_mod._MATCHER_MEMO.clear()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for name, (description, body) in CATALOG.items():
        folder = tmp_path / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n", "utf-8"
        )
    return tmp_path / "skills"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(home=tmp_path / "home", workspace=tmp_path)


def test_embeddings_are_on_by_default(settings: Settings, embeddings: None) -> None:
    assert settings.skills.match_embeddings is True
    view = SkillsView(None, {})  # type: ignore[arg-type]  # the CLI's light view
    assert view.match_embeddings is True
    assert embeddings_on(settings)


def test_the_environment_switch_turns_them_off(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLDECK_EMBEDDINGS", "none")
    assert not embeddings_on(settings)
    monkeypatch.delenv("SKILLDECK_EMBEDDINGS")
    settings.skills.match_embeddings = False
    assert not embeddings_on(settings)


def test_the_packaged_model_embeds_as_wordllama_does(tmp_path: Path) -> None:
    """Word by word through the token cache, the vectors equal wordllama's own."""
    import wordllama
    from safetensors import safe_open
    from wordllama.inference import WordLlamaInference

    folder = Path(wordllama.__file__).parent
    tokenizer = wordllama.WordLlama.load_tokenizer(
        folder / embeddings_mod.TOKENIZER, hf_model_id=None
    )
    with safe_open(str(folder / embeddings_mod.WEIGHTS), framework="np") as weights:
        reference = WordLlamaInference(weights.get_tensor("embedding.weight"), tokenizer)
    texts = [
        "extract tables from a pdf",
        "Rechnungen aus PDF-Dateien extrahieren, bitte!",
        "gh-fix-ci: parseHTTPResponse in snake_case, next.js 15",
        "表格 データ",
        "a much longer text about kubernetes deployments and helm charts " * 4,
        "  runs of\n\nwhitespace   count as one space ",
    ]
    ours = load_embedder(tmp_path).embed(texts)
    theirs = reference.embed([" ".join(text.split()) for text in texts], norm=True)
    assert ours.shape == (6, 256)
    assert np.allclose(ours, theirs, atol=1e-6)


def test_cached_words_spare_the_tokenizer(tmp_path: Path) -> None:
    first = load_embedder(tmp_path)
    vector = first.embed(["pull the tables out of this pdf"])
    assert isinstance(first, StaticEmbedder)

    def refuse() -> Any:
        raise AssertionError("the tokenizer was loaded for cached words")

    table = first._table
    files = list(tmp_path.glob("tokens-wordllama-*.sqlite"))
    assert len(files) == 1
    again = StaticEmbedder(table, refuse, TokenCache(files[0]))
    assert np.array_equal(again.embed(["pull the tables out of this pdf"]), vector)
    with pytest.raises(AssertionError, match="tokenizer was loaded"):
        again.embed(["an unseen word: zzyzx"])


def test_an_empty_text_embeds_to_zeros(tmp_path: Path) -> None:
    vectors = load_embedder(tmp_path).embed(["", "   "])
    assert not vectors.any()


def test_a_word_that_is_not_valid_unicode_has_no_tokens(tmp_path: Path) -> None:
    """Undecodable bytes in a command-line argument reach us as lone surrogates
    (``skilldeck skills match $'\\xff in Front'``); SQLite and the tokenizer refuse
    them, which used to end a match in a traceback. The word counts for nothing."""
    embedder = load_embedder(tmp_path)
    vectors = embedder.embed(["\udcff in Front", "in Front"])
    assert np.allclose(vectors[0], vectors[1])
    assert not embedder.embed(["\udcff"]).any()
    warm = query_vector("\udcff in Front", tmp_path)
    assert warm is not None and np.allclose(warm, vectors[1], atol=1e-5)


def test_the_warm_path_ranks_as_the_matcher(
    settings: Settings, root: Path, embeddings: None
) -> None:
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True)
    assert warm_rank_embedded(registry, QUERIES[0], k=3) is None  # no cache yet
    matcher = SkillMatcher.for_registry(registry)
    assert matcher._embedder is not None
    for query in QUERIES:
        expected = matcher.rank(query, k=4)
        warm = warm_rank_embedded(registry, query, k=4)
        assert warm is not None
        assert [m.name for m in warm] == [m.name for m in expected], query
        # numpy sums in float32, the warm path (no numpy) in float64
        assert [m.score for m in warm] == pytest.approx([m.score for m in expected], abs=1e-5)


def test_without_the_model_the_warm_path_leaves_a_foreign_request_to_the_matcher(
    settings: Settings, root: Path, embeddings: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no model the matcher ranks a non-English request by words alone; the warm
    path, which fuses name evidence only when the model is there, declines."""
    from skilldeck.skills.routing import _warm

    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True)
    SkillMatcher.for_registry(registry).rank(QUERIES[0], k=1)  # writes the caches
    foreign = "Сделай анимированный GIF для Slack"
    assert warm_rank_embedded(registry, foreign, k=3) is not None
    monkeypatch.setattr(_warm, "wordllama_folder", lambda: None)
    assert warm_rank_embedded(registry, foreign, k=3) is None


def test_embeddings_change_the_ranking_of_an_indirect_request(
    settings: Settings, root: Path, embeddings: None
) -> None:
    """The fused ranking is not the lexical one (a test that could not fail would
    pass with the embedder ignored)."""
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True)
    fused = SkillMatcher.for_registry(registry)
    lexical = SkillMatcher.from_skills(registry.list())
    query = "customers keep cancelling after the trial"
    assert [m.name for m in fused.rank(query, k=1)] == ["churn-analysis"]
    assert [m.score for m in fused.rank(query, k=6)] != [m.score for m in lexical.rank(query, k=6)]


def test_skills_match_uses_embeddings_by_default(tmp_path: Path, root: Path) -> None:
    """The real CLI, on the fast path, with and without --lexical."""
    env = {k: v for k, v in os.environ.items() if k != "SKILLDECK_EMBEDDINGS"}
    base = [sys.executable, "-m", "skilldeck.cli.main", "skills", "match"]
    args = ["--root", str(root), "--no-defaults", "--json", "--top", "2"]
    query = "customers keep cancelling after the trial"

    def run(*extra: str) -> str:
        done = subprocess.run(
            [*base, query, *args, *extra], env=env, capture_output=True, text=True, check=True
        )
        return done.stdout

    default, warm, lexical = run(), run(), run("--lexical")
    assert default == warm
    assert default != lexical


def test_scores_go_down_the_listing(settings: Settings, root: Path, embeddings: None) -> None:
    """The reported score is the one that ranks (a listing never reads 0.49, 0.50)."""
    matcher = SkillMatcher.for_registry(
        SkillRegistry.discover(settings, roots=[root], no_defaults=True)
    )
    for query in QUERIES:
        scores = [m.score for m in matcher.rank(query, k=6)]
        assert scores == sorted(scores, reverse=True), query


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.write_bytes(b""),
        lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
        lambda p: np.save(p, np.full((len(CATALOG), 256), np.nan, dtype=np.float32)),
        lambda p: np.save(p, np.full((len(CATALOG), 256), 7.0, dtype=np.float32)),
    ],
    ids=["empty", "truncated", "nan", "not-unit"],
)
def test_a_damaged_vector_cache_is_recomputed(
    settings: Settings, root: Path, embeddings: None, damage: Any
) -> None:
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True)
    expected = [(m.name, m.score) for m in SkillMatcher.for_registry(registry).rank("pdf", k=3)]
    (vectors,) = (settings.cache_dir / "routing").glob("*.vectors.npy")
    damage(vectors)
    match_mod._MATCHER_MEMO.clear()
    assert warm_rank_embedded(registry, "extract the tables", k=3) is None  # never trusted
    again = SkillMatcher.for_registry(registry).rank("pdf", k=3)
    assert [(m.name, m.score) for m in again] == expected
    assert warm_rank_embedded(registry, "pdf", k=3) is not None  # the file was rewritten


@pytest.mark.parametrize("damage", [b"", b"PK\x03\x04 not a zip", b"garbage"])
def test_a_damaged_index_is_rebuilt(
    settings: Settings, root: Path, embeddings: None, damage: bytes
) -> None:
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True)
    expected = [m.name for m in SkillMatcher.for_registry(registry).rank("pdf", k=3)]
    (index,) = (settings.cache_dir / "routing").glob("bm25f-*.npz")
    index.write_bytes(damage)
    match_mod._MATCHER_MEMO.clear()
    match_mod._INDEX_MEMO.clear()
    assert [m.name for m in SkillMatcher.for_registry(registry).rank("pdf", k=3)] == expected
