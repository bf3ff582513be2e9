"""``skills validate`` and ``skills match`` without typer print the same bytes, on
stdout and stderr, with the same exit code as the typer commands, or decline."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skilldeck.cli.main import build_app
from skilldeck.cli.skills.fast import fast_match, fast_validate


def write_skill(folder: Path, frontmatter: str, body: str = "Body.\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\n{frontmatter}---\n\n{body}", encoding="utf-8")
    return folder


@pytest.fixture
def skills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skilldeck_home: Path) -> Path:
    monkeypatch.setenv("COLUMNS", "100")
    root = tmp_path / "skills"
    write_skill(root / "pdf-tools", "name: pdf-tools\ndescription: Extract text from PDF files.\n")
    write_skill(
        root / "csv-report",
        "name: csv-report\ndescription: Summarise a CSV table as a report.\nfoo: bar\n",
    )
    write_skill(root / "Bad_Name", "name: Bad_Name\ndescription: Resize images for the web.\n")
    write_skill(root / "no-description", "name: no-description\n")
    write_skill(root / "broken-yaml", "name: [unclosed\ndescription: x\n")
    monkeypatch.chdir(tmp_path)
    return root


def compare(
    argv: list[str], try_fast: Callable[[list[str]], int | None], capsys: pytest.CaptureFixture[str]
) -> int:
    """Run ``argv`` both ways; assert the same stdout, stderr and exit code."""
    result = CliRunner().invoke(build_app(argv), argv)
    code = try_fast(argv)
    out, err = capsys.readouterr()
    assert code is not None, "the fast path declined"
    assert (out, err, code) == (result.stdout, result.stderr, result.exit_code)
    return code


@pytest.mark.parametrize(
    "names",
    [
        ["pdf-tools"],
        ["csv-report"],
        ["Bad_Name"],
        ["no-description"],
        ["broken-yaml"],
        ["pdf-tools", "no-description", "csv-report"],
        ["."],
        ["pdf-tools/SKILL.md"],
    ],
)
@pytest.mark.parametrize("flags", [[], ["--json"], ["--strict"], ["--json", "--strict"]])
def test_validate_prints_what_the_typer_command_prints(
    skills: Path, capsys: pytest.CaptureFixture[str], names: list[str], flags: list[str]
) -> None:
    paths = [str(skills / n) if n != "." else str(skills) for n in names]
    argv = ["skills", "validate", *flags[:1], *paths, *flags[1:]]
    code = compare(argv, fast_validate.try_fast, capsys)
    invalid = {"no-description", "broken-yaml", "."}
    if "--strict" in flags:
        invalid |= {"csv-report", "Bad_Name"}
    assert code == (1 if invalid & set(names) else 0)


def test_validate_missing_path_is_a_usage_error(
    skills: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["skills", "validate", str(skills / "pdf-tools"), "nowhere", "--json"]
    assert compare(argv, fast_validate.try_fast, capsys) == 2


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--help"],
        ["x", "--strikt"],
        ["-"],
        ["--", "x"],
    ],
)
def test_validate_declines_other_shapes(args: list[str]) -> None:
    assert fast_validate.try_fast(["skills", "validate", *args]) is None
    assert fast_validate.try_fast(["skills", "list", "x"]) is None


@pytest.mark.parametrize(
    "args",
    [
        ["extract text from a pdf", "--json"],
        ["extract text from a pdf"],
        ["summarise a csv table", "--top", "1", "--json"],
        ["-k", "2", "report"],
        ["--top=3", "pdf", "--json"],
        ["zebra quantum banana", "--json"],
        ["zebra quantum banana"],
        ["extract text from a pdf", "--json", "--lexical"],
        ["extract text from a pdf", "--embeddings"],
    ],
)
def test_match_prints_what_the_typer_command_prints(
    skills: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    root = ["--root", str(skills), "--no-defaults"]
    for _ in range(2):  # cold, then warm from the snapshot and the index cache
        assert compare(["skills", "match", *args, *root], fast_match.try_fast, capsys) == 0
    assert compare(["skills", "match", *args, f"--root={skills}"], fast_match.try_fast, capsys) == 0


def test_match_usage_errors(skills: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["skills", "match", "pdf", "--root", str(skills / "nowhere")]
    assert compare(argv, fast_match.try_fast, capsys) == 2
    assert compare(["skills", "match", "pdf", "--no-defaults"], fast_match.try_fast, capsys) == 2


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["  "],
        ["a", "b"],
        ["pdf", "--embeddings", "--lexical"],
        ["pdf", "--top", "0"],
        ["pdf", "--top=x"],
        ["pdf", "--root"],
        ["pdf", "--root="],
        ["pdf", "--help"],
        ["-k5", "pdf"],
    ],
)
def test_match_declines_other_shapes(args: list[str]) -> None:
    assert fast_match.try_fast(["skills", "match", *args]) is None


def test_shell_completion_goes_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_SKILLDECK_COMPLETE", "bash_complete")
    assert fast_validate.try_fast(["skills", "validate", "x"]) is None
    assert fast_match.try_fast(["skills", "match", "pdf"]) is None


def test_plain_report_lines_are_what_rich_writes(
    skills: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Off a terminal, validation reports are written without rich: the same bytes,
    with names and values that rich could treat as markup, emoji codes or wide text."""
    write_skill(
        skills / "tricky",
        "name: '[bold]Tricky :smile: 漢字 é'\ndescription: '[red]x[/red] :+1: 絵文字 🎉'\n"
        "allowed_tools: [Read]\nweird-key: '  spaced  '\n",
    )
    reports = fast_validate.reports_for([skills], strict=True)
    plain = fast_validate.plain_lines(reports)
    assert plain is not None and len(plain) > 5
    fast_validate._rich_reports(reports)
    assert "".join(plain) == capsys.readouterr().out
    monkeypatch.setenv("COLUMNS", "30")  # rich would wrap the summary: left to rich
    assert fast_validate.plain_lines(reports) is None
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert fast_validate.plain_lines(reports) is None


def test_control_characters_are_printed_harmless_on_both_paths(skills: Path) -> None:
    folder = write_skill(skills / "tab\there", "name: tab\ndescription: Tabs.\nfoo: bar\n")
    (skills / "esc").mkdir()
    (skills / "esc" / "SKILL.md").write_text('---\nname: "e\\e[2Jx"\ndescription: d\n---\nb\n')
    reports = fast_validate.reports_for([folder, skills / "esc"], strict=False)
    lines = fast_validate.plain_lines(reports)
    assert lines is not None  # nothing is left for rich to strip or expand
    assert lines[0].startswith(f"{skills}/tab here/SKILL.md")  # the tab shown as a space
    assert not any("\x1b" in line for line in lines)
    assert any("\\x1b[2J" in line for line in lines)
