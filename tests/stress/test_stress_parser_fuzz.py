"""The parser and validator under load: many more generated and mutated SKILL.md
files than the unit tests try, 100 MB files, and discovery of a large tree mixing
hostile and good skills.

Bounds are checked the way the issue asks: a generous per-case timeout guard
(pytest-timeout), memory by ``tracemalloc`` peak, and the bytes actually read from disk
by ``/proc/self/io`` (``rchar``) — never timing asserts.
"""

from __future__ import annotations

import os
import random
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
import stress_helpers as H
from hardening_helpers import (
    HOSTILE_FRONTMATTER,
    check_parse,
    good_skill,
    known_bug,
    write_skill,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skilldeck.config import load_settings
from skilldeck.errors import SkillParseError
from skilldeck.skills.discovery import bundled_root
from skilldeck.skills.format import load_skill, parse_skill_md
from skilldeck.skills.registry import EntryStatus, SkillRegistry

EXAMPLES = H.scale(500, 5000)
MUTANTS = H.scale(5000, 50000)
MB = 1024 * 1024
SEED = int(os.environ.get("SKILLDECK_STRESS_SEED", "0")) or random.randrange(1 << 30)
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
_ALPHABET = st.sampled_from(
    [*"abz09 -:_.#&*!|>'\"%@`[]{},?\n\t\r\\", "\x00", "\ufeff", "\u2028", "\x85", "é", "💥"]
)


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("stress-fuzz") / "fuzz-skill"
    folder.mkdir()
    return folder


def _seeds(corpus_limit: int = 400) -> list[bytes]:
    """Real SKILL.md files to mutate: the corpus when present, else the bundled skills."""
    corpus = H.REPO.parent / "shared" / "corpus"
    files = sorted(corpus.rglob("SKILL.md"))[:corpus_limit] if corpus.is_dir() else []
    files += sorted(bundled_root().rglob("SKILL.md"))
    seeds = [p.read_bytes() for p in files if p.stat().st_size < 64 * 1024]
    seeds += [f"---\n{t}---\nbody\n".encode() for t in HOSTILE_FRONTMATTER.values()]
    return seeds


_TOKENS = [b"---\n", b"\n", b": ", b"- ", b"&a ", b"*a", b"[", b"]", b"{", b"}", b"!!python/x ",
           b"\t", b"\x00", b"\xff", b"\xef\xbb\xbf", b"\r\n", b"'", b'"', b"|\n", b">\n",
           b"<<: *a\n", b"? ", b"%YAML 1.1\n", b"name: ", b"description: ", b"1" * 5000,
           b"  " * 200]  # fmt: skip


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to four random edits: flip, insert a YAML token, delete, duplicate, truncate."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        pos = rng.randint(0, len(out))
        op = rng.randrange(5)
        if op == 0 and out:
            out[min(pos, len(out) - 1)] = rng.randrange(256)
        elif op == 1:
            out[pos:pos] = rng.choice(_TOKENS)
        elif op == 2:
            del out[pos : pos + rng.randint(1, 64)]
        elif op == 3:
            out[pos:pos] = out[pos : pos + rng.randint(1, 256)] * rng.randint(2, 20)
        else:
            del out[pos:]
    return bytes(out)


@pytest.mark.timeout(900)
def test_mutated_real_skills(fuzz_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(fuzz_dir)
    rng = random.Random(SEED)
    seeds = _seeds()
    for _ in range(MUTANTS):
        check_parse(write_skill(fuzz_dir, mutate(rng.choice(seeds), rng)))
    assert not (fuzz_dir / "PWNED").exists()
    H.add(fuzz_cases=MUTANTS, fuzz_cases_mutated=MUTANTS)


@pytest.mark.timeout(900)
@FUZZ
@given(data=st.binary(max_size=8192))
def test_generated_bytes(fuzz_dir: Path, data: bytes) -> None:
    check_parse(write_skill(fuzz_dir, data))
    H.add(fuzz_cases=1, fuzz_cases_generated=1)


@pytest.mark.timeout(900)
@FUZZ
@given(text=st.text(alphabet=_ALPHABET, max_size=2000), body=st.binary(max_size=256))
def test_generated_yaml_text(fuzz_dir: Path, text: str, body: bytes) -> None:
    raw = b"---\n" + text.encode("utf-8", "surrogatepass") + b"\n---\n" + body
    check_parse(write_skill(fuzz_dir, raw))
    H.add(fuzz_cases=1, fuzz_cases_generated=1)


# ---- 100 MB files ------------------------------------------------------------------------


def _rchar() -> int | None:
    try:
        with open("/proc/self/io", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("rchar:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _sparse(path: Path, head: bytes, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(head)
        fh.truncate(size)
    return path


def _generated(path: Path, head: bytes, line: bytes, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    chunk = line * max(1, MB // len(line))
    with open(path, "wb") as fh:
        fh.write(head)
        while fh.tell() < size:
            fh.write(chunk)
    return path


HUNDRED_MB = 100 * MB
GOOD_HEAD = b"---\nname: big-skill\ndescription: A skill with a 100 MB body.\n---\n"
BIG_CASES = {
    # case: (builder, expected code or None for "loads")
    "sparse-body": (lambda p: _sparse(p, GOOD_HEAD, HUNDRED_MB), None),
    "generated-body": (lambda p: _generated(p, GOOD_HEAD, b"# body line\n", HUNDRED_MB), None),
    "unclosed-key-lines": (lambda p: _generated(p, b"---\n", b"key: value\n", HUNDRED_MB), "SD006"),
    "one-huge-scalar": (
        lambda p: _generated(p, b"---\ndescription: ", b"a" * 4096, HUNDRED_MB), "SD006"
    ),
    "sparse-nul-after-open": (lambda p: _sparse(p, b"---\n", HUNDRED_MB), "SD006"),
    "sparse-nul": (lambda p: _sparse(p, b"", HUNDRED_MB), "SD001"),
    "no-newline": (lambda p: _generated(p, b"---", b"-" * 4096, HUNDRED_MB), "SD001"),
}  # fmt: skip


@pytest.fixture
def big_file(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    path = tmp_path / "big-skill" / "SKILL.md"
    yield path
    path.unlink(missing_ok=True)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", sorted(BIG_CASES))
def test_hundred_megabyte_files_read_only_the_frontmatter(case: str, big_file: Path) -> None:
    build, expected = BIG_CASES[case]
    build(big_file)
    assert big_file.stat().st_size >= HUNDRED_MB
    before = _rchar()
    tracemalloc.start()
    try:
        try:
            parsed = parse_skill_md(big_file)
            code = None
        except SkillParseError as e:
            parsed, code = None, e.code
        skill, diagnostics = load_skill(big_file)  # level 1 only: the body stays unread
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    after = _rchar()
    assert code == expected, (case, code)
    assert (skill is not None) == (expected is None), diagnostics
    if parsed is not None:
        assert parsed.body_offset == len(GOOD_HEAD)
    assert peak < 16 * MB, f"{case}: {peak / MB:.1f} MB"
    if before is not None and after is not None:
        assert after - before < 4 * MB, f"{case}: read {(after - before) / MB:.1f} MB"
    H.add(fuzz_cases=1, fuzz_cases_100mb=1)


# ---- discovery of a large hostile tree -----------------------------------------------


def _loads_cleanly(md: Path) -> bool:
    try:
        load_skill(md)
    except Exception as e:
        if known_bug(e) is None:
            raise
        return False
    return True


@pytest.mark.timeout(900)
def test_discovery_of_a_large_mixed_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    rng = random.Random(SEED + 1)
    root = tmp_path / "root"
    good = [f"good-{i:04d}" for i in range(H.scale(50, 200))]
    for name in good:
        good_skill(root, name)
    seeds = _seeds(100)
    hostile = H.scale(300, 3000)
    for i in range(hostile):
        while True:  # a mutant hitting a known crash would abort the whole scan: redraw
            md = write_skill(root / f"hostile-{i:05d}", mutate(rng.choice(seeds), rng))
            if check_parse(md) is not None or _loads_cleanly(md):
                break
    settings = load_settings(workspace=tmp_path, home=tmp_path / "home")
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True)
    loaded = {s.folder.name for s in registry.list(include_disabled=True)}
    assert set(good) <= loaded
    entries = registry.entries()
    accounted = {e.folder.name for e in entries}
    missing = {p.parent.name for p in root.glob("*/SKILL.md")} - accounted - loaded
    assert not missing, sorted(missing)[:10]
    invalid = [e for e in entries if e.status is EntryStatus.INVALID]
    for entry in invalid:
        assert entry.skill_md is not None and entry.skill_md.is_file()
        assert entry.errors and all(d.code.startswith("SD") for d in entry.errors)
    assert not (tmp_path / "PWNED").exists()
    H.add(fuzz_cases=hostile, discovery_hostile_skills=hostile,
          discovery_invalid_reported=len(invalid), discovery_good_loaded=len(good))  # fmt: skip
