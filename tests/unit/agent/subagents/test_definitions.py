from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.agent.subagents.definitions import BUILTIN_AGENTS, discover_agents
from skilldeck.config import load_settings
from skilldeck.errors import SkillNotFoundError


def test_builtin_types(tmp_path: Path, skilldeck_home: Path) -> None:
    catalog = discover_agents(load_settings(workspace=tmp_path, home=skilldeck_home))
    assert {"general-purpose", "explore", "plan"} <= set(catalog.names())
    assert catalog.get("explore").tools == ["Read", "Glob", "Grep"]
    assert catalog.get("explore").max_turns == 5
    assert BUILTIN_AGENTS["general-purpose"].tools is None


def test_agent_md_precedence_and_fields(tmp_path: Path, skilldeck_home: Path) -> None:
    user = skilldeck_home / "agents"
    user.mkdir(parents=True)
    (user / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: user version\n---\nUser prompt\n", encoding="utf-8"
    )
    ws = tmp_path / ".skilldeck" / "agents" / "reviewer"
    ws.mkdir(parents=True)
    (ws / "AGENT.md").write_text(
        "---\ndescription: Reviews diffs\nmodel: scripted:x.jsonl\n"
        "tools: Read, Grep, Bash(git diff:*)\n"
        "disallowed_tools: [Write]\nskills: [pdf]\nallow-skills: false\npermission-mode: plan\n"
        "max-turns: 7\n---\nYou review code.\n",
        encoding="utf-8",
    )
    catalog = discover_agents(load_settings(workspace=tmp_path, home=skilldeck_home))
    reviewer = catalog.get("reviewer")
    assert reviewer.source == "workspace"
    assert reviewer.description == "Reviews diffs"
    assert reviewer.tools == ["Read", "Grep", "Bash(git diff:*)"]
    assert reviewer.disallowed_tools == ["Write"]
    assert reviewer.skills == ["pdf"] and reviewer.allow_skills is False
    assert reviewer.permission_mode == "plan" and reviewer.max_turns == 7
    assert reviewer.instructions == "You review code."


def test_bad_definition_reported_not_fatal(tmp_path: Path, skilldeck_home: Path) -> None:
    folder = tmp_path / ".skilldeck" / "agents"
    folder.mkdir(parents=True)
    (folder / "broken.md").write_text("---\nname: [unclosed\n---\nx\n", encoding="utf-8")
    (folder / "badmode.md").write_text(
        "---\nname: badmode\npermission-mode: yolo\n---\nx\n", encoding="utf-8"
    )
    (folder / "fine.md").write_text("---\ndescription: ok\n---\nbody\n", encoding="utf-8")
    catalog = discover_agents(load_settings(workspace=tmp_path, home=skilldeck_home))
    assert "fine" in catalog.names()
    assert sorted(d.path.name for d in catalog.diagnostics if d.path) == ["badmode.md", "broken.md"]
    mode = next(d for d in catalog.diagnostics if d.path and d.path.name == "badmode.md")
    assert mode.code == "SD401" and mode.line == 3
    with pytest.raises(SkillNotFoundError, match="fine"):
        catalog.get("fin")


def test_max_turns_must_be_a_count_of_at_least_one(tmp_path: Path) -> None:
    from skilldeck.agent.subagents.definitions import load_definition
    from skilldeck.errors import SkillParseError

    for value, expected in (("7", 7), ("'12'", 12)):
        path = tmp_path / f"ok{expected}.md"
        path.write_text(f"---\nname: ok\ndescription: d\nmax-turns: {value}\n---\nBody\n")
        assert load_definition(path, source="user").max_turns == expected
    for value in ("-3", "0", "ten", "2.5", "true"):
        path = tmp_path / "bad.md"
        path.write_text(f"---\nname: bad\ndescription: d\nmax-turns: {value}\n---\nBody\n")
        with pytest.raises(SkillParseError) as caught:
            load_definition(path, source="user")
        assert caught.value.code == "SD403" and caught.value.line == 4, value


def test_max_turns_in_other_digits_or_too_long_is_sd403(tmp_path: Path) -> None:
    from skilldeck.agent.subagents.definitions import load_definition
    from skilldeck.errors import SkillParseError

    for value in ("٣", "'" + "9" * 5000 + "'", "9" * 5000):
        path = tmp_path / "odd.md"
        path.write_text(
            f"---\nname: odd\ndescription: d\nmax-turns: {value}\n---\nBody\n", encoding="utf-8"
        )
        with pytest.raises(SkillParseError) as caught:
            load_definition(path, source="user")
        assert caught.value.code == "SD403"


def test_fields_of_the_wrong_shape_are_sd404_with_their_line(tmp_path: Path) -> None:
    from skilldeck.agent.subagents.definitions import load_definition
    from skilldeck.errors import SkillParseError

    for field, value in (("tools", "[[a]]"), ("model", "[x]"), ("skills", "{a: 1}")):
        path = tmp_path / "odd.md"
        path.write_text(f"---\nname: odd\ndescription: d\n{field}: {value}\n---\nBody\n")
        with pytest.raises(SkillParseError, match=f"{field} must be") as caught:
            load_definition(path, source="user")
        assert caught.value.code == "SD404" and caught.value.line == 4
    path.write_text("no frontmatter\n")
    with pytest.raises(SkillParseError, match=r"odd\.md must start with"):
        load_definition(path, source="user")


def test_yaml_scalars_are_text_and_lines_follow_the_key_as_written(tmp_path: Path) -> None:
    from skilldeck.agent.subagents.definitions import load_definition
    from skilldeck.errors import SkillParseError

    path = tmp_path / "ok.md"
    path.write_text("---\nname: ok\ndescription: 2024\ntools: 5\n---\nBody\n")
    loaded = load_definition(path, source="user")
    assert loaded.description == "2024" and loaded.tools == ["5"]
    path.write_text("---\nname: ok\ndescription: d\ndisallowed_tools: {a: 1}\n---\nB\n")
    with pytest.raises(SkillParseError) as caught:
        load_definition(path, source="user")
    assert caught.value.code == "SD404" and caught.value.line == 4
