from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

import skilldeck.skills.routing.match as match_mod
from skilldeck.config import Settings, load_settings
from skilldeck.skills.code import CodeSkill, SkillContext, SkillResult
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.model.spec import SkillMetadata
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.routing import (
    Match,
    SkillMatcher,
    rank_for_disclosure,
    skill_fields,
    split_fused_names,
)
from skilldeck.skills.routing import _embeddings as embeddings_mod
from skilldeck.skills.routing._bm25f import BM25FIndex, BM25FParams
from skilldeck.skills.routing._embeddings import INSTALL_HINT, load_embedder, reciprocal_rank_fusion
from skilldeck.skills.routing._match_index import KEEP_CACHE_FILES

CATALOG = {
    "pdf-tools": (
        "Extract text and tables from PDF files, fill PDF forms, merge documents.",
        "# PDF\nUse pdfplumber to read pages. OCR scanned pages with tesseract.",
    ),
    "git-commit": (
        "Write conventional commit messages for staged changes.",
        "# Commits\nRun git diff --staged, then summarise the change in the subject line.",
    ),
    "slack-gif-creator": (
        "Create animated GIFs sized for Slack emoji and messages.",
        "# GIFs\nKeep frames under 64 colours; Slack limits emoji to 128 KB.",
    ),
    "brand-guidelines": (
        "Apply the company's colours and typography to documents.",
        "# Brand\nPrimary colour #cc785c. Headings use Styrene, body text Tiempos.",
    ),
    "invoice-chase": (
        "Follow up politely with customers about money they owe.",
        "# Dunning\nList unpaid invoices older than 30 days and draft reminder emails.",
    ),
}


def write_skill(root: Path, name: str, description: str, body: str, *, extra: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body}\n", encoding="utf-8"
    )
    return folder


@pytest.fixture
def skills_root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    for name, (description, body) in CATALOG.items():
        write_skill(root, name, description, body)
    return root


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(home=tmp_path / "home", workspace=tmp_path)


@pytest.fixture(autouse=True)
def _fresh_memo() -> None:
    match_mod._INDEX_MEMO.clear()
    match_mod._MATCHER_MEMO.clear()


def registry_for(settings: Settings, root: Path) -> SkillRegistry:
    return SkillRegistry.discover(settings, roots=[root], no_defaults=True)


def names(matches: Sequence[Match]) -> list[str]:
    return [m.name for m in matches]


def make_skill(name: str, description: str, body: str = "", **fields: object) -> Skill:
    meta = SkillMetadata(name=name, description=description, **fields)  # type: ignore[arg-type]
    folder = Path("/virtual") / name
    return Skill(meta, folder, folder / "SKILL.md").with_body(body)


# ---- ranking ------------------------------------------------------------------------


def test_ranks_the_obvious_skill_first(settings: Settings, skills_root: Path) -> None:
    matcher = SkillMatcher.for_registry(registry_for(settings, skills_root))
    assert names(matcher.rank("pull the text out of this pdf", k=3))[0] == "pdf-tools"
    assert names(matcher.rank("write a commit message", k=3))[0] == "git-commit"
    assert names(matcher.rank("make an animated gif for slack", k=3))[0] == "slack-gif-creator"


def test_the_body_counts(settings: Settings, skills_root: Path) -> None:
    # "unpaid invoices" and "reminder" only appear in invoice-chase's body
    matcher = SkillMatcher.for_registry(registry_for(settings, skills_root))
    assert names(matcher.rank("remind clients about unpaid invoices", k=1)) == ["invoice-chase"]
    assert names(matcher.rank("which fonts for headings", k=1)) == ["brand-guidelines"]


def test_a_word_in_the_name_outweighs_the_same_word_in_a_body() -> None:
    skills = [
        make_skill("changelog", "Release notes from history.", "Summarise merged work."),
        make_skill("notes", "Keep notes.", "Paste the changelog here. " + "Notes. " * 20),
    ]
    matcher = SkillMatcher.from_skills(skills)
    assert names(matcher.rank("changelog", k=2)) == ["changelog", "notes"]


def test_when_to_use_and_tags_are_indexed() -> None:
    skills = [
        make_skill("alpha", "Does things.", when_to_use="when the user mentions quarterly taxes"),
        make_skill("beta", "Does other things.", tags=["kubernetes", "helm"]),
        make_skill("gamma", "Unrelated."),
    ]
    matcher = SkillMatcher.from_skills(skills)
    assert names(matcher.rank("quarterly taxes", k=1)) == ["alpha"]
    assert names(matcher.rank("helm chart", k=1)) == ["beta"]


def test_scores_are_normalised_and_sorted(settings: Settings, skills_root: Path) -> None:
    matcher = SkillMatcher.for_registry(registry_for(settings, skills_root))
    matches = matcher.rank("extract text from pdf forms", k=5)
    scores = [m.score for m in matches]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 < s <= 1.0 for s in scores)
    assert matches[0].skill.name == matches[0].name == "pdf-tools"
    # a query sharing no word with any skill matches nothing
    assert matcher.rank("zebra xylophone", k=5) == []
    assert matcher.rank("", k=5) == []
    assert matcher.rank("pdf", k=0) == []


def test_unknown_words_lower_the_score_of_a_partial_match() -> None:
    fillers = [make_skill(f"filler-{i}", f"Unrelated helper number {i}.") for i in range(60)]
    matcher = SkillMatcher.from_skills(
        [make_skill("pdf-tools", "Extract text from PDF files."), *fillers]
    )
    full = matcher.rank("extract text from pdf files", k=1)[0].score
    partial = matcher.rank("extract text from pdf files of giraffe penguin zoology", k=1)[0].score
    assert partial < full


def test_k_limits_the_results(settings: Settings, skills_root: Path) -> None:
    matcher = SkillMatcher.for_registry(registry_for(settings, skills_root))
    assert len(matcher.rank("text documents colours messages", k=2)) == 2


def test_non_english_requests_reach_english_skills(settings: Settings, skills_root: Path) -> None:
    matcher = SkillMatcher.for_registry(registry_for(settings, skills_root))
    assert names(matcher.rank("¿Puedes extraer el texto de este PDF?", k=1)) == ["pdf-tools"]
    assert names(matcher.rank("帮我提取PDF里的文字", k=1)) == ["pdf-tools"]


def test_fused_product_names_are_split_for_matching() -> None:
    skills = [
        make_skill("googlecalendar-automation", "Automate tasks via the toolkit."),
        *[
            make_skill(f"filler-{i}", f"Google products and calendar invites, case {i}.")
            for i in range(4)
        ],
    ]
    documents = [skill_fields(s, body_chars=1000) for s in skills]
    split_fused_names(documents)
    assert {"googl", "calendar"} <= set(documents[0]["name"])
    matcher = SkillMatcher.from_skills(skills)
    assert "googlecalendar-automation" in names(matcher.rank("google calendar", k=5))


def test_disabled_skills_are_not_ranked(settings: Settings, skills_root: Path) -> None:
    settings.skills.disabled.append("pdf-tools")
    matcher = SkillMatcher.for_registry(registry_for(settings, skills_root))
    assert "pdf-tools" not in names(matcher.rank("extract pdf text", k=5))


def test_rank_for_disclosure_lists_relevant_names_first(
    settings: Settings, skills_root: Path
) -> None:
    matcher = SkillMatcher.for_registry(registry_for(settings, skills_root))
    ranked = rank_for_disclosure(matcher, "brand typography for my pdf documents")
    assert set(ranked[:2]) == {"brand-guidelines", "pdf-tools"}
    assert "git-commit" not in ranked  # zero score: not "relevant"
    assert rank_for_disclosure(matcher, "   ") == []
    assert len(rank_for_disclosure(matcher, "text documents colours", k=1)) == 1


# ---- the on-disk cache --------------------------------------------------------------


def test_index_is_cached_on_disk_by_fingerprint(settings: Settings, skills_root: Path) -> None:
    registry = registry_for(settings, skills_root)
    SkillMatcher.for_registry(registry)
    files = list((settings.cache_dir / "routing").glob("bm25f-*.npz"))
    assert len(files) == 1


def test_a_warm_query_never_reads_a_skill_body(
    settings: Settings, skills_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = SkillMatcher.for_registry(registry_for(settings, skills_root))
    expected = names(cold.rank("unpaid invoices reminder", k=3))
    match_mod._INDEX_MEMO.clear()  # a new process: only the disk cache is left

    def no_body(self: Skill) -> str:
        raise AssertionError(f"body of {self.name} read on a warm query")

    monkeypatch.setattr(Skill, "body", property(no_body))
    warm = SkillMatcher.for_registry(registry_for(settings, skills_root))
    assert names(warm.rank("unpaid invoices reminder", k=3)) == expected


def test_changing_a_skill_invalidates_the_index(settings: Settings, skills_root: Path) -> None:
    long_lived = registry_for(settings, skills_root)
    assert SkillMatcher.for_registry(long_lived).rank("kangaroo", k=3) == []
    md = skills_root / "git-commit" / "SKILL.md"
    text = md.read_text(encoding="utf-8") + "\nAlso names branches after kangaroos.\n"
    md.write_text(text, encoding="utf-8")
    later = time.time() + 5  # a distinct mtime even on coarse file systems
    os.utime(md, (later, later))
    # a new process (fresh discovery) sees the change…
    fresh = SkillMatcher.for_registry(registry_for(settings, skills_root))
    assert names(fresh.rank("kangaroo", k=3)) == ["git-commit"]
    # …and so does a long-lived registry once refreshed
    before = long_lived.fingerprint
    long_lived.refresh()
    assert long_lived.fingerprint != before
    assert names(SkillMatcher.for_registry(long_lived).rank("kangaroo", k=3)) == ["git-commit"]


def test_the_same_registry_state_reuses_its_matcher(settings: Settings, skills_root: Path) -> None:
    registry = registry_for(settings, skills_root)
    first = SkillMatcher.for_registry(registry)
    assert SkillMatcher.for_registry(registry) is first
    registry.disable("pdf-tools")
    second = SkillMatcher.for_registry(registry)
    assert second is not first
    assert "pdf-tools" not in names(second.rank("extract pdf text", k=5))


def test_any_object_with_the_registry_shape_works(settings: Settings, skills_root: Path) -> None:
    from dataclasses import dataclass

    real = registry_for(settings, skills_root)

    @dataclass  # eq=True: unhashable, so it cannot be memoised by identity
    class StandIn:
        settings: Settings
        fingerprint: str
        skills: list[Skill]

        def list(self, *, include_disabled: bool = False) -> list[Skill]:
            return self.skills

    stand_in = StandIn(settings, real.fingerprint, real.list())
    assert names(SkillMatcher.for_registry(stand_in).rank("commit message", k=1)) == ["git-commit"]


def test_a_new_skill_invalidates_the_index(settings: Settings, skills_root: Path) -> None:
    SkillMatcher.for_registry(registry_for(settings, skills_root))
    write_skill(skills_root, "weather", "Forecasts for a city.", "Use the met office API.")
    matcher = SkillMatcher.for_registry(registry_for(settings, skills_root))
    assert names(matcher.rank("weather forecast", k=1)) == ["weather"]


def test_a_corrupt_cache_file_is_rebuilt(settings: Settings, skills_root: Path) -> None:
    SkillMatcher.for_registry(registry_for(settings, skills_root))
    (cache,) = (settings.cache_dir / "routing").glob("bm25f-*.npz")
    cache.write_bytes(b"not an npz")
    match_mod._INDEX_MEMO.clear()
    matcher = SkillMatcher.for_registry(registry_for(settings, skills_root))
    assert names(matcher.rank("commit message", k=1)) == ["git-commit"]
    assert cache.stat().st_size > 100


def test_only_a_few_index_files_are_kept(tmp_path: Path) -> None:
    skills = [make_skill("one", "First skill.")]
    for i in range(6):
        path = tmp_path / f"bm25f-{i}.npz"
        SkillMatcher.from_skills(skills, cache_path=path)
        os.utime(path, (i, i))
    assert len(list(tmp_path.glob("bm25f-*.npz"))) <= KEEP_CACHE_FILES


def test_cache_of_other_skills_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "bm25f-x.npz"
    SkillMatcher.from_skills([make_skill("one", "About apples.")], cache_path=path)
    other = SkillMatcher.from_skills([make_skill("two", "About pears.")], cache_path=path)
    assert names(other.rank("pears", k=1)) == ["two"]


def test_index_round_trips_through_npz(tmp_path: Path) -> None:
    docs = [skill_fields(make_skill(n, d, b), body_chars=1000) for n, (d, b) in CATALOG.items()]
    index = BM25FIndex.build(docs, BM25FParams())
    index.save(tmp_path / "i.npz", meta={"k": 1})
    loaded, meta = BM25FIndex.load(tmp_path / "i.npz")
    assert meta == {"k": 1}
    assert loaded.vocab == index.vocab
    for query in (["pdf", "text"], ["commit"], ["nothing"]):
        a, ca = index.scores(query)
        b, cb = loaded.scores(query)
        assert np.array_equal(a, b) and ca == cb


def test_an_empty_catalog_ranks_nothing(tmp_path: Path) -> None:
    matcher = SkillMatcher.from_skills([], cache_path=tmp_path / "bm25f-empty.npz")
    assert matcher.rank("anything", k=3) == []


# ---- code skills: can_handle takes part -------------------------------------------


class WeatherSkill(CodeSkill):
    name = "weather-now"
    description = "Reports conditions for a place."

    async def execute(self, ctx: SkillContext) -> SkillResult:
        return SkillResult(success=True, output="sunny")

    def can_handle(self, query: str) -> float:
        return 1.0 if "umbrella" in query else 0.0


class BrokenSkill(CodeSkill):
    name = "broken-handler"
    description = "Extract text from PDF files too."

    async def execute(self, ctx: SkillContext) -> SkillResult:
        return SkillResult(success=True)

    def can_handle(self, query: str) -> float:
        raise RuntimeError("boom")


def test_can_handle_lifts_a_code_skill(settings: Settings, skills_root: Path) -> None:
    registry = registry_for(settings, skills_root)
    registry.register(WeatherSkill.to_skill(folder=skills_root.parent / "weather-now"))
    matcher = SkillMatcher.for_registry(registry)
    top = matcher.rank("do I need an umbrella today", k=3)
    assert names(top)[0] == "weather-now"
    assert top[0].score == pytest.approx(match_mod.CAN_HANDLE_WEIGHT, abs=0.05)
    assert "weather-now" not in names(matcher.rank("extract pdf text", k=5))


def test_a_failing_can_handle_does_not_break_ranking(settings: Settings, skills_root: Path) -> None:
    registry = registry_for(settings, skills_root)
    registry.register(BrokenSkill.to_skill(folder=skills_root.parent / "broken-handler"))
    matcher = SkillMatcher.for_registry(registry)
    assert "pdf-tools" in names(matcher.rank("extract text from pdf", k=3))


def test_handlers_can_be_passed_explicitly() -> None:
    skills = [make_skill("a", "Alpha things."), make_skill("b", "Beta things.")]
    matcher = SkillMatcher.from_skills(skills, handlers={"b": lambda q: 0.8, "nope": lambda q: 1})
    assert names(matcher.rank("alpha", k=2)) == ["b", "a"]


# ---- optional embeddings ------------------------------------------------------------


class FakeEmbedder:
    """Vectors from a tiny concept table, so "automobile" is close to "car"."""

    concepts = ("car", "fruit", "music")
    synonyms: ClassVar[dict[str, str]] = {
        "automobile": "car",
        "vehicle": "car",
        "apple": "fruit",
        "song": "music",
    }

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        rows = []
        for text in texts:
            words = [self.synonyms.get(w, w) for w in text.lower().replace(".", " ").split()]
            vec = np.array([float(c in words) for c in self.concepts]) + 1e-3
            rows.append(vec / np.linalg.norm(vec))
        return np.asarray(rows, dtype=np.float32)


def test_embeddings_are_fused_by_reciprocal_rank() -> None:
    skills = [
        make_skill("garage", "Repairs for your car."),
        make_skill("orchard", "Grow apple trees."),
        make_skill("vehicle-registry", "Register things."),
    ]
    embedder = FakeEmbedder()
    matcher = SkillMatcher.from_skills(skills, embedder=embedder)
    # no word of "automobile repairs" but "repairs" is in garage; the embedder adds meaning
    top = matcher.rank("automobile repairs", k=3)
    assert names(top)[0] == "garage"
    assert all(0.0 <= m.score <= 1.0 for m in top)
    # semantic-only matches appear even with no shared word
    assert "garage" in names(matcher.rank("automobile", k=3))
    matcher.rank("song", k=1)
    assert embedder.calls == 4  # skills embedded once, then one call per query


def test_non_english_requests_skip_the_english_only_embedder() -> None:
    embedder = FakeEmbedder()
    matcher = SkillMatcher.from_skills(
        [make_skill("garage", "Repairs for your car.")], embedder=embedder
    )
    assert names(matcher.rank("¿Dónde reparar mi car?", k=1)) == ["garage"]
    assert embedder.calls == 0


def test_skill_embeddings_are_cached_next_to_the_index(tmp_path: Path) -> None:
    skills = [make_skill("garage", "Repairs for your car."), make_skill("orchard", "Apples.")]
    first = FakeEmbedder()
    SkillMatcher.from_skills(skills, embedder=first, cache_path=tmp_path / "bm25f-a.npz").rank(
        "automobile", k=1
    )
    assert (tmp_path / "bm25f-a.vectors.npy").is_file()
    second = FakeEmbedder()
    again = SkillMatcher.from_skills(skills, embedder=second, cache_path=tmp_path / "bm25f-a.npz")
    assert names(again.rank("automobile", k=1)) == ["garage"]
    assert second.calls == 1  # only the query was embedded


def test_embeddings_setting_without_the_extra_warns_and_stays_lexical(
    settings: Settings,
    skills_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "wordllama", None)
    monkeypatch.setattr(embeddings_mod, "_EMBEDDERS", {})
    monkeypatch.delenv("SKILLDECK_EMBEDDINGS")
    settings.skills.match_embeddings = True
    with caplog.at_level("WARNING", logger="skilldeck.skills.routing._embeddings"):
        matcher = SkillMatcher.for_registry(registry_for(settings, skills_root))
    assert "pip install 'wordllama" in caplog.text
    assert names(matcher.rank("commit message", k=1)) == ["git-commit"]


def test_embeddings_setting_uses_the_embedder(
    settings: Settings, skills_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeEmbedder()
    monkeypatch.setattr(embeddings_mod, "default_embedder", lambda _dir: fake)
    monkeypatch.setattr(match_mod, "default_embedder", lambda _dir: fake)
    monkeypatch.delenv("SKILLDECK_EMBEDDINGS")
    settings.skills.match_embeddings = True
    matcher = SkillMatcher.for_registry(registry_for(settings, skills_root))
    matcher.rank("commit message", k=1)
    assert fake.calls == 2
    assert list((settings.cache_dir / "routing").glob("*.vectors.npy"))


def test_reciprocal_rank_fusion() -> None:
    assert reciprocal_rank_fusion([[1, 2, 3], [3, 1]]) == [1, 3, 2]
    assert reciprocal_rank_fusion([[5], [6]]) == [5, 6]  # tie: first ranking wins
    assert reciprocal_rank_fusion([]) == []


def test_missing_embeddings_extra_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "wordllama", None)
    monkeypatch.setattr(embeddings_mod, "wordllama_folder", lambda: None)
    with pytest.raises(ImportError, match=r"pip install 'wordllama") as info:
        load_embedder()
    assert str(info.value) == INSTALL_HINT


def test_packaged_embedder_loads_offline_without_torch() -> None:
    """The [embeddings] model loads from the installed wheel with the network closed
    (the suite's autouse guard refuses every connection) and never imports torch."""
    import subprocess
    import sys

    pytest.importorskip("wordllama")
    code = (
        "import socket, sys\n"
        "def refuse(*a, **k): raise OSError('network used')\n"
        "socket.socket.connect = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from skilldeck.skills.routing._embeddings import load_embedder\n"
        "e = load_embedder()\n"
        "texts = ['extract tables from a pdf', 'pull the tables out of a pdf', 'bake bread']\n"
        "v = e.embed(texts)\n"
        "print(v.shape, round(float(v[0] @ v[1]), 2) > round(float(v[0] @ v[2]), 2), "
        "'torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "(3, 256) True False"


def test_weighted_fusion_ranks_by_the_mixed_score(monkeypatch: pytest.MonkeyPatch) -> None:
    skills = [
        make_skill("garage", "Repairs for your car."),
        make_skill("repair-shop-finder", "Find repairs nearby: repairs, repairs."),
    ]
    matcher = SkillMatcher.from_skills(skills, embedder=FakeEmbedder())
    monkeypatch.setattr(embeddings_mod, "FUSION_WEIGHT", 0.0)  # lexical order only
    assert names(matcher.rank("automobile repairs", k=2))[0] == "repair-shop-finder"
    monkeypatch.setattr(embeddings_mod, "FUSION_WEIGHT", 0.9)  # meaning dominates
    assert names(matcher.rank("automobile repairs", k=2))[0] == "garage"


def test_the_core_does_not_import_torch() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from skilldeck.skills.routing.match import SkillMatcher; "
        "import skilldeck.skills.routing.hints; print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
