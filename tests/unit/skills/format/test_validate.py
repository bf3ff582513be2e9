"""Validation: every rule, lenient vs strict, codes and lines, load_skill, validate_path."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skilldeck.skills.format import (
    RULES,
    ValidationReport,
    build_metadata,
    load_skill,
    parse_skill_md,
    validate_path,
)
from skilldeck.skills.model.diagnostics import Diagnostic, Severity
from skilldeck.skills.model.skill import Skill, SkillKind, SkillSource

REPO = Path(__file__).resolve().parents[4]
BUNDLED = REPO / "src" / "skilldeck" / "bundled" / "skills"


def make(tmp_path: Path, frontmatter: str, *, folder: str = "demo", body: str = "# Body\n") -> Path:
    path = tmp_path / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(f"---\n{frontmatter.strip()}\n---\n{body}", encoding="utf-8")
    return path


def codes(diagnostics: list[Diagnostic]) -> list[tuple[str, str, int | None]]:
    return [(d.code, str(d.severity), d.line) for d in diagnostics]


def load(
    tmp_path: Path, frontmatter: str, *, strict: bool = False, folder: str = "demo"
) -> tuple[Skill | None, list[Diagnostic]]:
    return load_skill(make(tmp_path, frontmatter, folder=folder), strict=strict)


# ---- loading ---------------------------------------------------------------------


def test_minimal_skill_loads_with_offset_kind_and_source(tmp_path: Path) -> None:
    folder = make(tmp_path, "name: demo\ndescription: Does things.", body="Hello\n")
    skill, diagnostics = load_skill(folder, source=SkillSource.USER, root=tmp_path)
    assert diagnostics == []
    assert skill is not None
    assert (skill.name, skill.description, skill.kind) == ("demo", "Does things.", "prompt")
    assert skill.source is SkillSource.USER and skill.root == tmp_path
    assert skill.folder == folder and skill.skill_md == folder / "SKILL.md"
    assert skill.body == "Hello"


def test_load_accepts_the_file_itself_and_lowercase_name(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "skill.md").write_text("---\nname: demo\ndescription: d\n---\n", encoding="utf-8")
    by_folder, _ = load_skill(folder)
    by_file, _ = load_skill(folder / "skill.md")
    assert by_folder is not None and by_file is not None
    assert by_folder.skill_md == by_file.skill_md == folder / "skill.md"


def test_folder_without_skill_md(tmp_path: Path) -> None:
    skill, diagnostics = load_skill(tmp_path)
    assert skill is None
    assert [d.code for d in diagnostics] == ["SD009"]


def test_parse_errors_become_diagnostics_with_rule_and_line(tmp_path: Path) -> None:
    skill, diagnostics = load(tmp_path, "name: demo\ndescription: Use when: x")
    assert skill is None
    (d,) = diagnostics
    assert (d.code, d.rule, d.line, d.severity) == ("SD003", "invalid-yaml", 3, Severity.ERROR)
    assert d.path == tmp_path / "demo" / "SKILL.md"


def test_kind_detection(tmp_path: Path) -> None:
    code = make(tmp_path, "name: code\ndescription: d", folder="code")
    (code / "skill.py").write_text("", encoding="utf-8")
    script = make(
        tmp_path, "name: script\ndescription: d\nentrypoint: scripts/run.py", folder="script"
    )
    (script / "scripts").mkdir()
    (script / "scripts" / "run.py").write_text("", encoding="utf-8")
    assert load_skill(code)[0].kind is SkillKind.CODE  # type: ignore[union-attr]
    skill, diagnostics = load_skill(script)
    assert skill is not None and skill.kind is SkillKind.SCRIPT and diagnostics == []
    assert skill.metadata.entrypoint == "scripts/run.py"


# ---- name ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("a" * 65, "SD103"),
        ("Demo", "SD104"),
        ("-demo", "SD105"),
        ("demo-", "SD105"),
        ("de--mo", "SD105"),
        ("de_mo", "SD106"),
        ("de mo", "SD106"),
        ("de.mo", "SD106"),
    ],
)
def test_name_rules_warn_in_lenient_and_fail_in_strict(
    tmp_path: Path, name: str, code: str
) -> None:
    frontmatter = f"description: d\nname: '{name}'"
    skill, diagnostics = load(tmp_path, frontmatter, folder=name.replace("/", ""))
    assert skill is not None and skill.name == name
    assert (code, "warning", 3) in codes(diagnostics)
    strict_skill, strict_diags = load(tmp_path, frontmatter, strict=True, folder=name)
    assert strict_skill is None
    assert (code, "error", 3) in codes(strict_diags)


def test_name_messages_suggest_a_fix(tmp_path: Path) -> None:
    _, diagnostics = load(tmp_path, "name: My Skill\ndescription: d", folder="My Skill")
    messages = " ".join(d.message for d in diagnostics)
    assert "'my-skill'" in messages


def test_unicode_lowercase_names_are_allowed(tmp_path: Path) -> None:
    skill, diagnostics = load(tmp_path, "name: café-技能\ndescription: d", folder="café-技能")
    assert skill is not None and diagnostics == []
    assert load(tmp_path, "name: café-技能\ndescription: d", strict=True, folder="café-技能")[0]


def test_name_and_folder_are_compared_after_nfkc(tmp_path: Path) -> None:
    decomposed = "cafe\u0301"  # e + combining acute: NFKC turns it into é
    skill, diagnostics = load(tmp_path, "name: café\ndescription: d", folder=decomposed)
    assert skill is not None
    assert [d.code for d in diagnostics if d.code == "SD101"] == []


def test_name_mismatch(tmp_path: Path) -> None:
    skill, diagnostics = load(tmp_path, "name: other\ndescription: d", folder="demo")
    assert skill is not None and skill.name == "other"
    assert codes(diagnostics) == [("SD101", "warning", 2)]
    assert "rename the folder" in diagnostics[0].message
    skill, diagnostics = load(tmp_path, "name: other\ndescription: d", strict=True)
    assert skill is None and codes(diagnostics) == [("SD101", "error", 2)]


def test_missing_name_falls_back_to_folder_in_lenient_only(tmp_path: Path) -> None:
    skill, diagnostics = load(tmp_path, "description: d", folder="fallback")
    assert skill is not None and skill.name == "fallback"
    assert codes(diagnostics) == [("SD102", "warning", 1)]
    skill, diagnostics = load(tmp_path, "description: d", strict=True, folder="fallback")
    assert skill is None and codes(diagnostics) == [("SD102", "error", 1)]


def test_empty_name_is_missing(tmp_path: Path) -> None:
    skill, diagnostics = load(tmp_path, "name: ''\ndescription: d")
    assert skill is not None and skill.name == "demo"
    assert codes(diagnostics) == [("SD102", "warning", 2)]


def test_name_that_is_a_list_is_an_error(tmp_path: Path) -> None:
    skill, diagnostics = load(tmp_path, "name:\n  - a\ndescription: d")
    assert skill is None and codes(diagnostics) == [("SD107", "error", 2)]


def test_numeric_name_keeps_its_text(tmp_path: Path) -> None:
    skill, _ = load(tmp_path, "name: 1.10\ndescription: d", folder="1.10")
    assert skill is not None and skill.name == "1.10"


# ---- description, compatibility, metadata ------------------------------------------


@pytest.mark.parametrize(
    "frontmatter", ["name: demo", "name: demo\ndescription:", "name: demo\ndescription: '  '"]
)
def test_missing_or_empty_description_skips_the_skill(tmp_path: Path, frontmatter: str) -> None:
    for strict in (False, True):
        skill, diagnostics = load(tmp_path, frontmatter, strict=strict)
        assert skill is None
        assert [d.code for d in diagnostics] == ["SD110"]
        assert diagnostics[0].is_error


def test_description_limits(tmp_path: Path) -> None:
    long = "x" * 1025
    skill, diagnostics = load(tmp_path, f"name: demo\ndescription: {long}")
    assert skill is not None and codes(diagnostics) == [("SD111", "warning", 3)]
    assert load(tmp_path, f"name: demo\ndescription: {'x' * 1024}", strict=True)[0] is not None
    assert load(tmp_path, f"name: demo\ndescription: {long}", strict=True)[0] is None


def test_description_that_is_a_list(tmp_path: Path) -> None:
    skill, diagnostics = load(tmp_path, "name: demo\ndescription: [a, b]")
    assert skill is None and codes(diagnostics) == [("SD112", "error", 3)]


def test_description_is_stripped_and_keeps_retyped_text(tmp_path: Path) -> None:
    skill, _ = load(tmp_path, "name: demo\ndescription: 2024-01-01")
    assert skill is not None and skill.description == "2024-01-01"
    skill, _ = load(tmp_path, "name: demo\ndescription: |\n  Two\n  lines\n")
    assert skill is not None and skill.description == "Two\nlines"


def test_compatibility_rules(tmp_path: Path) -> None:
    ok, _ = load(tmp_path, f"name: demo\ndescription: d\ncompatibility: {'c' * 500}", strict=True)
    assert ok is not None and ok.metadata.compatibility == "c" * 500
    skill, diagnostics = load(tmp_path, f"name: demo\ndescription: d\ncompatibility: {'c' * 501}")
    assert skill is not None and codes(diagnostics) == [("SD120", "warning", 4)]
    skill, diagnostics = load(tmp_path, "name: demo\ndescription: d\ncompatibility:\n  - x")
    assert codes(diagnostics) == [("SD121", "warning", 4)]


def test_metadata_becomes_a_map_of_strings(tmp_path: Path) -> None:
    frontmatter = (
        "name: demo\ndescription: d\nmetadata:\n  version: 1.10\n  ok: yes\n  n: 3\n"
        "  none: ~\n  empty:\n  text: plain\n"
    )
    skill, diagnostics = load(tmp_path, frontmatter)
    assert skill is not None and diagnostics == []
    assert skill.metadata.metadata == {
        "version": "1.10",
        "ok": "yes",
        "n": "3",
        "none": "~",
        "empty": "",
        "text": "plain",
    }
    assert skill.version == "1.10"  # read from metadata when there is no top-level version


def test_metadata_nested_values_are_json_text_with_a_warning(tmp_path: Path) -> None:
    frontmatter = "name: demo\ndescription: d\nmetadata:\n  tags:\n    - a\n    - b\n"
    skill, diagnostics = load(tmp_path, frontmatter)
    assert skill is not None and skill.metadata.metadata == {"tags": '["a", "b"]'}
    assert codes(diagnostics) == [("SD131", "warning", 4)]


def test_metadata_that_is_not_a_mapping(tmp_path: Path) -> None:
    skill, diagnostics = load(tmp_path, "name: demo\ndescription: d\nmetadata: text")
    assert skill is not None and skill.metadata.metadata == {}
    assert codes(diagnostics) == [("SD130", "warning", 4)]
    assert load(tmp_path, "name: demo\ndescription: d\nmetadata: text", strict=True)[0] is None


# ---- allowed-tools and other lists -------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Read Grep", ["Read", "Grep"]),
        ("Read, Grep,Glob", ["Read", "Grep", "Glob"]),
        ("Bash(git diff:*) Read", ["Bash(git diff:*)", "Read"]),
        ("Bash(git diff:*), Bash(npm run test *)", ["Bash(git diff:*)", "Bash(npm run test *)"]),
        ('"Read(./src/**/*.{ts, tsx}) Write"', ["Read(./src/**/*.{ts, tsx})", "Write"]),
        ("\n  - Read\n  - Bash(git log:*)\n", ["Read", "Bash(git log:*)"]),
        ("[Read, Grep]", ["Read", "Grep"]),
        ("''", []),
    ],
)
def test_allowed_tools_forms(tmp_path: Path, value: str, expected: list[str]) -> None:
    skill, diagnostics = load(tmp_path, f"name: demo\ndescription: d\nallowed-tools: {value}")
    assert skill is not None and diagnostics == []
    assert skill.metadata.allowed_tools == expected


def test_allowed_tools_as_mapping_is_ignored_with_a_warning(tmp_path: Path) -> None:
    skill, diagnostics = load(tmp_path, "name: demo\ndescription: d\nallowed-tools:\n  a: b")
    assert skill is not None and skill.metadata.allowed_tools == []
    assert codes(diagnostics) == [("SD160", "warning", 4)]


def test_snake_case_spellings_are_accepted(tmp_path: Path) -> None:
    frontmatter = (
        "name: demo\ndescription: d\nallowed_tools: Read\ndisable_model_invocation: true\n"
        "when-to-use: Use for x\nargument_hint: '[file]'\nmax_turns: 4"
    )
    skill, diagnostics = load(tmp_path, frontmatter)
    assert skill is not None and diagnostics == []
    meta = skill.metadata
    assert meta.allowed_tools == ["Read"] and meta.disable_model_invocation is True
    assert (meta.when_to_use, meta.argument_hint, meta.max_turns) == ("Use for x", "[file]", 4)


def test_both_spellings_of_a_field(tmp_path: Path) -> None:
    skill, diagnostics = load(
        tmp_path, "name: demo\ndescription: d\nallowed-tools: A\nallowed_tools: B"
    )
    assert skill is not None and skill.metadata.allowed_tools == ["B"]
    assert codes(diagnostics) == [("SD152", "warning", 5)]


def test_duplicate_keys_warn_in_lenient_and_fail_in_strict(tmp_path: Path) -> None:
    frontmatter = "name: demo\ndescription: first\ndescription: second"
    skill, diagnostics = load(tmp_path, frontmatter)
    assert skill is not None and skill.description == "second"
    assert codes(diagnostics) == [("SD152", "warning", 4)]
    skill, diagnostics = load(tmp_path, frontmatter, strict=True)
    assert skill is None and codes(diagnostics) == [("SD152", "error", 4)]


# ---- YAML 1.1 surprises --------------------------------------------------------------


def test_yaml_retyping_is_undone_for_string_fields(tmp_path: Path) -> None:
    frontmatter = (
        "name: demo\ndescription: d\nversion: 1.0\nlicense: no\nargument-hint: [file] \n"
        "model: 3\nwhen_to_use: yes\ntags: [1.0, x]"
    )
    skill, diagnostics = load(tmp_path, frontmatter)
    assert skill is not None and diagnostics == []
    meta = skill.metadata
    assert (meta.version, meta.license, meta.argument_hint) == ("1.0", "no", "[file]")
    assert (meta.model, meta.when_to_use, meta.tags) == ("3", "yes", ["1.0", "x"])


def test_version_keeps_trailing_zeros(tmp_path: Path) -> None:
    skill, _ = load(tmp_path, "name: demo\ndescription: d\nversion: 1.10")
    assert skill is not None and skill.version == "1.10"


def test_argument_hint_as_block_list(tmp_path: Path) -> None:
    skill, _ = load(tmp_path, "name: demo\ndescription: d\nargument-hint:\n  - file\n  - mode")
    assert skill is not None and skill.metadata.argument_hint == "[file, mode]"


def test_booleans_numbers_and_bad_values(tmp_path: Path) -> None:
    frontmatter = (
        "name: demo\ndescription: d\nuser-invocable: 'no'\ndisable-model-invocation: maybe\n"
        "timeout: 30s\nmax-turns: 0"
    )
    skill, diagnostics = load(tmp_path, frontmatter)
    assert skill is not None
    meta = skill.metadata
    assert meta.user_invocable is False
    assert meta.disable_model_invocation is False  # bad value ignored
    assert meta.timeout == 30.0 and meta.max_turns is None
    assert codes(diagnostics) == [("SD160", "warning", 5), ("SD160", "warning", 7)]


def test_list_fields_accept_strings_and_lists(tmp_path: Path) -> None:
    frontmatter = (
        "name: demo\ndescription: d\ntags: a, b c\nrequires: [other-skill]\n"
        "paths: 'src/*.{ts,tsx} docs/**'\nexecution-protocol: |\n  Read the code\n  Write a plan\n"
        "preconditions:\n  - Tests pass"
    )
    skill, diagnostics = load(tmp_path, frontmatter)
    assert skill is not None and diagnostics == []
    meta = skill.metadata
    assert meta.tags == ["a", "b", "c"] and meta.requires == ["other-skill"]
    assert meta.paths == ["src/*.{ts,tsx}", "docs/**"]
    assert meta.execution_protocol == ["Read the code", "Write a plan"]
    assert meta.preconditions == ["Tests pass"]


def test_nested_list_items_are_refused(tmp_path: Path) -> None:
    skill, diagnostics = load(tmp_path, "name: demo\ndescription: d\ntags:\n  - a: b")
    assert skill is not None and skill.metadata.tags == []
    assert codes(diagnostics) == [("SD160", "warning", 4)]


# ---- skilldeck fields ------------------------------------------------------------


def test_requires_as_mapping(tmp_path: Path) -> None:
    frontmatter = (
        "name: demo\ndescription: d\nrequires:\n  skills: [helper]\n  bins: [git, jq]\n"
        "  env: GITHUB_TOKEN\n  mcp: [rube]"
    )
    skill, diagnostics = load(tmp_path, frontmatter)
    assert skill is not None
    meta = skill.metadata
    assert (meta.requires, meta.requires_bins, meta.requires_env) == (
        ["helper"],
        ["git", "jq"],
        ["GITHUB_TOKEN"],
    )
    assert meta.extra == {"requires": {"mcp": ["rube"]}}
    assert codes(diagnostics) == [("SD162", "warning", 4)]


def test_entrypoint_checks(tmp_path: Path) -> None:
    skill, diagnostics = load(tmp_path, "name: demo\ndescription: d\nentrypoint: scripts/x.py")
    assert skill is not None and codes(diagnostics) == [("SD170", "warning", 4)]
    skill, diagnostics = load(tmp_path, "name: demo\ndescription: d\nentrypoint: ../x.py")
    assert skill is None and codes(diagnostics) == [("SD171", "error", 4)]
    skill, diagnostics = load(tmp_path, "name: demo\ndescription: d\nentrypoint: /bin/sh")
    assert skill is None and codes(diagnostics) == [("SD171", "error", 4)]


def test_entrypoint_under_metadata_for_strict_skills(tmp_path: Path) -> None:
    folder = make(tmp_path, "name: demo\ndescription: d\nmetadata:\n  entrypoint: scripts/run.py")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "run.py").write_text("", encoding="utf-8")
    skill, diagnostics = load_skill(folder, strict=True)
    assert skill is not None and diagnostics == []
    assert skill.metadata.entrypoint == "scripts/run.py" and skill.kind is SkillKind.SCRIPT
    bad = make(
        tmp_path, "name: bad\ndescription: d\nmetadata:\n  entrypoint: ../../x", folder="bad"
    )
    skill, diagnostics = load_skill(bad)
    assert skill is None and codes(diagnostics) == [("SD171", "error", 4)]


def test_output_contract(tmp_path: Path) -> None:
    frontmatter = (
        "name: demo\ndescription: d\noutput-contract:\n  type: object\n  required: [summary]\n"
    )
    skill, diagnostics = load(tmp_path, frontmatter)
    assert skill is not None and diagnostics == []
    assert skill.metadata.output_contract == {"type": "object", "required": ["summary"]}
    skill, diagnostics = load(tmp_path, "name: demo\ndescription: d\noutput-contract:\n  type: 5")
    assert skill is not None and skill.metadata.output_contract is None
    assert codes(diagnostics) == [("SD160", "warning", 4)]
    assert "JSON Schema" in diagnostics[0].message


def test_context_values(tmp_path: Path) -> None:
    skill, diagnostics = load(tmp_path, "name: demo\ndescription: d\ncontext: fork\nagent: explore")
    assert skill is not None and diagnostics == []
    assert (skill.metadata.context, skill.metadata.agent) == ("fork", "explore")
    _, diagnostics = load(tmp_path, "name: demo\ndescription: d\ncontext: inline")
    assert codes(diagnostics) == [("SD160", "warning", 4)]


def test_unknown_fields_are_kept_and_warned_with_a_suggestion(tmp_path: Path) -> None:
    frontmatter = "name: demo\ndescription: d\nauthor: me\nallowed-tool: Read\ndate: 2024-01-01"
    skill, diagnostics = load(tmp_path, frontmatter)
    assert skill is not None
    assert skill.metadata.extra == {"author": "me", "allowed-tool": "Read", "date": "2024-01-01"}
    assert codes(diagnostics) == [
        ("SD150", "warning", 4),
        ("SD150", "warning", 5),
        ("SD150", "warning", 6),
    ]
    assert "did you mean `allowed-tools`" in diagnostics[1].message


def test_null_optional_fields_are_absent(tmp_path: Path) -> None:
    skill, diagnostics = load(tmp_path, "name: demo\ndescription: d\nlicense:\ntags:\nversion: ~")
    assert skill is not None and diagnostics == []
    assert (skill.metadata.license, skill.metadata.tags, skill.version) == (None, [], None)


# ---- strict mode -------------------------------------------------------------------


def test_strict_allows_only_the_spec_fields(tmp_path: Path) -> None:
    frontmatter = (
        "name: demo\ndescription: d\nlicense: MIT\ncompatibility: git\nmetadata:\n  a: b\n"
        "allowed-tools: Read"
    )
    skill, diagnostics = load(tmp_path, frontmatter, strict=True)
    assert skill is not None and diagnostics == []
    frontmatter = "name: demo\ndescription: d\nversion: '1'\nauthor: me\nallowed_tools: Read"
    skill, diagnostics = load(tmp_path, frontmatter, strict=True)
    assert skill is None
    assert codes(diagnostics) == [
        ("SD151", "error", 4),
        ("SD150", "error", 5),
        ("SD151", "error", 6),
    ]
    assert "allowed-tools, compatibility, description, license, metadata, name" in (
        diagnostics[1].message
    )
    assert "spelled `allowed-tools`" in diagnostics[2].message


@pytest.mark.parametrize(
    ("frontmatter", "line", "words"),
    [
        ("name: demo\ndescription: d\nallowed-tools: [Read, Grep]", 4, "flow"),
        ("name: demo\ndescription: d\nlicense: &l MIT", 4, "anchor"),
        ("name: demo\ndescription: !!str d", 3, "tag"),
        ("name: demo\ndescription: d\nmetadata:\n  a: b\nx:\n    c: d", 7, "indentation"),
    ],
)
def test_strict_rejects_yaml_the_reference_parser_rejects(
    tmp_path: Path, frontmatter: str, line: int, words: str
) -> None:
    skill, diagnostics = load(tmp_path, frontmatter, strict=True)
    assert skill is None
    reference = [d for d in diagnostics if d.code == "SD190"]
    assert [(d.line, d.severity) for d in reference] == [(line, Severity.ERROR)]
    assert words in reference[0].message


def test_strict_rejects_a_bom(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(b"\xef\xbb\xbf---\nname: demo\ndescription: d\n---\n")
    assert load_skill(folder)[0] is not None
    skill, diagnostics = load_skill(folder, strict=True)
    assert skill is None and codes(diagnostics) == [("SD191", "error", 1)]


def test_strict_rejects_dashes_inside_the_frontmatter(tmp_path: Path) -> None:
    frontmatter = "name: demo\ndescription: >\n  fast --- and safe"
    assert load(tmp_path, frontmatter)[0] is not None
    skill, diagnostics = load(tmp_path, frontmatter, strict=True)
    assert skill is None and codes(diagnostics) == [("SD192", "error", 4)]


def test_strict_rejects_a_body_that_is_not_utf8(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(b"---\nname: demo\ndescription: d\n---\n\nbad \xff\n")
    assert load_skill(folder)[0] is not None
    skill, diagnostics = load_skill(folder, strict=True)
    assert skill is None and codes(diagnostics) == [("SD193", "error", 6)]


def test_build_metadata_directly(tmp_path: Path) -> None:
    folder = make(tmp_path, "name: demo\ndescription: d\ntags: x")
    metadata, diagnostics = build_metadata(parse_skill_md(folder / "SKILL.md"), folder=folder)
    assert metadata is not None and metadata.tags == ["x"] and diagnostics == []
    metadata, diagnostics = build_metadata(
        parse_skill_md(folder / "SKILL.md"), folder=folder, strict=True
    )
    assert metadata is None and [d.code for d in diagnostics] == ["SD151"]


# ---- validate_path -----------------------------------------------------------------


def test_validate_path_on_a_tree(tmp_path: Path) -> None:
    make(tmp_path, "name: good\ndescription: d", folder="good")
    make(tmp_path, "name: good\ndescription: d", folder="good/nested")  # nested, mismatched
    make(tmp_path, "name: hidden\ndescription: d", folder=".claude/skills/hidden")
    make(tmp_path, "name: bad", folder="bad")
    make(tmp_path, "name: dep\ndescription: d", folder="node_modules/dep")
    make(tmp_path, "name: {{name}}", folder="good/assets/template")  # good's scaffold
    make(tmp_path, "name: pkg\ndescription: d", folder="venv/lib/pkg/skills/pkg")  # installed
    (tmp_path / "good" / "loop").symlink_to(tmp_path, target_is_directory=True)
    reports = validate_path(tmp_path)
    found = {str(r.path.relative_to(tmp_path)): r for r in reports}
    assert set(found) == {
        ".claude/skills/hidden/SKILL.md",
        "bad/SKILL.md",
        "good/SKILL.md",
        "good/nested/SKILL.md",
    }
    assert found["good/SKILL.md"].valid and found["good/nested/SKILL.md"].valid
    assert not found["bad/SKILL.md"].valid
    assert found["bad/SKILL.md"].name == "bad"
    assert [d.code for d in found["good/nested/SKILL.md"].warnings] == ["SD101"]
    strict = {
        str(r.path.relative_to(tmp_path)): r.valid for r in validate_path(tmp_path, strict=True)
    }
    assert strict["good/nested/SKILL.md"] is False and strict["good/SKILL.md"] is True


def test_validate_path_on_a_file_and_a_folder(tmp_path: Path) -> None:
    folder = make(tmp_path, "name: demo\ndescription: d")
    (report,) = validate_path(folder / "SKILL.md")
    assert report.valid and report.name == "demo"
    (report,) = validate_path(folder)
    assert report.path == folder / "SKILL.md"


def test_validate_path_reports_missing_things(tmp_path: Path) -> None:
    (report,) = validate_path(tmp_path / "nope")
    assert not report.valid and [d.code for d in report.diagnostics] == ["SD008"]
    (tmp_path / "empty").mkdir()
    (report,) = validate_path(tmp_path / "empty")
    assert not report.valid and [d.code for d in report.diagnostics] == ["SD009"]


def test_report_to_dict(tmp_path: Path) -> None:
    folder = make(tmp_path, "name: other\ndescription: d\nauthor: me")
    (report,) = validate_path(folder)
    assert isinstance(report, ValidationReport)
    data = report.to_dict()
    assert data["path"] == str(folder / "SKILL.md")
    assert (data["name"], data["valid"], data["errors"]) == ("other", True, [])
    assert [(w["code"], w["line"]) for w in data["warnings"]] == [("SD101", 2), ("SD150", 4)]
    assert set(data["warnings"][0]) == {"code", "rule", "message", "line"}
    (strict,) = validate_path(folder, strict=True)
    assert strict.to_dict()["valid"] is False and len(strict.to_dict()["errors"]) == 2


# ---- docs and bundled skills ---------------------------------------------------------


def test_every_code_is_documented_and_every_documented_code_exists() -> None:
    doc = (REPO / "docs" / "skill-format.md").read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| (SD\d{3}) \| ([a-z0-9-]+) \|", doc, flags=re.MULTILINE))
    assert table == RULES


@pytest.mark.parametrize("name", ["skill-authoring", "summarize"])
def test_bundled_prompt_skills_are_valid_under_strict(name: str) -> None:
    (report,) = validate_path(BUNDLED / name, strict=True)
    assert report.valid and report.diagnostics == [], report.to_dict()
    skill, _ = load_skill(BUNDLED / name, strict=True)
    assert skill is not None and skill.kind is SkillKind.PROMPT
    assert len(skill.description) > 150  # says what and when
    for reference in skill.list_resources():
        if reference.startswith("evals/"):  # trigger evals feed `skills eval`, not the model
            continue
        assert reference.startswith("references/")
        assert reference in skill.body  # every resource is pointed to from the body
    assert len(skill.body.splitlines()) < 500


def test_unreadable_skill_md_is_a_diagnostic_not_an_exception(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "SKILL.md").symlink_to(tmp_path / "missing-target.md")
    skill, diagnostics = load_skill(folder / "SKILL.md")
    assert skill is None and [d.code for d in diagnostics] == ["SD008"]
    skill, diagnostics = load_skill(folder)  # a dangling SKILL.md is no SKILL.md
    assert skill is None and [d.code for d in diagnostics] == ["SD009"]
