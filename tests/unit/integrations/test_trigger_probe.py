"""The model side of trigger evals: what the model is sent, and which call counts."""

from __future__ import annotations

from pathlib import Path

import anyio

from skilldeck.config import load_settings
from skilldeck.integrations.trigger_probe import (
    first_request,
    model_results,
    probe_agent,
    skill_called,
)
from skilldeck.llm.messages import AssistantMessage, SystemMessage, ToolCall, UserMessage
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.routing import TriggerCase


def reply(*calls: tuple[str, dict[str, object]]) -> AssistantMessage:
    return AssistantMessage(
        content="",
        tool_calls=[ToolCall(id=f"c{i}", name=n, input=a) for i, (n, a) in enumerate(calls)],
    )


def test_only_a_skill_call_naming_a_skill_counts() -> None:
    assert skill_called(reply()) is None
    assert skill_called(reply(("Skill", {"query": "pdf"}))) is None  # a search is no trigger
    assert skill_called(reply(("Read", {"file_path": "x"}), ("Skill", {"skill": "/pdf "}))) == "pdf"
    assert skill_called(reply(("Skill", {"skill": "a"}), ("Skill", {"skill": "b"}))) == "a"


def test_the_model_sees_what_an_agent_run_sends(tmp_path: Path) -> None:
    root = tmp_path / "skills" / "pdf-tools"
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(
        "---\nname: pdf-tools\ndescription: Extract text and tables from PDF files.\n---\n",
        encoding="utf-8",
    )
    script = tmp_path / "model.jsonl"
    script.write_text(
        '{"for": "PDF", "tool_calls": [{"name": "Skill", "input": {"skill": "pdf-tools"}}]}\n'
        '{"text": "no skill"}\n',
        encoding="utf-8",
    )
    settings = load_settings(home=tmp_path / "home", workspace=tmp_path)
    registry = SkillRegistry.discover(settings, roots=[tmp_path / "skills"], no_defaults=True)
    with probe_agent(settings, registry, f"scripted:{script}") as agent:
        messages = first_request(agent, "extract the tables from this PDF file")
        assert isinstance(messages[0], SystemMessage)
        assert "<name>pdf-tools</name>" in messages[0].content
        assert isinstance(messages[-1], UserMessage)
        assert messages[-1].content == "extract the tables from this PDF file"
        assert "Skill" in [s.name for s in agent.specs]
        cases = [
            TriggerCase("pdf-tools", "extract the tables from this PDF file", True),
            TriggerCase("pdf-tools", "tell me a joke", False),
        ]
        results = anyio.run(lambda: model_results(agent, cases, runs=2))
    assert [r.picks for r in results] == [("pdf-tools", "pdf-tools"), (None, None)]
    assert all(r.passed for r in results)
