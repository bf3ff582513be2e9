"""The agent a model's profile builds: the compact profile (small and local models)
shows shorter tools, fewer instructions and a ranked skills block; every profile sends
the skills catalog once (the system prompt), never also in the Skill tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilldeck.agent.builder import build_agent
from skilldeck.agent.events import Event, ModelRetryEvent
from skilldeck.agent.prompt import COMPACT_INSTRUCTIONS, DEFAULT_INSTRUCTIONS
from skilldeck.config import Settings, load_settings
from skilldeck.llm.messages import Model, SystemMessage
from skilldeck.llm.profile import ToolView
from skilldeck.llm.retry import RetryNotice, RetryPolicy
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.settings.model import ModelOptions
from skilldeck.tools.builtin import builtin_tools
from skilldeck.tools.compact import COMPACT_DESCRIPTIONS

pytestmark = pytest.mark.anyio

TOPICS = [
    ("csv-cleaner", "Cleans CSV files, trims cells and fixes encodings."),
    ("release-notes", "Writes release notes from a git log."),
    ("pdf-forms", "Fills PDF forms and extracts their fields."),
    ("slack-gif", "Makes animated GIFs for Slack."),
    ("brand-voice", "Rewrites text in the company's brand voice."),
    ("sql-tuner", "Explains and speeds up slow SQL queries."),
    ("dockerize", "Writes a Dockerfile for a project."),
    ("k8s-deploy", "Deploys a container to Kubernetes."),
    ("invoice-parse", "Reads invoices and extracts totals."),
    ("poem-writer", "Writes short poems on request."),
    ("unit-tests", "Writes unit tests for Python code."),
    ("changelog-lint", "Checks a CHANGELOG against keep-a-changelog."),
]


def make_skills(root: Path) -> Path:
    for name, description in TOPICS:
        folder = root / name
        folder.mkdir(parents=True)
        body = f"---\nname: {name}\ndescription: {description}\n---\nDo it.\n"
        (folder / "SKILL.md").write_text(body, encoding="utf-8")
    return root


def settings_with(tmp_path: Path, **options: ModelOptions) -> Settings:
    settings = load_settings(workspace=tmp_path)
    settings.models.options = dict(options)
    return settings


async def first_request(
    tmp_path: Path, settings: Settings, task: str
) -> tuple[str, dict[str, str], Model]:
    """The system prompt and the tool descriptions of a run's first request."""
    model = ScriptedModel.from_lines([{"text": "done"}], name="scripted:inline")
    agent = build_agent(
        settings, model=model, roots=[make_skills(tmp_path / "skills")], cwd=tmp_path, hints=False
    )
    with agent:
        await agent.run(task)
    (request,) = model.requests
    system = request.messages[0]
    assert isinstance(system, SystemMessage)
    return system.content, {t.name: t.description for t in request.tools}, agent.model


async def test_default_profile_sends_the_catalog_once(tmp_path: Path) -> None:
    system, tools, model = await first_request(tmp_path, settings_with(tmp_path), "clean a csv")
    assert not isinstance(model, ToolView)
    assert DEFAULT_INSTRUCTIONS.splitlines()[0] in system
    assert all(f"<name>{name}</name>" in system for name, _ in TOPICS)
    assert "<available_skills>" not in tools["Skill"]
    assert not any(name in tools["Skill"] for name, _ in TOPICS)
    assert "not listed in the prompt" in tools["Skill"]


async def test_compact_profile_is_shorter_in_every_part(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, scripted=ModelOptions(profile="compact"))
    task = "clean up the CSV file: trim the cells and fix the encoding"
    system, tools, model = await first_request(tmp_path, settings, task)
    default_system, default_tools, _ = await first_request(
        tmp_path / "d", settings_with(tmp_path), task
    )
    assert isinstance(model, ToolView)
    assert system.startswith(COMPACT_INSTRUCTIONS)
    assert "How to work:" not in system
    assert len(system) < len(default_system) / 2
    shown = [name for name, _ in TOPICS if f"<name>{name}</name>" in system]
    assert "csv-cleaner" in shown and len(shown) <= 8
    assert "<location>" not in system and "<location>" in default_system
    for name, description in tools.items():
        if name in COMPACT_DESCRIPTIONS:
            assert description == COMPACT_DESCRIPTIONS[name]
    assert sum(map(len, tools.values())) < sum(map(len, default_tools.values())) / 3


async def test_compact_profile_keeps_user_instructions(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, scripted=ModelOptions(profile="compact"))
    model = ScriptedModel.from_lines([{"text": "done"}])
    agent = build_agent(
        settings, model=model, cwd=tmp_path, instructions="Only ever answer in French."
    )
    with agent:
        await agent.run("hi")
    system = model.requests[0].messages[0]
    assert isinstance(system, SystemMessage)
    assert system.content.startswith("Only ever answer in French.")


def test_every_builtin_tool_has_a_compact_description() -> None:
    assert {t.name for t in builtin_tools()} <= set(COMPACT_DESCRIPTIONS)
    assert all(len(d) <= 160 for d in COMPACT_DESCRIPTIONS.values())


def test_a_retry_reaches_on_event_as_a_model_retry_event(tmp_path: Path) -> None:
    """The builder gives the factory a retry listener that turns each notice into a
    ``ModelRetryEvent`` for the runtime's ``on_event``."""
    events: list[Event] = []
    settings = settings_with(tmp_path)
    settings.models.base_url = "http://127.0.0.1:9/v1"  # nothing listens: nothing asked
    agent = build_agent(
        settings, model="openai-compat:m", cwd=tmp_path, hints=False, on_event=events.append
    )
    with agent:
        policy = agent.model.retry  # type: ignore[attr-defined]
        assert isinstance(policy, RetryPolicy) and policy.on_retry is not None
        policy.on_retry(RetryNotice("openai-compat:m", 1, 2, 0.5, "timed out"))
    (event,) = [e for e in events if isinstance(e, ModelRetryEvent)]
    assert (event.model, event.attempt, event.attempts, event.delay) == (
        "openai-compat:m",
        1,
        2,
        0.5,
    )
    assert json.loads(event.to_json())["type"] == "model_retry"
