"""skilldeck.compat.skills_ref against the real skills-ref 0.1.1, side by side.

Every comparison runs the same input through both libraries and demands identical
results: return values, exception types and messages. The YAML emulation is also
checked alone (strictyaml hidden) on realistic frontmatter.
"""

from __future__ import annotations

import builtins
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skilldeck.compat import skills_ref as ours
from skilldeck.errors import SkillError as SkilldeckSkillError
from skilldeck.skills.format import reference as refyaml

reference = pytest.importorskip("skills_ref")
pytest.importorskip("skills_ref.parser")
pytest.importorskip("skills_ref.validator")
strictyaml = pytest.importorskip("strictyaml")


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """A comparable result: the value (dicts for SkillProperties) or the exception."""
    try:
        value = call()
    except Exception as e:  # the point is to compare whatever is raised
        errors = getattr(e, "errors", None)
        return ("raised", (type(e).__name__, str(e), errors))
    if hasattr(value, "to_dict"):
        return ("value", value.to_dict())
    return ("value", value)


def _reference_function(func: str) -> Callable[..., Any]:
    """skills-ref keeps two public functions in submodules (parser, validator)."""
    for module in (reference, reference.parser, reference.validator):
        if hasattr(module, func):
            return getattr(module, func)  # type: ignore[no-any-return]
    raise AttributeError(func)


_REFERENCE_ERRORS = {"SkillError", "ParseError", "ValidationError"}


def same(func: str, *args: Any) -> tuple[str, Any]:
    theirs = outcome(lambda: _reference_function(func)(*args))
    mine = outcome(lambda: getattr(ours, func)(*args))
    if mine != theirs and theirs[0] == "raised" and theirs[1][0] not in _REFERENCE_ERRORS:
        # skills-ref itself crashed (e.g. a TypeError inside strictyaml on some
        # duplicate-key layouts): that is a bug we do not copy; ours must not crash.
        assert mine[0] == "value" or mine[1][0] in _REFERENCE_ERRORS, f"{func}{args!r}"
        return mine
    assert mine == theirs, f"{func}{args!r}"
    return mine


CASES: dict[str, bytes | str] = {
    "valid": "---\nname: valid\ndescription: A fine skill.\nlicense: MIT\n---\n# Body\n",
    "full": (
        "---\nname: full\ndescription: d\nlicense: Apache-2.0\ncompatibility: git\n"
        "allowed-tools: Read Bash(git diff:*)\nmetadata:\n  version: 1.10\n  ok: yes\n---\n"
    ),
    "missing-name": "---\ndescription: d\n---\n",
    "missing-description": "---\nname: missing-description\n---\n",
    "empty-description": "---\nname: empty-description\ndescription: ''\n---\n",
    "Upper": "---\nname: Upper\ndescription: d\n---\n",
    "mismatch": "---\nname: other-name\ndescription: d\n---\n",
    "bad--name-": "---\nname: bad--name-\ndescription: d\n---\n",
    "under_score": "---\nname: under_score\ndescription: d\n---\n",
    "long-description": f"---\nname: long-description\ndescription: {'x' * 1100}\n---\n",
    "long-name": f"---\nname: {'n' * 70}\ndescription: d\n---\n",
    "compat-list": "---\nname: compat-list\ndescription: d\ncompatibility:\n  - a\n---\n",
    "compat-long": f"---\nname: compat-long\ndescription: d\ncompatibility: {'c' * 501}\n---\n",
    "extra-fields": "---\nname: extra-fields\ndescription: d\nauthor: me\nversion: 1\n---\n",
    "flow": "---\nname: flow\ndescription: d\nallowed-tools: [Read, Grep]\n---\n",
    "flow-map": "---\nname: flow-map\ndescription: d\nmetadata: {a: b}\n---\n",
    "tag": "---\nname: tag\ndescription: !!str d\n---\n",
    "anchor": "---\nname: anchor\ndescription: &d d\nlicense: *d\n---\n",
    "alias-only": "---\nname: alias-only\ndescription: *d\n---\n",
    "duplicate": "---\nname: duplicate\ndescription: a\ndescription: b\n---\n",
    "indentation": "---\nname: indentation\ndescription: d\nmetadata:\n  a: b\nx:\n    c: d\n---\n",
    "syntax": "---\nname: syntax\ndescription: Use when: needed\n---\n",
    "unclosed": "---\nname: unclosed\ndescription: d\n",
    "no-frontmatter": "# Just markdown\n",
    "bom": b"\xef\xbb\xbf---\nname: bom\ndescription: d\n---\n",
    "crlf": b"---\r\nname: crlf\r\ndescription: d\r\n---\r\nbody\r\n",
    "dashes-inside": "---\nname: dashes-inside\ndescription: fast---safe\n---\n",
    "empty-frontmatter": "---\n---\nbody\n",
    "scalar-frontmatter": "---\nhello\n---\n",
    "list-frontmatter": "---\n- a\n- b\n---\n",
    "bad-utf8": b"---\nname: bad-utf8\ndescription: d\n---\n\xff\n",
    "control-char": "---\nname: control-char\ndescription: bell\x07\n---\n",
    "block-scalars": (
        "---\nname: block-scalars\ndescription: >\n  folded\n  text\nlicense: |\n  MIT\n---\n"
    ),
    "null-values": "---\nname: null-values\ndescription: d\nlicense: ~\ncompatibility:\n---\n",
    "merge": "---\nname: merge\ndescription: d\nmetadata:\n  <<:\n    a: b\n  c: d\n---\n",
    "unicode-名前": "---\nname: unicode-名前\ndescription: d\n---\n",
    "metadata-list": "---\nname: metadata-list\ndescription: d\nmetadata:\n  - a\n---\n",
    "name-list": "---\nname:\n  - a\ndescription: d\n---\n",
    "quoted": "---\nname: \"quoted\"\ndescription: 'it''s \"fine\"'\n---\n",
}


@pytest.fixture(scope="module")
def skills(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("compat")
    folders: dict[str, Path] = {}
    for name, content in CASES.items():
        folder = root / name
        folder.mkdir()
        data = content.encode("utf-8") if isinstance(content, str) else content
        (folder / "SKILL.md").write_bytes(data)
        folders[name] = folder
    lower = root / "lower"
    lower.mkdir()
    (lower / "skill.md").write_text("---\nname: lower\ndescription: d\n---\n", encoding="utf-8")
    folders["lower"] = lower
    (root / "empty-dir").mkdir()
    folders["empty-dir"] = root / "empty-dir"
    (root / "a-file").write_text("x", encoding="utf-8")
    folders["a-file"] = root / "a-file"
    folders["nonexistent"] = root / "does-not-exist"
    return folders


def test_public_api_matches() -> None:
    assert set(reference.__all__) <= set(ours.__all__)
    assert set(ours.__all__) == {*reference.__all__, "parse_frontmatter", "validate_metadata"}
    assert issubclass(ours.ParseError, ours.SkillError)
    assert issubclass(ours.ValidationError, ours.SkillError)
    assert issubclass(ours.SkillError, SkilldeckSkillError)
    assert ours.ValidationError("m").errors == ["m"]
    assert ours.ValidationError("m", ["a", "b"]).errors == ["a", "b"]


@pytest.mark.parametrize("case", [*CASES, "lower", "empty-dir", "a-file", "nonexistent"])
def test_validate_and_read_properties_match(skills: dict[str, Path], case: str) -> None:
    same("validate", skills[case])
    same("read_properties", skills[case])
    if skills[case].is_dir():
        same("find_skill_md", skills[case])


def test_the_cases_cover_every_kind_of_outcome(skills: dict[str, Path]) -> None:
    results = [outcome(lambda c=c: ours.read_properties(skills[c])) for c in CASES]
    raised = {detail[0] for kind, detail in results if kind == "raised"}
    assert {"ParseError", "ValidationError", "UnicodeDecodeError", "AttributeError"} <= raised
    validated = [outcome(lambda c=c: ours.validate(skills[c])) for c in CASES]
    messages = [m for kind, value in validated if kind == "value" for m in value]
    assert any("JSONesque flow mapping" in m for m in messages)
    assert any("Duplicate key" in m for m in messages)
    assert any("indentation inconsistent" in m for m in messages)
    assert any("Unexpected fields in frontmatter: author, version." in m for m in messages)


def test_string_paths_work_too(skills: dict[str, Path]) -> None:
    same("validate", str(skills["valid"]))
    same("read_properties", str(skills["valid"]))


def test_to_prompt_matches(skills: dict[str, Path]) -> None:
    good = [skills[c] for c in ("valid", "full", "Upper", "quoted", "lower", "crlf")]
    assert same("to_prompt", good)[0] == "value"
    same("to_prompt", [])
    same("to_prompt", [skills["valid"], skills["missing-name"]])  # raises like the original


@pytest.mark.parametrize(
    "metadata",
    [
        {"name": "x", "description": "d"},
        {"name": "X_y", "description": "", "compatibility": ["a"]},
        {"name": 3, "description": None, "other": 1, "more": 2},
        {"description": "d" * 2000, "compatibility": "c" * 600},
        {},
        {"name": "  ", "description": "  "},
    ],
)
def test_validate_metadata_matches(metadata: dict[str, Any], tmp_path: Path) -> None:
    same("validate_metadata", dict(metadata))
    same("validate_metadata", dict(metadata), tmp_path / "x")


@pytest.mark.parametrize("content", [*(c for c in CASES.values() if isinstance(c, str))])
def test_parse_frontmatter_matches(content: str) -> None:
    same("parse_frontmatter", content)


# ---- generated frontmatter -----------------------------------------------------------

_VALUES = st.sampled_from(
    [
        "word", "two words", "1.0", "1.10", "yes", "~", "null", "", "'it''s'", '"dq \\u00e9"',
        "[a, b]", "{a: b}", "[]", "&a v", "*a", "!!str x", "R&D!", "a:b", "x # comment",
        "Use when: x", "|\n  block\n  text", ">-\n  folded", "- item", "@at", "`tick",
        "🙂 ünï", "---", "...", "\t", "x\n  continued", '"unterminated',
    ]
)  # fmt: skip
_KEYS = st.sampled_from(
    ["name", "description", "license", "compatibility", "metadata", "allowed-tools",
     "author", "dup", "dup", "<<", "? k", "'q'"]
)  # fmt: skip
_LINE = st.one_of(
    st.tuples(
        st.sampled_from(["", "  ", "    "]), _KEYS, st.sampled_from([": ", ":"]), _VALUES
    ).map(lambda t: "".join(t)),
    st.sampled_from(["", "# comment", "metadata:", "  - x"]),
)
FRONTMATTER = st.lists(_LINE, max_size=8).map(lambda lines: "\n".join(lines))


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(FRONTMATTER)
def test_generated_frontmatter_matches(frontmatter: str) -> None:
    content = f"---\n{frontmatter}\n---\nbody\n"
    same("parse_frontmatter", content)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(FRONTMATTER, st.sampled_from(["valid", "Upper", "other"]))
def test_generated_skills_validate_the_same(frontmatter: str, folder: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / folder
        path.mkdir()
        (path / "SKILL.md").write_text(f"---\n{frontmatter}\n---\n", encoding="utf-8")
        same("validate", path)
        same("read_properties", path)


# ---- the emulation alone (no strictyaml to hand malformed YAML to) ---------------------

_REALISTIC_VALUES = st.sampled_from(
    [
        "word", "two words", "1.0", "yes", "~", '"dq"', "'s''q'", "[a, b]", "{a: b}", "[]",
        "&anchor v", "!!str x", "R&D!", "a:b", "x #c", "|\n    block", ">-\n    folded",
        '"\\u00e9"', "ü 🙂",
    ]
)  # fmt: skip
_REALISTIC_KEYS = st.sampled_from(["name", "description", "metadata", "a", "b", "dup", "<<"])


def _entry(key: str, kind: str, indent: str, items: list[tuple[str, str]]) -> str:
    if kind == "scalar":
        return f"{key}: {items[0][1]}"
    if kind == "seq":
        return f"{key}:\n" + "\n".join(f"{indent}- {v}" for _, v in items)
    return f"{key}:\n" + "\n".join(f"{indent}{k}: {v}" for k, v in items)


REALISTIC = st.lists(
    st.builds(
        _entry,
        _REALISTIC_KEYS,
        st.sampled_from(["scalar", "seq", "map"]),
        st.sampled_from(["  ", "    "]),
        st.lists(st.tuples(_REALISTIC_KEYS, _REALISTIC_VALUES), min_size=1, max_size=3),
    ),
    max_size=7,
).map(lambda entries: "\n" + "\n".join(entries) + "\n")


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(REALISTIC)
def test_emulation_alone_matches_strictyaml(text: str) -> None:
    def theirs() -> Any:
        try:
            return strictyaml.load(text).data
        except strictyaml.YAMLError as e:
            raise refyaml.ReferenceYAMLError(str(e)) from e

    expected = outcome(theirs)
    assert outcome(lambda: refyaml.load_reference_yaml(text, delegate=False)) == expected


def test_without_strictyaml_the_common_errors_are_still_exact(
    monkeypatch: pytest.MonkeyPatch, skills: dict[str, Path]
) -> None:
    expected = {c: outcome(lambda c=c: reference.validate(skills[c]))[1] for c in CASES}
    real_import = builtins.__import__

    def no_strictyaml(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "strictyaml":
            raise ImportError("hidden for this test")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_strictyaml)
    exact = [c for c in CASES if c not in ("syntax", "alias-only", "bad-utf8", "control-char")]
    assert {c: ours.validate(skills[c]) for c in exact} == {c: expected[c] for c in exact}
    # genuine syntax errors keep the reference's prefix and the problem sentence
    (message,) = ours.validate(skills["syntax"])
    assert message.startswith("Invalid YAML in frontmatter: ")
    assert "mapping values are not allowed here" in message
