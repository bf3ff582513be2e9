"""No re-loading: a skill already loaded in this session with the same arguments is
not loaded again; the result says when it was. The memory is the session's."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.config import Settings
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import ToolContext
from skilldeck.tools.skill_session import LOADED_KEY, TURN_KEY, forget_loads
from skilldeck.tools.skill_tool import SkillTool

pytestmark = pytest.mark.anyio


@pytest.fixture
def tool(tmp_path: Path) -> SkillTool:
    folder = tmp_path / "skills" / "notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: notes\ndescription: Release notes.\n---\nWrite notes for $ARGUMENTS.\n",
        encoding="utf-8",
    )
    settings = Settings(workspace=tmp_path, sandbox={"mode": "off"})
    registry = SkillRegistry.discover(settings, roots=[tmp_path / "skills"], no_defaults=True)
    return SkillTool(registry)


def ctx(tool: SkillTool, session: str) -> ToolContext:
    return ToolContext(
        session_id=session, workspace=tool.settings.workspace, settings=tool.settings
    )


async def test_a_second_identical_load_answers_where_the_first_was(tool: SkillTool) -> None:
    session = ctx(tool, "s1")
    session.state[TURN_KEY] = 3
    first = await tool.call({"skill": "notes", "args": "v2"}, session)
    assert first.content.startswith("Loaded skill notes") and "notes for v2" in first.content
    session.state[TURN_KEY] = 4
    again = await tool.call({"skill": "notes", "args": "v2"}, session)
    assert not again.is_error and again.data["mode"] == "already_loaded"
    assert again.content.startswith("Skill notes is already loaded: it was loaded at turn 3")
    assert "notes for v2" not in again.content
    other = await tool.call({"skill": "notes", "args": "v3"}, session)  # new arguments
    assert "notes for v3" in other.content


async def test_the_memory_is_per_session_and_forgotten_on_trimming(tool: SkillTool) -> None:
    one, two = ctx(tool, "s1"), ctx(tool, "s2")
    await tool.call({"skill": "notes"}, one)
    fresh = await tool.call({"skill": "notes"}, two)  # another session: loads
    assert fresh.content.startswith("Loaded skill notes")
    assert LOADED_KEY in one.state and LOADED_KEY in two.state
    forget_loads(one.state)
    assert (await tool.call({"skill": "notes"}, one)).content.startswith("Loaded skill notes")
