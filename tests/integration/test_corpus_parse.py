"""The real corpus (~3,200 public skills): every SKILL.md loads or is reported precisely.

Counts are exact, measured on the corpus snapshot in ``../shared/corpus``; a change
in them means parsing or validation behaviour changed and must be explained.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from skilldeck.compat import skills_ref as compat
from skilldeck.skills.format import RULES, _yamlnodes, load_skill, parse_skill_md
from skilldeck.skills.format._fastyaml import parse_simple

pytestmark = pytest.mark.corpus

SKILL_FILES = 3222
#: names with a "/" (``meeting-sdk/linux``, ``r-lib/cli``): SD108, a name is never a path
LENIENT_INVALID = 13
LENIENT_WITH_WARNINGS = 1472
LENIENT_WARNINGS = {
    "SD101": 375,  # name differs from folder
    "SD104": 150,  # uppercase name
    "SD105": 2,  # hyphen rules
    "SD106": 195,  # spaces, underscores…
    "SD111": 2,  # description over 1024 chars
    "SD130": 1,  # metadata not a mapping
    "SD131": 2,  # nested metadata value
    "SD150": 787,  # unknown fields (`dependencies:`, 183 skills, is a skilldeck field)
    "SD162": 832,  # requires: {mcp: [...]}
}
STRICT_VALID = 1525
STRICT_ERRORS = {
    "SD101": 375,
    "SD104": 150,
    "SD105": 2,
    "SD106": 195,
    "SD108": 13,
    "SD111": 2,
    "SD130": 1,
    "SD150": 787,
    "SD151": 1678,  # 183 more: `dependencies:` is a skilldeck field, not a spec one
    "SD190": 1006,  # flow lists etc. that skills-ref's parser rejects
}


_FILES: dict[Path, list[Path]] = {}


@pytest.fixture
def skill_files(corpus: Path) -> list[Path]:
    """Every SKILL.md (or skill.md) under the corpus, listed once per session."""
    if corpus not in _FILES:
        names = ("SKILL.md", "skill.md")
        _FILES[corpus] = sorted(p for p in corpus.rglob("*") if p.name in names)
    return _FILES[corpus]


def _outcome(call: Any) -> tuple[str, Any]:
    try:
        value = call()
    except Exception as e:  # compared, not swallowed
        return ("raised", (type(e).__name__, str(e), getattr(e, "errors", None)))
    return ("value", value.to_dict() if hasattr(value, "to_dict") else value)


def test_every_skill_loads_or_is_reported_precisely(skill_files: list[Path]) -> None:
    assert len(skill_files) == SKILL_FILES
    loaded = skipped = with_warnings = 0
    severities: Counter[str] = Counter()
    for md in skill_files:
        skill, diagnostics = load_skill(md)  # never raises
        for d in diagnostics:
            assert d.code in RULES and d.rule == RULES[d.code]
            assert d.path == md and d.line is not None and d.line >= 1
            assert d.message
            severities[f"{d.code}:{d.severity}"] += 1
        if skill is None:
            skipped += 1
            assert any(d.is_error for d in diagnostics)
            continue
        loaded += 1
        with_warnings += bool(diagnostics)
        assert not any(d.is_error for d in diagnostics)
        assert skill.name and skill.description and skill.folder == md.parent
        assert skill.metadata.model_dump_json()  # JSON-safe, for the snapshot cache
    assert (loaded, skipped, with_warnings) == (
        SKILL_FILES - LENIENT_INVALID,
        LENIENT_INVALID,
        LENIENT_WITH_WARNINGS,
    )
    warnings = {k.split(":")[0]: v for k, v in severities.items() if k.endswith(":warning")}
    assert warnings == LENIENT_WARNINGS
    assert {k: v for k, v in severities.items() if not k.endswith(":warning")} == {
        "SD108:error": LENIENT_INVALID
    }


def test_strict_mode_agrees_with_skills_ref_on_every_skill(skill_files: list[Path]) -> None:
    reference = pytest.importorskip("skills_ref")
    valid = 0
    errors: Counter[str] = Counter()
    disagreements = []
    for md in skill_files:
        skill, diagnostics = load_skill(md, strict=True)
        errors.update(d.code for d in diagnostics if d.is_error)
        valid += skill is not None
        if (skill is not None) != (reference.validate(md.parent) == []):
            disagreements.append(md)
    assert disagreements == []
    assert valid == STRICT_VALID
    assert dict(errors) == STRICT_ERRORS


def test_line_parser_agrees_with_libyaml_on_the_corpus(skill_files: list[Path]) -> None:
    fast = 0
    for md in skill_files:
        raw = md.read_bytes()
        parsed = parse_skill_md(md)
        start = raw.index(b"\n") + 1
        end = raw.rindex(b"---", 0, parsed.body_offset)
        text = raw[start:end].decode("utf-8")
        simple = parse_simple(text, 2, _yamlnodes.plain_value, _yamlnodes.RETYPABLE_FIRST)
        full = _yamlnodes.compose_mapping(text, path=md, first_line=2)
        if simple is not None:
            fast += 1
            assert simple == full, md
        assert (parsed.data, parsed.key_lines, parsed.source_text) == full[:3]
    assert fast == 2899  # nine in ten frontmatters take the fast path


def test_bodies_start_after_the_frontmatter(skill_files: list[Path]) -> None:
    for md in skill_files[::50]:
        skill, _ = load_skill(md)
        assert skill is not None
        text = md.read_text(encoding="utf-8").replace("\r\n", "\n")
        closing = text.index("\n---", 3)
        assert skill.body == text[text.index("\n", closing + 1) + 1 :].strip("\n")


def test_compat_matches_skills_ref_on_every_skill(skill_files: list[Path]) -> None:
    reference = pytest.importorskip("skills_ref")
    folders = sorted({md.parent for md in skill_files})
    mismatches = []
    readable = []
    for folder in folders:
        for func in ("validate", "read_properties"):
            theirs = _outcome(lambda f=func, d=folder: getattr(reference, f)(d))
            mine = _outcome(lambda f=func, d=folder: getattr(compat, f)(d))
            if mine != theirs:
                mismatches.append((folder, func, mine, theirs))
        if _outcome(lambda d=folder: reference.read_properties(d))[0] == "value":
            readable.append(folder)
    assert mismatches == [], mismatches[:3]
    assert len(readable) == 2216
    assert compat.to_prompt(readable) == reference.to_prompt(readable)
