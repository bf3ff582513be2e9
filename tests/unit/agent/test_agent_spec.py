"""Agents from a typed spec (issue 16, item 5): ``build(spec, runtime)``, one narrowing
pipeline, sub-agents built through a factory, typed tool services, lazy routing."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

import skilldeck.skills.routing.hints as hints_module
from skilldeck.agent.builder import build, build_agent
from skilldeck.agent.spec import AgentSpec, Runtime, Scan
from skilldeck.agent.subagents.subagents import SPAWN_TOOLS, SubagentManager
from skilldeck.agent.toolset import SPAWNING
from skilldeck.config import load_settings
from skilldeck.errors import ConfigError
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.rules import SPAWNING_TOOLS
from skilldeck.tools.base import ToolContext, ToolServices

pytestmark = pytest.mark.anyio

AGENT_DIR = Path(__file__).resolve().parents[3] / "src" / "skilldeck" / "agent"


def make_skill(root: Path, name: str, extra: str = "") -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Handles {name} files and reports.\n{extra}---\nDo it.\n",
        encoding="utf-8",
    )


def text_model(*texts: str) -> ScriptedModel:
    return ScriptedModel.from_lines([{"text": t} for t in texts])


def test_build_from_spec_is_complete_and_matches_build_agent(tmp_path: Path) -> None:
    roots = tmp_path / "skills"
    make_skill(roots, "alpha")
    settings = load_settings(workspace=tmp_path)
    registry = SkillRegistry.discover(settings, roots=[roots], no_defaults=True)
    runtime = Runtime(settings=settings, registry=registry, scan=Scan((roots,), True))
    spec = AgentSpec(model=text_model("ok"), cwd=tmp_path, max_turns=3, hints=False)
    with build(spec, runtime) as agent, build_agent(
        settings, model=text_model("ok"), registry=registry, cwd=tmp_path, max_turns=3,
        hints=False, roots=[roots], no_defaults=True,
    ) as same:  # fmt: skip
        assert agent.tools.names() == same.tools.names()
        assert agent.subagents is not None and agent.subagents.store is agent.store
        assert agent.limits.max_turns == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.max_turns = 4  # type: ignore[misc]


def test_no_attribute_is_patched_after_construction() -> None:
    """``x.subagents = …``, ``x.store = …``, ``x.tools = …`` only inside ``__init__``."""
    patched = []
    for path in AGENT_DIR.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if func.name == "__init__":
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Attribute) and target.attr in {
                            "subagents", "store", "tools", "available_tools", "composed",
                        }:  # fmt: skip
                            patched.append(f"{path.name}:{node.lineno}")
    assert patched == []


def test_no_function_level_imports_of_skilldeck_in_agent() -> None:
    found = []
    for path in AGENT_DIR.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(func):
                    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                        "skilldeck"
                    ):
                        found.append(f"{path.name}:{node.lineno}")
    assert found == []


def test_one_set_of_spawning_tools() -> None:
    assert SPAWNING is SPAWNING_TOOLS is SPAWN_TOOLS
    assert {"Task", "Agent", "TaskOutput"} == set(SPAWNING)


async def test_children_are_built_by_the_factory_through_the_same_pipeline(
    tmp_path: Path,
) -> None:
    settings = load_settings(workspace=tmp_path)
    registry = SkillRegistry.discover(settings, roots=[], no_defaults=True)
    built: list[AgentSpec] = []

    def factory(spec: AgentSpec, runtime: Runtime) -> Any:
        built.append(spec)
        return build(spec, runtime)

    parent = build_agent(settings, model=text_model("ok"), registry=registry, cwd=tmp_path)
    with parent:
        manager = parent.subagents
        assert isinstance(manager, SubagentManager)
        child_manager = SubagentManager(
            settings=settings,
            parent_tools=parent.tools,
            catalog=manager.catalog,
            registry=registry,
            model_factory=lambda _n: text_model("child done"),
            store=parent.store,
            agent_factory=factory,
        )
        outcome = await child_manager.spawn("look around", subagent_type="explore")
    assert outcome.status == "completed" and outcome.text == "child done"
    (spec,) = built
    assert spec.depth == 1 and spec.only_tools == ("Glob", "Grep", "Read")
    assert spec.bound_tools == frozenset() and spec.gate is not None


async def test_a_manager_without_a_factory_refuses_to_spawn(tmp_path: Path) -> None:
    settings = load_settings(workspace=tmp_path)
    parent = build_agent(settings, model=text_model("ok"), cwd=tmp_path, no_defaults=True)
    with parent:
        assert isinstance(parent.subagents, SubagentManager)
        bare = SubagentManager(
            settings=settings,
            parent_tools=parent.tools,
            catalog=parent.subagents.catalog,
            registry=None,
            model_factory=lambda _n: text_model("x"),
            store=parent.store,
        )
        assert bare.plan("explore", [])[3] == ["Glob", "Grep", "Read"]  # planning works
        with pytest.raises(ConfigError, match="agent_factory"):
            await bare.spawn("x", subagent_type="explore")


def test_tool_services_are_typed_and_accept_the_old_dict(tmp_path: Path) -> None:
    settings = load_settings(workspace=tmp_path)
    ask = object()
    ctx = ToolContext(
        session_id="s", workspace=tmp_path, settings=settings, services={"ask_user": ask, "x": 1}
    )
    assert isinstance(ctx.services, ToolServices)
    assert ctx.services.ask_user is ask and ctx.services["x"] == 1
    ctx.services["llm"] = "model"
    assert ctx.services.llm == "model" and "llm" in ctx.services
    assert {**ctx.services} == {"ask_user": ask, "llm": "model", "x": 1}
    layered = ToolServices(llm="a", read_only=True).overlay({"llm": "b"})
    assert layered.llm == "b" and layered.read_only


async def test_each_session_gets_its_own_services(tmp_path: Path) -> None:
    settings = load_settings(workspace=tmp_path)
    agent = build_agent(
        settings, model=text_model("one", "two"), cwd=tmp_path, no_defaults=True, hints=False,
        services={"web_search": "fake"},
    )  # fmt: skip
    with agent:
        first = await agent.run("a")
        second = await agent.run("b")
        one, two = agent.tool_context(first.session_id), agent.tool_context(second.session_id)
        assert one.services is not two.services and one.services is not agent.services
        assert one.services.web_search == "fake" and one.services.tool_gate is agent.gate
        assert one.services.llm is not None


async def test_no_ranking_when_hints_are_off_or_nothing_is_hintable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_matcher(_registry: object) -> None:
        raise AssertionError("the routing index was built")

    monkeypatch.setattr(hints_module, "_matcher", no_matcher)
    roots = tmp_path / "skills"
    make_skill(roots, "quiet", "disable-model-invocation: true\n")
    settings = load_settings(workspace=tmp_path)
    for enabled in (False, True):  # off; on, but no skill a hint could name
        agent = build_agent(
            settings, model=text_model("ok"), cwd=tmp_path, roots=[roots], no_defaults=True,
            hints=enabled,
        )  # fmt: skip
        with agent:
            result = await agent.run("handle the quiet files and reports")
        assert result.status == "completed"
        kinds = [json.loads(e.model_dump_json())["type"] for e in result.events]
        assert "skill_hint" not in kinds
