"""What a SOURCE string means (parse_source)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.errors import SourceError
from skilldeck.skills.sources import SourceSpec, parse_source


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("anthropics/skills", SourceSpec("git", "https://github.com/anthropics/skills.git")),
        (
            "anthropics/skills/document-skills/pdf@v1.2",
            SourceSpec(
                "git", "https://github.com/anthropics/skills.git", "v1.2", "document-skills/pdf"
            ),
        ),
        ("o/r.git@main", SourceSpec("git", "https://github.com/o/r.git", "main")),
        ("https://host/o/r.git", SourceSpec("git", "https://host/o/r.git")),
        ("https://host/o/r.git@feature/x", SourceSpec("git", "https://host/o/r.git", "feature/x")),
        (
            "https://host/o/r.git/skills/a@v2",
            SourceSpec("git", "https://host/o/r.git", "v2", "skills/a"),
        ),
        ("git@github.com:o/r.git@v1", SourceSpec("git", "git@github.com:o/r.git", "v1")),
        ("file:///srv/repo@0123abc", SourceSpec("git", "file:///srv/repo", "0123abc")),
        ("ssh://git@host/o/r", SourceSpec("git", "ssh://git@host/o/r")),
        ("https://h/x/demo.skill", SourceSpec("url", "https://h/x/demo.skill")),
        ("https://h/x/demo.zip?dl=1", SourceSpec("url", "https://h/x/demo.zip?dl=1")),
        ("https://h/raw/main/pdf/SKILL.md", SourceSpec("url", "https://h/raw/main/pdf/SKILL.md")),
        (
            "https://h/.well-known/agent-skills/index.json",
            SourceSpec("index", "https://h/.well-known/agent-skills/index.json"),
        ),
    ],
)
def test_source_kinds(text: str, expected: SourceSpec) -> None:
    assert parse_source(text) == expected


def test_github_url_setting_redirects_shorthand() -> None:
    spec = parse_source("o/r@v1", github_url="file:///tmp/mirror/")
    assert spec == SourceSpec("git", "file:///tmp/mirror/o/r.git", "v1")


def test_existing_and_path_like_sources_stay_local(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "owner" / "repo").mkdir(parents=True)
    assert parse_source("owner/repo").kind == "local"  # exists: never fetched
    assert parse_source("./missing/skill").kind == "local"
    assert parse_source("missing.skill").kind == "local"
    assert parse_source("~/x").kind == "local"


@pytest.mark.parametrize("text", ["", "   ", "just-a-word", "a b/c"])
def test_unintelligible_sources_say_what_is_accepted(text: str) -> None:
    with pytest.raises(SourceError, match="pass"):
        parse_source(text)


@pytest.mark.parametrize(
    "text",
    [
        "-uevil@host:repo",  # git would read it as --upload-pack=<command>
        "https://host/o/r.git@--upload-pack=touch",
        "o/r@-x",
        "o/r@a..b",
        "file:///srv/repo@has space",
    ],
)
def test_sources_git_could_read_as_options_are_refused(text: str) -> None:
    with pytest.raises(SourceError):
        parse_source(text)
