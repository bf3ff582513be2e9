"""Resume builds a stored session's agent from an AgentSpec + Runtime through
``builder.build`` (as a new session is built), from the launch record alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilldeck.agent import builder
from skilldeck.agent.assembly import AgentParts
from skilldeck.agent.builder import build_agent
from skilldeck.agent.loop import Agent
from skilldeck.agent.spec import AgentSpec, Runtime
from skilldeck.agent.store import SessionStore, build_agent_for_session, resume
from skilldeck.config import load_settings

pytestmark = pytest.mark.anyio


def scripted(tmp_path: Path) -> Path:
    path = tmp_path / "model.jsonl"
    q = {
        "question": "Go?",
        "header": "Go",
        "options": [{"label": "Yes", "description": "y"}, {"label": "No", "description": "n"}],
    }
    question = {"id": "q1", "name": "AskUserQuestion", "input": {"questions": [q]}}
    lines = [{"tool_calls": [question]}, {"text": "went"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


async def test_resume_calls_build_with_the_recorded_spec_and_runtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    settings = load_settings(workspace=work)
    with build_agent(
        settings, model=f"scripted:{scripted(tmp_path)}", cwd=work, max_turns=3, hints=False
    ) as agent:
        paused = await agent.run("go")
        held = agent.tools.names()
    assert paused.status == "paused"
    seen: list[tuple[AgentSpec, Runtime]] = []

    def spy(spec: AgentSpec, runtime: Runtime) -> Agent:
        seen.append((spec, runtime))
        return builder.build(spec, runtime)

    monkeypatch.setattr(resume, "build", spy)
    with SessionStore.open(settings) as store:
        record = store.get(paused.session_id)
        other = build_agent_for_session(
            settings, record, session_store=store, json_events=True, hints=False
        )
        done = await other.resume(record.id, answer="Yes")
    assert done.status == "completed" and done.text == "went"
    [(spec, runtime)] = seen
    assert spec.only_tools == tuple(held) and spec.depth == 0 and spec.max_turns == 3
    assert spec.cwd == work and spec.stream_text is False and spec.hints is False
    assert runtime.store is store and runtime.registry is not None
    assert isinstance(other.parts, AgentParts) and other.parts.store is store


def test_a_keyword_resume_does_not_take_is_a_type_error(tmp_path: Path) -> None:
    settings = load_settings(workspace=tmp_path)
    with SessionStore.open(settings) as store:
        record = store.create(model="scripted:x", agent="main", cwd=tmp_path, task="t")
        with pytest.raises(TypeError, match="no_such_keyword"):
            build_agent_for_session(settings, record, session_store=store, no_such_keyword=1)
