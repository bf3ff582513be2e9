"""The numpy-free warm ranking (:func:`warm_rank`) ranks exactly as the matcher, reads
only a valid cache of the current skills, declines what only the matcher can do, and
the cache key changes with every change to a skill."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import skilldeck.skills.routing.match as match_mod
from skilldeck.config import Settings, load_settings
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.routing import SkillMatcher, warm_rank
from skilldeck.skills.routing._basics import BM25FParams, cache_key, identity, index_path
from skilldeck.skills.routing._wordllama import TokenCache

#: skills with shared words, duplicates (equal scores) and long bodies, so ties, the
#: float32 rounding and the k-th place are all exercised
CATALOG = {
    "pdf-tools": ("Extract text and tables from PDF files.", "Use pdfplumber. " * 40),
    "pdf-tools-copy": ("Extract text and tables from PDF files.", "Use pdfplumber. " * 40),
    "pdf-forms": ("Fill PDF forms and merge PDF documents.", "Forms, fields, text."),
    "git-commit": ("Write commit messages for staged changes.", "Run git diff --staged."),
    "table-report": ("Summarise a CSV table as a text report.", "Tables and text. " * 9),
    "slack-gif": ("Create animated GIFs for Slack.", "Keep frames small."),
    "invoice-chase": ("Follow up with customers about unpaid invoices.", "Draft emails."),
}
QUERIES = [
    "extract the text and tables from a PDF file",
    "pdf",
    "text",
    "commit message for my staged changes",
    "resume le texte du document pdf",
    "kangaroo",
    "",
    "the a of",
    "table text pdf report forms",
]


def write_skill(root: Path, name: str, description: str, body: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    md = folder / "SKILL.md"
    md.write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n", "utf-8")
    return md


@pytest.fixture
def root(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    for name, (description, body) in CATALOG.items():
        write_skill(skills, name, description, body)
    return skills


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(home=tmp_path / "home", workspace=tmp_path)


@pytest.fixture(autouse=True)
def _fresh_memo() -> None:
    match_mod._INDEX_MEMO.clear()
    match_mod._MATCHER_MEMO.clear()


def registry_for(settings: Settings, root: Path) -> SkillRegistry:
    return SkillRegistry.discover(settings, roots=[root], no_defaults=True)


def as_rows(matches: list[match_mod.Match] | None) -> list[tuple[str, float, str]]:
    assert matches is not None, "warm_rank declined"
    return [(m.name, m.score, str(m.skill.folder)) for m in matches]


@pytest.mark.parametrize("k", [1, 2, 3, 100])
def test_ranks_and_scores_exactly_as_the_matcher(settings: Settings, root: Path, k: int) -> None:
    registry = registry_for(settings, root)
    matcher = SkillMatcher.for_registry(registry)  # builds the cache
    for query in QUERIES:
        assert as_rows(warm_rank(registry, query, k=k)) == as_rows(matcher.rank(query, k=k))


def test_equal_scores_at_the_kth_place_keep_the_lower_row(settings: Settings, root: Path) -> None:
    registry = registry_for(settings, root)
    SkillMatcher.for_registry(registry)
    (first,) = as_rows(warm_rank(registry, "pdfplumber", k=1))
    rows = [s.name for s in registry.list()]
    assert first[0] == min(("pdf-tools", "pdf-tools-copy"), key=rows.index)


def test_declines_without_a_cache_and_the_matcher_writes_one(
    settings: Settings, root: Path
) -> None:
    registry = registry_for(settings, root)
    assert warm_rank(registry, "pdf", k=3) is None
    SkillMatcher.for_registry(registry)
    assert warm_rank(registry, "pdf", k=3) is not None


def test_declines_a_damaged_cache(settings: Settings, root: Path) -> None:
    registry = registry_for(settings, root)
    SkillMatcher.for_registry(registry)
    (cache,) = (settings.cache_dir / "routing").glob("bm25f-*.npz")
    cache.write_bytes(cache.read_bytes()[:1000])
    assert warm_rank(registry, "pdf", k=3) is None


def test_declines_a_cache_of_other_skills_under_the_same_name(
    settings: Settings, root: Path
) -> None:
    registry = registry_for(settings, root)
    SkillMatcher.for_registry(registry)
    (cache,) = (settings.cache_dir / "routing").glob("bm25f-*.npz")
    other = root.parent / "other"
    write_skill(other, "weather", "Forecasts for a city.", "Met office.")
    other_registry = registry_for(settings, other)
    SkillMatcher.for_registry(other_registry)
    (other_cache,) = set((settings.cache_dir / "routing").glob("bm25f-*.npz")) - {cache}
    cache.write_bytes(other_cache.read_bytes())
    assert warm_rank(registry, "pdf", k=3) is None


def test_declines_when_embeddings_are_on(
    settings: Settings, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = registry_for(settings, root)
    SkillMatcher.for_registry(registry)
    monkeypatch.delenv("SKILLDECK_EMBEDDINGS")
    registry.settings.skills.match_embeddings = True
    assert warm_rank(registry, "pdf", k=3) is None


def test_declines_a_catalog_with_a_code_skill(settings: Settings, root: Path) -> None:
    (root / "pdf-forms" / "skill.py").write_text("# a code skill\n", encoding="utf-8")
    registry = registry_for(settings, root)
    assert any(s.kind.value == "code" for s in registry.list())
    SkillMatcher.for_registry(registry)
    assert warm_rank(registry, "pdf", k=3) is None


def test_nothing_to_rank(settings: Settings, root: Path) -> None:
    registry = registry_for(settings, root)
    assert warm_rank(registry, "pdf", k=0) == []


def key_of(settings: Settings, root: Path) -> str:
    registry = registry_for(settings, root)
    return cache_key(registry.fingerprint, BM25FParams(), identity(registry.list()))


def touch_later(path: Path) -> None:
    later = time.time() + 5  # a distinct mtime even on coarse file systems
    os.utime(path, (later, later))


def test_the_cache_key_changes_with_every_change_to_a_skill(settings: Settings, root: Path) -> None:
    keys = [key_of(settings, root)]
    md = root / "git-commit" / "SKILL.md"
    md.write_text(md.read_text(encoding="utf-8").replace("staged", "STAGED"), "utf-8")
    touch_later(md)  # same size, new content: the mtime tells
    keys.append(key_of(settings, root))
    md.write_text(md.read_text(encoding="utf-8") + "More body.\n", "utf-8")
    keys.append(key_of(settings, root))
    write_skill(root, "weather", "Forecasts for a city.", "Met office.")
    keys.append(key_of(settings, root))
    (root / "slack-gif").rename(root / "slack-gifs")
    keys.append(key_of(settings, root))
    registry_for(settings, root).disable("pdf-forms")
    keys.append(key_of(settings, root))
    assert len(set(keys)) == len(keys)
    assert key_of(settings, root) == keys[-1]  # and is stable while nothing changes


def test_after_a_change_the_warm_path_waits_for_the_new_index(
    settings: Settings, root: Path
) -> None:
    SkillMatcher.for_registry(registry_for(settings, root))
    md = write_skill(root, "git-commit", "Write commit messages.", "Name kangaroo branches.")
    touch_later(md)
    registry = registry_for(settings, root)
    assert warm_rank(registry, "kangaroo", k=3) is None
    assert [m.name for m in SkillMatcher.for_registry(registry).rank("kangaroo", k=3)] == [
        "git-commit"
    ]
    assert as_rows(warm_rank(registry, "kangaroo", k=3))[0][0] == "git-commit"


def test_the_index_path_is_the_matchers(settings: Settings, root: Path) -> None:
    registry = registry_for(settings, root)
    SkillMatcher.for_registry(registry)
    expected = index_path(settings.cache_dir, key_of(settings, root))
    assert list((settings.cache_dir / "routing").glob("bm25f-*.npz")) == [expected]


def test_a_warm_rank_does_not_import_numpy(settings: Settings, root: Path) -> None:
    SkillMatcher.for_registry(registry_for(settings, root))
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from skilldeck.config import load_settings\n"
        "from skilldeck.skills.registry import SkillRegistry\n"
        "from skilldeck.skills import routing\n"
        f"s = load_settings(home=Path({str(settings.home)!r}), workspace=Path('.'))\n"
        f"r = SkillRegistry.discover(s, roots=[Path({str(root)!r})], no_defaults=True)\n"
        "assert routing.warm_rank(r, 'pdf text', k=3)\n"
        "print('numpy' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


def test_the_token_cache_memory_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TokenCache, "MEMORY_WORDS", 3)
    cache = TokenCache(tmp_path / "tokens.sqlite")
    cache.put({"a": (1,), "b": (2,), "c": (3,)})
    assert len(cache._memory) == 3
    cache.put({"d": (4,)})
    assert cache._memory == {"d": (4,)}
    assert cache.get({"a", "d"}) == {"a": (1,), "d": (4,)}  # still in SQLite
    memoryless = TokenCache(None)
    for n in range(10):
        memoryless.put({f"w{n}": (n,)})
        assert len(memoryless._memory) <= 3
