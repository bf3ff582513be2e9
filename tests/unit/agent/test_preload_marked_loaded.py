"""A skill the session started with (``--skill``, a sub-agent's ``skills=[…]``) is
marked loaded: a later ``Skill`` call with the same (empty) arguments answers "already
loaded" instead of putting its body in the conversation a second time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skilldeck.agent.builder import build, build_agent
from skilldeck.agent.store import SessionStore
from skilldeck.agent.subagents import SubagentManager, discover_agents
from skilldeck.config import load_settings
from skilldeck.llm.messages import ToolResultMessage
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import ToolRegistry
from skilldeck.tools.builtin import builtin_tools
from skilldeck.tools.skill_session import LOADED_KEY

pytestmark = pytest.mark.anyio

BODY = "Write the release notes in the house style, marker-7f3a."


def script(path: Path, lines: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return f"scripted:{path}"


def make_skill(root: Path, body: str = BODY) -> Path:
    folder = root / "notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: notes\ndescription: Release notes.\nallowed-tools: Skill Read\n---\n{body}\n",
        encoding="utf-8",
    )
    return root


async def run_with_preload(tmp_path: Path, body: str = BODY) -> tuple[Any, Any, list[Any]]:
    root = make_skill(tmp_path / "skills", body)
    work = tmp_path / "ws"
    work.mkdir()
    model = script(
        tmp_path / "m.jsonl",
        [
            {"tool_calls": [{"id": "s1", "name": "Skill", "input": {"skill": "notes"}}]},
            {"text": "ok"},
        ],
    )
    settings = load_settings(workspace=work)
    with build_agent(
        settings,
        model=model,
        roots=[root],
        no_defaults=True,
        cwd=work,
        hints=False,
        skills=["notes"],
    ) as agent:
        done = await agent.run("use it")
        stored = agent.store.messages(done.session_id)
        record = agent.store.get(done.session_id)
    return done, record, stored


async def test_a_preloaded_skill_is_not_loaded_again(tmp_path: Path) -> None:
    done, record, stored = await run_with_preload(tmp_path)
    assert done.status == "completed"
    result = next(r.message for r in stored if isinstance(r.message, ToolResultMessage))
    assert result.content.startswith("Skill notes is already loaded")
    assert "when this conversation started" in result.content
    assert BODY not in result.content
    bodies = [r for r in stored if BODY in json.dumps(r.message.model_dump(mode="json"))]
    assert len(bodies) == 1  # the preload message, once
    (entry,) = record.state[LOADED_KEY].values()  # the mark only, stored with the state
    assert entry == {"turn": None, "preloaded": True}


async def test_a_preload_cut_at_the_cap_may_still_be_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A body the preload had to cut is not marked: its message holds only the start."""
    monkeypatch.setattr("skilldeck.agent.startup.BODY_CAP", 20)
    _, record, stored = await run_with_preload(tmp_path)
    result = next(r.message for r in stored if isinstance(r.message, ToolResultMessage))
    assert result.content.startswith("Loaded skill notes")
    assert [e.get("preloaded") for e in record.state[LOADED_KEY].values()] == [None]


async def test_a_sub_agents_skills_are_marked_loaded_too(
    tmp_path: Path, skilldeck_home: Path
) -> None:
    """``Task(skills=[…])`` preloads through the same path: the child's session is
    marked (the child may not be offered ``Skill`` at all; where it is, the mark is
    what answers "already loaded")."""
    root = make_skill(tmp_path / "skills")
    work = tmp_path / "ws"
    work.mkdir()
    settings = load_settings(workspace=work, home=skilldeck_home)
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True)
    model = ScriptedModel.from_lines([{"text": "notes written"}])
    manager = SubagentManager(
        settings=settings,
        parent_tools=ToolRegistry(builtin_tools()),
        catalog=discover_agents(settings),
        registry=registry,
        model_factory=lambda _name: model,
        store=SessionStore.open(settings),
        agent_factory=build,
    )
    outcome = await manager.spawn("write notes", skills=["notes"])
    assert outcome.ok, outcome.render()
    (child,) = manager.store.list()
    (entry,) = manager.store.get(child.id).state[LOADED_KEY].values()
    assert entry == {"turn": None, "preloaded": True}
