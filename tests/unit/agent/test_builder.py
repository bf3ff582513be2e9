"""build_agent: model choice, tools, skills in the prompt, preloading, rebuilding a session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilldeck.agent.assembly import choose_model_spec, normalise_spec
from skilldeck.agent.builder import build_agent, skills_block
from skilldeck.agent.store import SessionStore, build_agent_for_session
from skilldeck.config import load_settings
from skilldeck.errors import ModelConfigError, SkillNotFoundError
from skilldeck.llm.messages import SystemMessage, UserMessage
from skilldeck.skills.registry import SkillRegistry

pytestmark = pytest.mark.anyio


def make_skill(root: Path, name: str, description: str, body: str = "Do the thing.") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n{body}\n", encoding="utf-8"
    )
    return folder


def script(tmp_path: Path, *lines: dict[str, object]) -> Path:
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_model_choice_order(
    tmp_path: Path, skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings(workspace=tmp_path)
    with pytest.raises(ModelConfigError, match="No model chosen"):
        choose_model_spec(settings)
    monkeypatch.setenv("SKILLDECK_MODEL", "ollama:from-env")
    with pytest.raises(ModelConfigError):  # the environment counts as loaded
        choose_model_spec(settings)
    settings = load_settings(workspace=tmp_path)
    assert choose_model_spec(settings) == "ollama:from-env" == settings.model
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    (skilldeck_home / "config.toml").write_text(
        '[models]\ndefault = "ollama:user"\n', encoding="utf-8"
    )
    settings = load_settings(workspace=tmp_path)
    assert choose_model_spec(settings) == "ollama:user" == settings.model  # files win
    (tmp_path / ".skilldeck").mkdir()
    (tmp_path / ".skilldeck" / "config.toml").write_text(
        'model = "ollama:workspace"\n', encoding="utf-8"
    )
    assert choose_model_spec(settings) == "ollama:user"
    settings = load_settings(workspace=tmp_path)
    assert choose_model_spec(settings) == "ollama:workspace"
    assert choose_model_spec(settings, "openai:explicit") == "openai:explicit"


def test_scripted_paths_become_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.jsonl").write_text("{}\n", encoding="utf-8")
    assert normalise_spec("scripted:s.jsonl") == f"scripted:{tmp_path / 's.jsonl'}"
    assert normalise_spec("scripted:missing.jsonl") == "scripted:missing.jsonl"
    assert normalise_spec("openai:gpt-4.1") == "openai:gpt-4.1"


async def test_agent_with_skills_gets_the_skill_tool_and_the_level1_block(
    tmp_path: Path,
) -> None:
    roots = tmp_path / "skills"
    make_skill(roots, "csv-cleaner", "Cleans CSV files, trims cells and fixes encodings.")
    settings = load_settings(workspace=tmp_path)
    agent = build_agent(
        settings,
        model=f"scripted:{script(tmp_path, {'text': 'ok'})}",
        roots=[roots],
        cwd=tmp_path,
        max_turns=7,
        hints=False,
    )
    with agent:
        assert "Skill" in agent.tools and "Bash" in agent.tools and "Read" in agent.tools
        skill_spec = next(s for s in agent.specs if s.name == "Skill")
        assert "csv-cleaner" in json.dumps(skill_spec.input_schema)
        result = await agent.run("clean my csv")
        system = agent.store.load_messages(result.session_id)[0]
        assert isinstance(system, SystemMessage)
        assert "<available_skills>" in system.content and "csv-cleaner" in system.content
        assert "- Max turns: 7" in system.content
        assert f"- Working directory: {tmp_path.resolve()}" in system.content
        record = agent.store.get(result.session_id)
        assert record.metadata["roots"] == [str(roots.resolve())]
        assert record.metadata["max_turns"] == 7
        assert agent.tool_context(result.session_id).services["llm"] is not None


async def test_no_usable_skill_means_no_skill_tool(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    settings = load_settings(workspace=tmp_path)
    with build_agent(
        settings,
        model=f"scripted:{script(tmp_path, {'text': 'ok'})}",
        roots=[empty],
        no_defaults=True,
        cwd=tmp_path,
    ) as agent:
        assert "Skill" not in agent.tools and agent.hinter is None


async def test_preloaded_skills_are_skill_body_messages_before_the_task(tmp_path: Path) -> None:
    roots = tmp_path / "skills"
    make_skill(roots, "style", "House style.", body="Use British spelling in $ARGUMENTS.")
    settings = load_settings(workspace=tmp_path)
    model = f"scripted:{script(tmp_path, {'text': 'ok'})}"
    with build_agent(
        settings, model=model, roots=[roots], skills=["style"], cwd=tmp_path, hints=False
    ) as agent:
        result = await agent.run("write a note")
        messages = agent.store.load_messages(result.session_id)
        body, task = messages[1], messages[2]
        assert isinstance(body, UserMessage) and body.meta == "skill-body"
        assert '<skill name="style">' in body.content and "British spelling" in body.content
        assert f"Base directory for this skill: {(roots / 'style')}" in body.content
        assert isinstance(task, UserMessage) and task.content == "write a note"
    with pytest.raises(SkillNotFoundError):
        build_agent(settings, model=model, roots=[roots], skills=["nope"], cwd=tmp_path)


async def test_a_session_is_rebuilt_from_its_metadata(tmp_path: Path) -> None:
    roots = tmp_path / "skills"
    # a run started with skills holds exactly their allowed tools
    make_skill(roots, "alpha", "First skill.\nallowed-tools: AskUserQuestion")
    q = {
        "question": "Go?",
        "header": "Go",
        "options": [{"label": "Yes", "description": "y"}, {"label": "No", "description": "n"}],
    }
    path = script(
        tmp_path,
        {"tool_calls": [{"id": "q", "name": "AskUserQuestion", "input": {"questions": [q]}}]},
        {"text": "went"},
    )
    work = tmp_path / "work"
    work.mkdir()
    settings = load_settings(workspace=work)
    with build_agent(
        settings,
        model=f"scripted:{path}",
        roots=[roots],
        skills=["alpha"],
        cwd=work,
        max_turns=4,
        hints=False,
    ) as agent:
        paused = await agent.run("go")
    assert paused.status == "paused"
    with SessionStore.open(settings) as store:
        record = store.get(paused.session_id)
        other = build_agent_for_session(
            load_settings(workspace=tmp_path), record, session_store=store, hints=False
        )
        assert other.cwd == work.resolve() and other.limits.max_turns == 4
        assert other.skills is not None and other.skills.find("alpha") is not None
        done = await other.resume(record.id, answer="Yes")
    assert done.status == "completed" and done.text == "went"


def test_skills_block_is_ranked_by_the_task_only_when_it_must_shorten(tmp_path: Path) -> None:
    roots = tmp_path / "skills"
    for i in range(40):
        make_skill(roots, f"skill-{i:02d}", f"Generic helper number {i} for assorted chores. " * 3)
    make_skill(roots, "zebra-feeder", "Feeds zebras at the zoo with hay and carrots.")
    settings = load_settings(workspace=tmp_path)
    registry = SkillRegistry.discover(settings, roots=[roots], no_defaults=True)
    full = skills_block(registry, "feed the zebras", budget=100_000)
    assert full.index("skill-00") < full.index("zebra-feeder")  # alphabetical, all fit
    tight = skills_block(registry, "feed the zebras hay", budget=1500)
    assert "zebra-feeder" in tight
    assert tight.index("zebra-feeder") < tight.index("skill-")


async def test_a_matching_skill_is_hinted_before_the_user_message(tmp_path: Path) -> None:
    roots = tmp_path / "skills"
    make_skill(roots, "zebra-feeder", "Feeds zebras at the zoo with hay and carrots.")
    topics = [
        "pdf forms",
        "excel sheets",
        "git commits",
        "docker images",
        "email drafts",
        "sql queries",
        "unit tests",
        "css styling",
        "slack messages",
        "csv cleaning",
    ]
    for i, topic in enumerate(topics):  # a catalogue, so word rarity means something
        make_skill(roots, f"helper-{i}", f"Helps with {topic} and related chores.")
    settings = load_settings(workspace=tmp_path)
    model = f"scripted:{script(tmp_path, {'text': 'ok'}, {'text': 'ok'})}"
    with build_agent(settings, model=model, roots=[roots], cwd=tmp_path, hints=True) as agent:
        result = await agent.run("feed the zebras some hay and carrots at the zoo")
        hint, task = agent.store.load_messages(result.session_id)[1:3]
        assert isinstance(hint, UserMessage) and hint.meta == "skill-hint"
        assert hint.content.startswith("<skill-hint>") and hint.content.count("<skill-hint>") == 1
        assert "zebra-feeder" in hint.content
        assert isinstance(task, UserMessage) and task.meta is None
        quiet = await agent.run("what is the capital of France")
        roles = [
            (m.role, getattr(m, "meta", None)) for m in agent.store.load_messages(quiet.session_id)
        ]
        assert roles == [("system", None), ("user", None), ("assistant", None)]
