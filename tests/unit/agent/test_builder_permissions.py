"""build_agent's least-privilege wiring: permissions, composed skill sets, the Skill
tool's pre-approval, sub-agents, agent definitions, memory."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from skilldeck.agent.builder import build, build_agent
from skilldeck.agent.events import SubagentEndEvent, SubagentStartEvent, ToolResultEvent
from skilldeck.agent.permissions import SESSION_RULES_KEY, Approval, PermissionGate, ScopedGate
from skilldeck.agent.store import SessionStore
from skilldeck.agent.subagents import SubagentManager, TaskOutputTool, TaskTool, discover_agents
from skilldeck.config import Settings, load_settings
from skilldeck.errors import ConfigError, PolicyError, SkillNotFoundError
from skilldeck.llm.messages import SystemMessage
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.skills.rules import ToolRule
from skilldeck.tools.base import Tool, ToolContext, ToolRegistry, ToolResult
from skilldeck.tools.memory import MemoryTool

pytestmark = pytest.mark.anyio


def write_skill(root: Path, name: str, frontmatter: str = "", body: str = "Do it.") -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {name} helps with tests\n{frontmatter}---\n{body}\n",
        encoding="utf-8",
    )


def call(cid: str, name: str, **input: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "input": input}


def results(events: list[Any]) -> dict[str, ToolResultEvent]:
    return {e.id: e for e in events if isinstance(e, ToolResultEvent) and not e.is_sub_agent}


@pytest.fixture
def env(tmp_path: Path, skilldeck_home: Path) -> tuple[Settings, Path, Path]:
    roots = tmp_path / "skills"
    write_skill(roots, "reader", "allowed-tools: Read Grep\n")
    write_skill(roots, "no-grep", "allowed-tools: Read\nforbidden-tools: Grep\n")
    write_skill(roots, "writer", "allowed-tools: Write\nconflicts: [reader]\n")
    write_skill(
        roots,
        "echoer",
        "allowed-tools: Bash(echo:*) WebFetch Task\nforbidden-tools: Write\n",
        body="Use echo.",
    )
    write_skill(
        roots,
        "protocol",
        "allowed-tools: Read\nexecution-protocol: [First read, Then answer]\n"
        "preconditions: [notes exist]\n",
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("alpha\n", encoding="utf-8")
    return load_settings(workspace=work, home=skilldeck_home), roots, work


async def test_policy_from_config_and_flags(
    env: tuple[Settings, Path, Path], skilldeck_home: Path
) -> None:
    settings, roots, work = env
    (work / ".skilldeck").mkdir()
    (work / ".skilldeck" / "config.toml").write_text(
        '[permissions]\nmode = "acceptEdits"\ndeny = ["Read(./secret*)"]\nask = ["Edit"]\n',
        encoding="utf-8",
    )
    settings = load_settings(workspace=work, home=skilldeck_home)
    model = ScriptedModel.from_lines([{"text": "ok"}])
    with build_agent(
        settings, model=model, cwd=work, roots=[roots], allow=["Bash(echo:*)"], deny=["WebFetch"]
    ) as agent:
        assert isinstance(agent.gate, PermissionGate)
        policy = agent.gate.policy
        assert policy.mode == "acceptEdits"  # from the config file
        assert ToolRule("Bash", "echo:*") in policy.allow and ToolRule("WebFetch") in policy.deny
        assert ToolRule("Read", "./secret*") in policy.deny and ToolRule("Edit") in policy.ask
        assert "WebFetch" not in agent.tools  # wholly denied: not even shown
        assert {"Read", "Write", "Bash", "Memory", "Task", "TaskOutput"} <= set(agent.tools.names())
        assert "TaskOutput" in policy.read_only_tools and "Read" in policy.read_only_tools
    with build_agent(settings, model=model, cwd=work, permission_mode="plan") as agent:
        assert isinstance(agent.gate, PermissionGate) and agent.gate.policy.mode == "plan"
    with pytest.raises(ConfigError, match="permission mode"):
        build_agent(settings, model=model, cwd=work, permission_mode="yolo")
    with pytest.raises(ConfigError, match="Invalid permission rule"):
        build_agent(settings, model=model, cwd=work, allow=["Bash("])


async def test_a_workspace_config_cannot_erase_the_users_deny_rules(
    env: tuple[Settings, Path, Path], skilldeck_home: Path
) -> None:
    _, _, work = env
    skilldeck_home.mkdir(parents=True, exist_ok=True)
    (skilldeck_home / "config.toml").write_text(
        '[permissions]\ndeny = ["Bash(rm:*)"]\n', encoding="utf-8"
    )
    (work / ".skilldeck").mkdir()
    (work / ".skilldeck" / "config.toml").write_text(
        '[permissions]\ndeny = []\nallow = ["Bash"]\n', encoding="utf-8"
    )
    settings = load_settings(workspace=work, home=skilldeck_home)
    assert settings.permissions.deny == []  # plain merging would lose the user's rule
    model = ScriptedModel.from_lines([{"text": "ok"}])
    with build_agent(settings, model=model, cwd=work) as agent:
        assert isinstance(agent.gate, PermissionGate)
        assert ToolRule("Bash", "rm:*") in agent.gate.policy.deny
        assert ToolRule("Bash") in agent.gate.policy.allow


async def test_default_mode_pauses_a_write_and_resume_runs_it(
    env: tuple[Settings, Path, Path],
) -> None:
    settings, _, work = env
    model = ScriptedModel.from_lines(
        [{"tool_calls": [call("w", "Write", file_path="a.txt", content="hi")]}, {"text": "done"}]
    )
    with build_agent(settings, model=model, cwd=work, hints=False) as agent:
        paused = await agent.run("write a.txt")
        assert paused.status == "paused" and not (work / "a.txt").exists()
        assert paused.pending is not None and paused.pending["kind"] == "permission"
        done = await agent.resume(paused.session_id, approve=True)
    assert done.status == "completed" and (work / "a.txt").read_text(encoding="utf-8") == "hi"


async def test_allow_always_is_remembered_for_the_session_only(
    env: tuple[Settings, Path, Path],
) -> None:
    settings, _, work = env
    answers: list[str] = []

    def approver(request: Any) -> Approval:
        answers.append(request.call.input["command"])
        return Approval.ALWAYS

    line = {"tool_calls": [call("b", "Bash", command="echo hi")]}
    model = ScriptedModel.from_lines([line, line, {"text": "ok"}, line, {"text": "ok"}])
    with build_agent(settings, model=model, cwd=work, approver=approver, hints=False) as agent:
        first = await agent.run("twice")
        assert answers == ["echo hi"]  # asked once, then remembered
        state = agent.store.get(first.session_id).state
        assert state[SESSION_RULES_KEY]["allow"] == ["Bash(echo hi)"]  # saved with it
        await agent.run("again")
    assert answers == ["echo hi", "echo hi"]  # a new session asks again


async def test_skills_compose_to_exactly_their_tool_set(
    env: tuple[Settings, Path, Path],
) -> None:
    settings, roots, work = env
    model = ScriptedModel.from_lines(
        [
            {
                "tool_calls": [
                    call("r", "Read", file_path="notes.txt"),
                    call("g", "Grep", pattern="alpha"),
                    call("b", "Bash", command="touch forged"),
                ]
            },
            {"text": "done"},
        ]
    )
    with build_agent(
        settings,
        model=model,
        cwd=work,
        roots=[roots],
        no_defaults=True,
        skills=["reader", "no-grep"],
        permission_mode="bypassPermissions",
    ) as agent:
        assert agent.tools.names() == ["Read"]  # Grep forbidden by no-grep: most restrictive
        assert agent.composed is not None and agent.composed.names == ["reader", "no-grep"]
        result = await agent.run("read")
    assert model.requests[0].tool_names == ["Read"]
    by_id = results(result.events)
    assert not by_id["r"].is_error
    assert "forbidden by the active skills" in by_id["g"].content
    assert "tool Bash is not allowed by the active skills" in by_id["b"].content
    assert not (work / "forged").exists()


async def test_invalid_or_unknown_skill_sets_fail_fast(env: tuple[Settings, Path, Path]) -> None:
    settings, roots, work = env
    model = ScriptedModel.from_lines([{"text": "ok"}])
    with pytest.raises(PolicyError) as info:
        build_agent(settings, model=model, cwd=work, roots=[roots], skills=["reader", "writer"])
    assert [d.code for d in info.value.diagnostics] == ["SD303"]
    with pytest.raises(SkillNotFoundError, match="readr"):
        build_agent(settings, model=model, cwd=work, roots=[roots], skills=["readr"])


async def test_composed_protocol_and_bodies_reach_the_model(
    env: tuple[Settings, Path, Path],
) -> None:
    settings, roots, work = env
    model = ScriptedModel.from_lines([{"text": "ok"}])
    with build_agent(
        settings, model=model, cwd=work, roots=[roots], skills=["protocol"], hints=False
    ) as agent:
        result = await agent.run("go")
        system, body = agent.store.load_messages(result.session_id)[:2]
    assert isinstance(system, SystemMessage)
    assert "1. [protocol] First read\n2. [protocol] Then answer" in system.content
    assert "[protocol] notes exist" in system.content
    assert "<available_skills>" not in system.content  # no Skill tool, no catalogue
    assert getattr(body, "meta", None) == "skill-body"


async def test_a_loaded_skill_preapproves_its_tools_and_denies_its_forbidden_ones(
    env: tuple[Settings, Path, Path],
) -> None:
    settings, roots, work = env
    model = ScriptedModel.from_lines(
        [
            {"tool_calls": [call("e0", "Bash", command="echo before")]},
            {"tool_calls": [call("s", "Skill", skill="echoer")]},
            {
                "tool_calls": [
                    call("e1", "Bash", command="echo after"),
                    call("w", "Write", file_path="x.txt", content="x"),
                    call("f", "WebFetch", url="https://example.com"),
                ]
            },
            {"text": "done"},
        ]
    )
    asked: list[str] = []

    def approver(request: Any) -> bool:
        asked.append(request.call.name)
        return False

    with build_agent(
        settings,
        model=model,
        cwd=work,
        roots=[roots],
        no_defaults=True,
        deny=["WebFetch"],  # the session lacks WebFetch: a skill cannot bring it back
        approver=approver,
        permission_mode="acceptEdits",
        hints=False,
    ) as agent:
        assert "WebFetch" not in agent.tools
        result = await agent.run("use echoer")
        state = agent.store.get(result.session_id).state
    by_id = results(result.events)
    assert asked == ["Bash"]  # "echo before" asked (and was denied); "echo after" did not
    assert by_id["e0"].is_error and not by_id["e1"].is_error and "after" in by_id["e1"].content
    assert by_id["w"].is_error and "denied by rule Write" in by_id["w"].content  # forbidden
    assert by_id["f"].is_error and not (work / "x.txt").exists()
    rules = state[SESSION_RULES_KEY]
    assert "Bash(echo:*)" in rules["allow"] and "Task" not in rules["allow"]
    assert rules["deny"] == ["Write"]


async def test_task_and_memory_are_registered_for_the_main_agent(
    env: tuple[Settings, Path, Path], skilldeck_home: Path
) -> None:
    settings, roots, work = env
    model = ScriptedModel.from_lines([{"text": "ok"}])
    with build_agent(settings, model=model, cwd=work, roots=[roots]) as agent:
        assert isinstance(agent.tools.get("Task"), TaskTool)
        assert agent.tools.get("Agent") is agent.tools.get("Task")  # the alias
        assert isinstance(agent.tools.get("TaskOutput"), TaskOutputTool)
        assert isinstance(agent.tools.get("Memory"), MemoryTool)
        manager = agent.subagents
        assert manager is not None and manager.depth == 0
        assert manager.parent_tools is agent.tools and manager.parent_gate is agent.gate
        assert manager.store is agent.store
        # the default depth (1) means a child cannot spawn
        assert "Task" not in manager.plan("general-purpose", [])[3]
    flat = load_settings(workspace=work, home=skilldeck_home, agent={"max_depth": 0})
    with build_agent(flat, model=model, cwd=work, roots=[roots]) as agent:
        assert "Task" not in agent.tools and agent.subagents is None
    with build_agent(settings, model=model, cwd=work, roots=[roots], skills=["echoer"]) as agent:
        assert "Task" not in agent.tools  # a skill cannot grant spawning


async def test_memory_written_by_the_tool_is_in_the_next_system_prompt(
    env: tuple[Settings, Path, Path],
) -> None:
    settings, _, work = env
    model = ScriptedModel.from_lines(
        [
            {
                "for": "remember",
                "tool_calls": [
                    call(
                        "m", "Memory", action="write", key="MEMORY", content="The user likes tabs."
                    )
                ],
            },
            {"for": "remember", "text": "noted"},
            {"for": "recall", "text": "tabs"},
        ]
    )
    with build_agent(settings, model=model, cwd=work, hints=False) as agent:
        first = await agent.run("remember this")
        assert not results(first.events)["m"].is_error
        second = await agent.run("recall it")
        system = agent.store.load_messages(second.session_id)[0]
    path = settings.home / "memory" / "main" / "MEMORY.md"
    assert path.read_text(encoding="utf-8") == "The user likes tabs."
    assert isinstance(system, SystemMessage) and "The user likes tabs." in system.content
    assert f'<memory path="{path}">' in system.content


async def test_subagent_events_reach_the_parent_stream_and_children_inherit_denials(
    env: tuple[Settings, Path, Path],
) -> None:
    settings, roots, work = env
    model = ScriptedModel.from_lines(
        [
            {"tool_calls": [call("s", "Skill", skill="no-grep")]},
            {"tool_calls": [call("t", "Task", description="look", prompt="CHILD look")]},
            {"text": "parent done"},
            {"for": "CHILD", "tool_calls": [call("g", "Grep", pattern="alpha")]},
            {"for": "CHILD", "text": "child done"},
        ]
    )
    with build_agent(
        settings, model=model, cwd=work, roots=[roots], no_defaults=True, hints=False
    ) as agent:
        result = await agent.run("delegate")
        children = [s for s in agent.store.list() if s.parent_id == result.session_id]
    assert result.status == "completed" and result.text == "parent done"
    start = next(e for e in result.events if isinstance(e, SubagentStartEvent))
    end = next(e for e in result.events if isinstance(e, SubagentEndEvent))
    assert start.task_id == end.task_id == "task_1" and not start.background
    child = [e for e in result.events if e.is_sub_agent and e.task_id == "task_1"]
    grep = next(e for e in child if isinstance(e, ToolResultEvent) and e.name == "Grep")
    assert grep.is_error and "denied by rule Grep" in grep.content  # the parent's skill said so
    assert results(result.events)["t"].content.endswith("child done")
    assert len(children) == 1 and children[0].agent == "general-purpose"


def write_agent(work: Path, name: str, frontmatter: str, body: str) -> None:
    folder = work / ".skilldeck" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(f"---\n{frontmatter}---\n{body}\n", encoding="utf-8")


async def test_an_agent_definition_shapes_the_main_agent(
    env: tuple[Settings, Path, Path], tmp_path: Path
) -> None:
    settings, roots, work = env
    script = tmp_path / "reviewer.jsonl"
    script.write_text(
        '{"tool_calls": [{"id": "b", "name": "Bash", "input": {"command": "rm -rf x"}},'
        ' {"id": "w", "name": "Write", "input": {"file_path": "x", "content": "x"}},'
        ' {"id": "r", "name": "Read", "input": {"file_path": "notes.txt"}}]}\n'
        '{"text": "reviewed"}\n',
        encoding="utf-8",
    )
    write_agent(
        work,
        "reviewer",
        f"description: Reviews\nmodel: scripted:{script}\ntools: Read, Grep, Bash(git diff:*)\n"
        "skills: [reader]\nallow-skills: false\npermission-mode: acceptEdits\nmax-turns: 4\n",
        "You review code and never edit it.",
    )
    with build_agent(settings, cwd=work, roots=[roots], agent="reviewer", hints=False) as agent:
        assert agent.name == "reviewer" and agent.limits.max_turns == 4
        assert agent.model_spec == f"scripted:{script}"
        assert sorted(agent.tools.names()) == ["Grep", "Read"]  # ∩ reader's Read Grep; no Skill
        assert isinstance(agent.gate, ScopedGate)
        inner = agent.gate.inner
        assert isinstance(inner, PermissionGate) and inner.policy.mode == "acceptEdits"
        result = await agent.run("review")
        system, body = agent.store.load_messages(result.session_id)[:2]
    by_id = results(result.events)
    assert "this Bash call is not allowed by agent 'reviewer'" in by_id["b"].content
    assert "tool Write is not allowed by agent 'reviewer'" in by_id["w"].content
    assert not by_id["r"].is_error and result.text == "reviewed"
    assert isinstance(system, SystemMessage)
    assert system.content.startswith("You review code and never edit it.")
    assert '<skill name="reader">' in getattr(body, "content", "")
    other = ScriptedModel.from_lines([{"text": "x"}])
    with build_agent(
        settings, model=other, cwd=work, roots=[roots], agent="reviewer", max_turns=9
    ) as agent:
        assert agent.model is other and agent.limits.max_turns == 9  # explicit wins
    with pytest.raises(SkillNotFoundError, match="No agent named 'reviwer'"):
        build_agent(settings, model=other, cwd=work, agent="reviwer")


async def test_explore_definition_without_skills_has_no_skill_tool(
    env: tuple[Settings, Path, Path],
) -> None:
    settings, roots, work = env
    model = ScriptedModel.from_lines([{"text": "x"}])
    with build_agent(settings, model=model, cwd=work, roots=[roots], agent="explore") as agent:
        assert sorted(agent.tools.names()) == ["Glob", "Grep", "Read"]
        assert agent.hinter is None


# ---- property: a denied call is never executed, whatever the rules -----------------


class SpyInput(BaseModel):
    command: str


class SpyBash(Tool):
    """Stands in for Bash and records what actually ran."""

    name: ClassVar[str] = "Bash"
    description: ClassVar[str] = "spy"
    Input: ClassVar[type[BaseModel]] = SpyInput

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        self.ran.append(input.command)
        return ToolResult("ran")


RULES = st.sampled_from(
    ["Bash", "Bash(git:*)", "Bash(rm:*)", "Bash(git log)", "Bash(* --force)", "Read", "Edit"]
)
COMMANDS = st.sampled_from(
    ["git log", "rm -rf x", "git log && rm x", "git push --force", "ls", "git log $(rm x)"]
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    allow=st.lists(RULES, max_size=3),
    ask=st.lists(RULES, max_size=2),
    deny=st.lists(RULES, max_size=2),
    mode=st.sampled_from(["default", "acceptEdits", "plan", "bypassPermissions"]),
    command=COMMANDS,
)
def test_property_a_denied_call_is_never_executed(
    tmp_path: Path,
    skilldeck_home: Path,
    allow: list[str],
    ask: list[str],
    deny: list[str],
    mode: str,
    command: str,
) -> None:
    settings = load_settings(workspace=tmp_path, home=skilldeck_home)
    spy = SpyBash()
    model = ScriptedModel.from_lines(
        [{"tool_calls": [call("c", "Bash", command=command)]}, {"text": "end"}]
    )
    store = SessionStore(Path(":memory:"))
    agent = build_agent(
        settings,
        model=model,
        cwd=tmp_path,
        tools=[spy],
        allow=allow,
        ask=ask,
        deny=deny,
        permission_mode=mode,
        approver=lambda _request: Approval.ALLOW,  # a human who approves every ask
        session_store=store,
        hints=False,
    )
    try:
        anyio.run(agent.run, "go")
    finally:
        store.close()
    denied = any(
        ToolRule.parse(r).matches("Bash", {"command": command}, workspace=tmp_path, deny=True)
        for r in deny
    )
    if denied or mode == "plan":
        assert spy.ran == []
    else:
        assert spy.ran == [command]  # everything else ran (asks were approved)


# ---- Ctrl-C: background sub-agents are cancelled and say so ------------------------


class SlowInput(BaseModel):
    seconds: float


class Slow(Tool):
    name: ClassVar[str] = "Slow"
    description: ClassVar[str] = "Waits."
    Input: ClassVar[type[BaseModel]] = SlowInput

    def __init__(self) -> None:
        self.started = threading.Event()

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        self.started.set()
        await anyio.sleep(input.seconds)
        return ToolResult("woke up")


async def test_cancel_all_cancels_background_children_and_records_it(
    env: tuple[Settings, Path, Path],
) -> None:
    settings, _, _ = env
    slow = Slow()
    model = ScriptedModel.from_lines(
        [{"tool_calls": [call("s", "Slow", seconds=60)]}, {"text": "never"}]
    )
    with SessionStore.open(settings) as store:
        manager = SubagentManager(
            settings=settings,
            parent_tools=ToolRegistry([slow]),
            catalog=discover_agents(settings),
            registry=None,
            model_factory=lambda _name: model,
            store=store,
            agent_factory=build,
        )
        task_id = manager.spawn_background("wait a minute")
        assert await anyio.to_thread.run_sync(slow.started.wait, 10)
        assert manager.cancel_all() == [task_id]
        text = await manager.output(task_id)
        assert text.startswith("Sub-agent (general-purpose) failed (cancelled)")
        (child,) = store.list()
        assert child.status == "cancelled"
