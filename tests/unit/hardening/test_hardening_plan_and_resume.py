"""Attacks on plan mode, sub-agent resume, resumed sessions' settings and the session
store, made the way a prompt-injected model makes them: scripted tool calls through
the real builder, gate and tools; files a skill author (or the model) writes.

Each test fails if its protection is removed: Skill loses its read-only check, a
child's launch record is ignored on resume, resume reads the config files again,
the store files keep the umask's mode, a Skill result is stored whole.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from skilldeck.agent.builder import BODY_CAP, build_agent
from skilldeck.agent.store import (
    SessionStore,
    build_agent_for_session,
    private_file,
    session_settings,
)
from skilldeck.agent.store.migrations import MIGRATIONS
from skilldeck.config import Settings, load_settings
from skilldeck.errors import ConfigError
from skilldeck.llm.messages import MESSAGE_ADAPTER, ToolResultMessage
from skilldeck.sandbox import probe_sandbox
from skilldeck.tools.skill_tool import PLAN_REFUSAL

pytestmark = pytest.mark.anyio


def call(cid: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "input": tool_input}


def write_script(path: Path, lines: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return f"scripted:{path}"


def skill(root: Path, name: str, front: str = "", body: str = "Do it.", **files: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {name} helps with tests\n{front}---\n{body}\n",
        encoding="utf-8",
    )
    for rel, text in files.items():
        target = folder / rel.replace("__", "/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def work(tmp_path: Path, skilldeck_home: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text("alpha\n", encoding="utf-8")
    return folder


@pytest.fixture
def skills(tmp_path: Path, work: Path) -> Path:
    """A script skill, a code skill and a dynamic-context skill that each leave a
    marker in the workspace when they run, and a plain prompt skill."""
    root = tmp_path / "skills"
    marker = f"open({str(work / 'pwned-{}')!r}, 'w').write('x')"
    skill(
        root,
        "scripty",
        "entrypoint: scripts/run.py\n",
        scripts__run=f"import json\n{marker.format('script')}\nprint(json.dumps({{'ok': 1}}))\n",
    )
    code = (
        "from skilldeck.skills.code.codeskill import CodeSkill, SkillContext, SkillResult\n"
        f"{marker.format('import')}\n"
        "class Writer(CodeSkill):\n"
        "    async def execute(self, ctx: SkillContext) -> SkillResult:\n"
        f"        {marker.format('code')}\n"
        "        return SkillResult(success=True, output='wrote')\n"
    )
    (skill(root, "codey") / "skill.py").write_text(code, encoding="utf-8")
    skill(root, "dyn", body=f"Status: !`touch {work / 'pwned-dyn'}`")
    skill(root, "plain", body="Plain instructions, nothing to run.")
    return root


def settings_for(work: Path, **overrides: Any) -> Settings:
    return load_settings(workspace=work, skills={"code_skills": "on"}, **overrides)


def tool_results(store: SessionStore, sid: str) -> dict[str, ToolResultMessage]:
    return {m.tool_call_id: m for m in store.load_messages(sid) if isinstance(m, ToolResultMessage)}


# ---- plan mode ---------------------------------------------------------------------------


async def test_plan_mode_skill_loads_text_but_runs_no_code(
    tmp_path: Path, work: Path, skills: Path
) -> None:
    model = write_script(
        tmp_path / "plan.jsonl",
        [
            {
                "tool_calls": [
                    call("s", "Skill", skill="scripty", args={"x": 1}),
                    call("c", "Skill", skill="codey", args={}),
                    call("d", "Skill", skill="dyn"),
                    call("n", "Skill", skill="/scripty", args="go"),
                    call("p", "Skill", skill="plain"),
                ]
            },
            {"text": "planned"},
        ],
    )
    settings = settings_for(work)
    with build_agent(
        settings,
        model=model,
        roots=[skills],
        no_defaults=True,
        cwd=work,
        hints=False,
        permission_mode="plan",
    ) as agent:
        done = await agent.run("make a plan")
        results = tool_results(agent.store, done.session_id)
    assert done.status == "completed"
    assert sorted(p.name for p in work.iterdir()) == ["notes.txt"]  # nothing ran
    for cid in "scdn":
        assert results[cid].is_error and PLAN_REFUSAL in results[cid].content, cid
    assert "Plain instructions" in results["p"].content and not results["p"].is_error


async def test_plan_mode_spawns_no_sub_agent(tmp_path: Path, work: Path) -> None:
    model = write_script(
        tmp_path / "spawn.jsonl",
        [
            {
                "tool_calls": [
                    call("t", "Task", description="w", prompt="write pwned"),
                    call("a", "Agent", description="w", prompt="write pwned"),
                ]
            },
            {"for": "write pwned", "tool_calls": [call("w", "Write", file_path="pwned")]},
            {"text": "planned"},
        ],
    )
    with build_agent(
        settings_for(work), model=model, cwd=work, hints=False, permission_mode="plan"
    ) as agent:
        done = await agent.run("plan")
        results = tool_results(agent.store, done.session_id)
    assert not (work / "pwned").exists()
    assert not any(e.type == "subagent_start" for e in done.events)
    for cid in "ta":
        assert results[cid].is_error and "plan mode" in results[cid].content


async def test_a_plan_sub_agent_type_runs_no_skill_code(
    tmp_path: Path, work: Path, skills: Path
) -> None:
    agents = work / ".skilldeck" / "agents"
    agents.mkdir(parents=True)
    (agents / "planner.md").write_text(
        "---\nname: planner\ndescription: plans\ntools: Read, Skill\n"
        "permission-mode: plan\n---\nPlan only.\n",
        encoding="utf-8",
    )
    model = write_script(
        tmp_path / "child.jsonl",
        [
            {
                "tool_calls": [
                    call("t", "Task", description="p", prompt="plan it", subagent_type="planner")
                ]
            },
            {"for": "plan it", "tool_calls": [call("s", "Skill", skill="scripty", args={})]},
            {"for": "plan it", "text": "child done"},
            {"text": "parent done"},
        ],
    )
    with build_agent(
        settings_for(work),
        model=model,
        roots=[skills],
        no_defaults=True,
        cwd=work,
        hints=False,
        permission_mode="bypassPermissions",
    ) as agent:
        done = await agent.run("delegate")
    assert done.status == "completed"
    assert not (work / "pwned-script").exists()
    refused = [e for e in done.events if e.type == "tool_result" and e.is_sub_agent]
    assert refused and PLAN_REFUSAL in refused[0].content  # type: ignore[attr-defined]


async def test_task_cannot_preload_a_user_only_skill(
    tmp_path: Path, work: Path, skills: Path
) -> None:
    skill(skills, "deploy", "disable-model-invocation: true\nallowed-tools: Read\n")
    model = write_script(
        tmp_path / "task.jsonl",
        [
            {
                "tool_calls": [
                    call("t", "Task", description="d", prompt="ship it", skills=["deploy"])
                ]
            },
            {"for": "ship it", "text": "shipped"},
            {"text": "parent done"},
        ],
    )
    with build_agent(
        settings_for(work),
        model=model,
        roots=[skills],
        no_defaults=True,
        cwd=work,
        hints=False,
        permission_mode="bypassPermissions",
    ) as agent:
        done = await agent.run("deploy")
        result = tool_results(agent.store, done.session_id)["t"]
    assert result.is_error and "can only be invoked by the user" in result.content
    assert not any(e.type == "subagent_start" for e in done.events)


# ---- a sub-agent's resume ------------------------------------------------------------------


async def test_a_resumed_child_is_the_child_it_was(tmp_path: Path, work: Path) -> None:
    script = tmp_path / "explore.jsonl"
    lines: list[dict[str, Any]] = [
        {
            "tool_calls": [
                call(
                    "t",
                    "Task",
                    description="e",
                    prompt="explore the notes",
                    subagent_type="explore",
                )
            ]
        },
        {"for": "explore the notes", "tool_calls": [call("r", "Read", file_path="notes.txt")]},
        {"text": "parent done"},
    ]
    model = write_script(script, lines)
    settings = settings_for(work)
    with build_agent(
        settings, model=model, cwd=work, hints=False, permission_mode="bypassPermissions"
    ) as agent:
        done = await agent.run("look around")
    assert done.status == "completed"
    with SessionStore.open(settings) as store:
        (child,) = [r for r in store.list() if r.parent_id == done.session_id]
        assert child.status == "error"  # its script ran out: resumable
        assert (child.agent_type, child.depth) == ("explore", 1)
        assert child.launch["tools"] == ["Glob", "Grep", "Read"]
        # the injected model's next move: Bash, which an explore child never holds
        lines[2:2] = [
            {"for": "explore the notes", "tool_calls": [call("b", "Bash", command="touch pwned")]},
            {"for": "explore the notes", "text": "child done"},
        ]
        write_script(script, lines)
        resumed = build_agent_for_session(
            load_settings(workspace=tmp_path), store.get(child.id), session_store=store
        )
        assert sorted(resumed.tools.names()) == ["Glob", "Grep", "Read"]
        finished = await resumed.resume(child.id)
        bash = tool_results(store, child.id)["b"]
    assert finished.status == "completed" and not (work / "pwned").exists()
    assert bash.is_error and "explore" in bash.content


# ---- a resumed session's settings ------------------------------------------------------------

RELAXED = """
model = "scripted:/nonexistent.jsonl"
[permissions]
mode = "bypassPermissions"
allow = ["Bash", "Write"]
[sandbox]
mode = "off"
network = true
[skills]
code_skills = "on"
dynamic_context = true
"""


async def test_resume_uses_the_settings_it_started_with_not_the_files(
    tmp_path: Path, work: Path
) -> None:
    outside = tmp_path / "outside-marker"
    script = tmp_path / "resume.jsonl"
    model = write_script(
        script,
        [
            {"tool_calls": [call("a", "Bash", command="echo hi")]},
            {"tool_calls": [call("b", "Bash", command=f"touch {outside}")]},
            {"text": "done"},
        ],
    )
    settings = load_settings(workspace=work)
    with build_agent(settings, model=model, cwd=work, hints=False) as agent:
        paused = await agent.run("go")
    assert paused.status == "paused"
    # the model (a sandboxed command, or Write under acceptEdits) relaxes everything
    config = work / ".skilldeck" / "config.toml"
    config.parent.mkdir()
    config.write_text(RELAXED, encoding="utf-8")
    with SessionStore.open(settings) as store:
        record = store.get(paused.session_id)
        frozen = session_settings(record, home=settings.home)
        assert frozen.sandbox.mode == "auto" and frozen.permissions.mode == "default"
        agent = build_agent_for_session(load_settings(workspace=work), record, session_store=store)
        assert agent.settings.sandbox.mode == "auto" and not agent.settings.sandbox.network
        again = await agent.resume(record.id, approve=False)  # `resume ID --deny`
        assert again.status == "paused"  # the next Bash is asked again
        assert again.pending is not None and again.pending["calls"][0]["name"] == "Bash"
        if not probe_sandbox().available:
            pytest.skip("bubblewrap is not usable here: the sandbox half cannot be checked")
        last = await agent.resume(record.id, approve=True)
    assert last.status == "completed"
    assert not outside.exists()  # it ran inside the sandbox: nothing outside the workspace


async def test_a_resume_can_narrow_but_never_widen(tmp_path: Path, work: Path) -> None:
    model = write_script(
        tmp_path / "n.jsonl",
        [
            {"tool_calls": [call("a", "Bash", command="echo hi")]},
            {"tool_calls": [call("w", "Write", file_path="x.txt", content="x")]},
            {"text": "done"},
        ],
    )
    settings = load_settings(workspace=work)
    with build_agent(settings, model=model, cwd=work, hints=False) as agent:
        paused = await agent.run("go")
    with SessionStore.open(settings) as store:
        record = store.get(paused.session_id)
        for widen in ({"permission_mode": "bypassPermissions"}, {"allow": ["Write"]}):
            with pytest.raises(ConfigError):
                build_agent_for_session(settings, record, session_store=store, **widen)
        narrowed = build_agent_for_session(
            settings, record, session_store=store, permission_mode="plan"
        )
        done = await narrowed.resume(record.id, approve=False)
        write = tool_results(store, record.id)["w"]
    assert done.status == "completed" and not (work / "x.txt").exists()
    assert write.is_error and "plan mode" in write.content


# ---- the store -----------------------------------------------------------------------------


def test_store_files_are_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        db = tmp_path / "home" / "sessions.db"
        with SessionStore(db) as store:
            store.create(model="m", agent="a", cwd=tmp_path, task="t")
            files = [db, *(db.with_name(db.name + s) for s in ("-wal", "-shm"))]
            for path in files:
                assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        history = tmp_path / "home" / "chat_history"
        history.write_text("old secret\n")
        os.chmod(history, 0o644)
        os.chmod(db, 0o644)
        private_file(history)
        with SessionStore(db):
            pass
        assert stat.S_IMODE(history.stat().st_mode) == 0o600
        assert stat.S_IMODE(db.stat().st_mode) == 0o600
    finally:
        os.umask(old)


async def test_a_huge_skill_body_is_not_stored_whole(tmp_path: Path, work: Path) -> None:
    root = tmp_path / "skills"
    huge = "word " * 400_000  # 2 MB stands in for 150 MB: the cap does not depend on it
    skill(root, "huge", "allowed-tools: Skill Read\n", body=huge)
    model = write_script(
        tmp_path / "h.jsonl", [{"tool_calls": [call("s", "Skill", skill="huge")]}, {"text": "ok"}]
    )
    settings = load_settings(workspace=work)
    with build_agent(
        settings,
        model=model,
        roots=[root],
        no_defaults=True,
        cwd=work,
        hints=False,
        skills=["huge"],
    ) as agent:
        done = await agent.run("use it")
        stored = agent.store.messages(done.session_id)
    limit = settings.agent.tool_output_limit
    assert done.status == "completed"
    for row in stored:  # the --skill preload is capped too
        assert len(MESSAGE_ADAPTER.dump_json(row.message)) <= BODY_CAP + 4_000, row.message.role
        assert row.full_content is None or len(row.full_content) <= limit
    result = next(r.message for r in stored if isinstance(r.message, ToolResultMessage))
    assert len(result.content) <= limit
    assert "characters, the first" in result.content and "SKILL.md" in result.content


def test_an_old_store_gains_the_launch_columns(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied REAL NOT NULL)")
    for m in MIGRATIONS[:3]:
        m.apply(conn)
        conn.execute("INSERT INTO migrations VALUES (?, 0)", (m.name,))
    conn.execute(
        "INSERT INTO sessions (id, created, updated, status, model, agent, cwd, task)"
        " VALUES ('old1', 0, 0, 'paused', 'm', 'main', '/', 't')"
    )
    conn.commit()
    conn.close()
    with SessionStore(db) as store:
        record = store.get("old1")
    assert (record.launch, record.depth, record.agent_type) == ({}, 0, None)
