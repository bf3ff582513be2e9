"""Issue 15, class 7 (and the file-tool halves of classes 3 and 9): path rules and file
tools agree on the resolved real path; Glob/Grep leave out what the rules deny while
they walk; control files are never written; searches stop at a wall clock; Read
streams with caps.

Each attack is made the way a prompt-injected model makes it: scripted tool calls
through ``build_agent`` (the real gate, dispatcher and tools), or the tool objects.
"""

from __future__ import annotations

import os
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hardening_helpers import run_with_deadline

from skilldeck.agent.builder import build_agent
from skilldeck.agent.events import ToolResultEvent
from skilldeck.config import Settings, load_settings
from skilldeck.llm.scripted import ScriptedModel
from skilldeck.tools.base import ToolContext
from skilldeck.tools.fs import GlobTool, GrepTool, ReadTool, WriteTool

pytestmark = pytest.mark.anyio

SECRET = "TOPSECRET-7f3a"


def call(cid: str, name: str, **input: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "input": input}


@pytest.fixture
def work(tmp_path: Path, skilldeck_home: Path) -> Path:
    ws = (tmp_path / "ws").resolve()
    (ws / "secrets").mkdir(parents=True)
    (ws / "secrets" / "key.txt").write_text(f"key = {SECRET}\n", encoding="utf-8")
    (ws / ".env").write_text(f"TOKEN={SECRET}\n", encoding="utf-8")
    (ws / "README.md").write_text("hello\n", encoding="utf-8")
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("print('hi')\n", encoding="utf-8")
    return ws


def settings_for(work: Path, home: Path) -> Settings:
    return load_settings(workspace=work, home=home)


async def run_calls(
    work: Path, home: Path, calls: list[dict[str, Any]], **options: Any
) -> dict[str, ToolResultEvent]:
    model = ScriptedModel.from_lines([{"tool_calls": calls}, {"text": "done"}])
    settings = settings_for(work, home)
    with build_agent(settings, model=model, cwd=work, hints=False, **options) as agent:
        result = await agent.run("go")
    return {e.id: e for e in result.events if isinstance(e, ToolResultEvent) and not e.is_sub_agent}


# ---- class 7: every spelling of a denied path is denied ------------------------------


async def test_read_deny_holds_for_every_spelling_of_the_path(
    work: Path, skilldeck_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(work)
    (work / "link").symlink_to(work / "secrets")
    (work / "docs").mkdir()
    (work / "docs" / "k").symlink_to(work / "secrets" / "key.txt")
    spellings = [
        f"/proc/self/root{work}/secrets/key.txt",
        "link/key.txt",
        "docs/k",
        "src/../secrets/key.txt",
        f"/proc/{os.getpid()}/cwd/secrets/key.txt",
        "/proc/self/cwd/.env",
    ]
    calls = [call(f"r{i}", "Read", file_path=p) for i, p in enumerate(spellings)]
    out = await run_calls(work, skilldeck_home, calls, deny=["Read(./secrets/**)", "Read(./.env)"])
    for i, spelling in enumerate(spellings):
        assert out[f"r{i}"].is_error, spelling
        assert SECRET not in out[f"r{i}"].content, spelling


async def test_grep_and_glob_leave_out_denied_paths_whatever_their_arguments(
    work: Path, skilldeck_home: Path
) -> None:
    (work / "link").symlink_to(work / "secrets")
    calls = [
        call("g1", "Grep", pattern=SECRET, output_mode="content"),
        call("g2", "Grep", pattern=SECRET, output_mode="content", file_path="README.md"),
        call("g3", "Grep", pattern="key", output_mode="files_with_matches", path="."),
        call("g4", "Grep", pattern=SECRET, path="secrets"),
        call("l1", "Glob", pattern="**/*"),
        call("l2", "Glob", pattern=f"{work}/**/*"),
        call("l3", "Glob", pattern="secrets/*"),
    ]
    out = await run_calls(work, skilldeck_home, calls, deny=["Read(./secrets/**)", "Read(./.env)"])
    for cid in ("g1", "g2", "g3", "l1", "l2", "l3"):
        assert SECRET not in out[cid].content, cid
        assert "key.txt" not in out[cid].content, cid
        assert ".env" not in out[cid].content, cid
    assert "README.md" in out["l1"].content and "app.py" in out["l1"].content
    assert out["g4"].is_error and "denied" in out["g4"].content


async def test_a_denied_folder_is_not_entered_by_the_walk(work: Path) -> None:
    asked: list[Path] = []

    def only_src(tool: str, path: Path) -> Any:
        from skilldeck.tools.base import PathVerdict

        asked.append(path)
        return PathVerdict("deny" if path.name == "secrets" else "allow")

    ctx = ToolContext(session_id="t", workspace=work, settings=Settings(workspace=work))
    ctx.path_filter = only_src
    result = await GlobTool().call({"pattern": "**/*"}, ctx)
    assert "key.txt" not in result.content and "left out by permission rules" in result.content
    assert work / "secrets" in asked
    assert not any(p.parent == work / "secrets" for p in asked)  # never listed inside


async def test_an_edit_deny_holds_through_proc_self_root(work: Path, skilldeck_home: Path) -> None:
    (work / "protected").mkdir()
    calls = [
        call("w1", "Write", file_path=f"/proc/self/root{work}/protected/x", content="pwn"),
        call("w2", "Write", file_path="src/../protected/y", content="pwn"),
    ]
    out = await run_calls(
        work,
        skilldeck_home,
        calls,
        deny=["Edit(protected/**)"],
        permission_mode="bypassPermissions",
    )
    assert out["w1"].is_error and out["w2"].is_error
    assert not any((work / "protected").iterdir())


async def test_file_tools_refuse_system_trees(work: Path) -> None:
    ctx = ToolContext(session_id="t", workspace=work, settings=Settings(workspace=work))
    for path in (f"/proc/self/root{work}/README.md", "/proc/self/environ", "/dev/stdin"):
        result = await ReadTool().call({"file_path": path}, ctx)
        assert result.is_error and "never use" in result.content, path
    result = await GlobTool().call({"pattern": "/proc/self/root/**/*"}, ctx)
    assert result.is_error


# ---- class 3 (file tools): control files are never written ---------------------------

CONTROL_FILES = [
    ".skilldeck/config.toml",
    ".claude/skills/x/skill.py",
    ".agents/evil.md",
    ".git/config",
    ".git/hooks/pre-commit",
    "sub/project/.claude/settings.json",
    ".Claude/skills/y/SKILL.md",
]


@pytest.mark.parametrize("target", CONTROL_FILES)
async def test_no_file_tool_writes_a_control_file(work: Path, target: str) -> None:
    ctx = ToolContext(session_id="t", workspace=work, settings=Settings(workspace=work))
    write = await WriteTool().call({"file_path": target, "content": "[sandbox]\n"}, ctx)
    assert write.is_error and "control skilldeck or git" in write.content
    assert "the user must edit them themselves" in write.content
    assert not (work / target).exists()


async def test_control_files_are_refused_in_every_mode_and_spelling(
    work: Path, skilldeck_home: Path
) -> None:
    (work / ".git").mkdir()
    (work / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (work / "docs").mkdir()
    (work / "docs" / "g").symlink_to(work / ".git")
    calls = [
        call("a", "Write", file_path=".skilldeck/config.toml", content='[sandbox]\nmode="off"\n'),
        call(
            "b", "Write", file_path=f"/proc/self/root{work}/.claude/skills/x/skill.py", content="x"
        ),
        call("c", "Read", file_path="docs/g/config"),
        call(
            "d",
            "Edit",
            file_path="docs/g/config",
            old_string="[core]",
            new_string="[core]\n\tfsmonitor = touch /tmp/pwn",
        ),
        call("e", "Write", file_path=str(skilldeck_home / "config.toml"), content="x"),
    ]
    for mode in ("acceptEdits", "bypassPermissions"):
        out = await run_calls(
            work, skilldeck_home, calls, permission_mode=mode, allow=["Edit(docs/**)"]
        )
        for cid in ("a", "b", "d", "e"):
            assert out[cid].is_error, (mode, cid, out[cid].content)
        assert "themselves" in out["a"].content
    assert not (work / ".skilldeck").exists() and not (work / ".claude").exists()
    assert (work / ".git" / "config").read_text(encoding="utf-8") == "[core]\n"


async def test_home_inside_the_workspace_is_protected(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = work / "dot-home"
    monkeypatch.setenv("SKILLDECK_HOME", str(home))
    ctx = ToolContext(session_id="t", workspace=work, settings=Settings(workspace=work, home=home))
    result = await WriteTool().call({"file_path": "dot-home/config.toml", "content": "x"}, ctx)
    assert result.is_error and "home" in result.content


# ---- class 9: wall clocks and caps ----------------------------------------------------


async def test_a_catastrophic_regex_stops_at_the_budget(work: Path) -> None:
    (work / "evil.txt").write_text("a" * 40 + "b\n", encoding="utf-8")
    ctx = ToolContext(session_id="t", workspace=work, settings=Settings(workspace=work))
    ctx.call_budget = 0.5
    started = time.monotonic()
    result = await GrepTool().call({"pattern": "(a+)+$", "path": "evil.txt"}, ctx)
    assert time.monotonic() - started < 120  # a hang fails instead of freezing the suite
    assert not result.is_error
    assert "limit" in result.content and "partial" in result.content


async def test_the_runs_wall_clock_caps_a_search(work: Path) -> None:
    (work / "evil.txt").write_text("a" * 40 + "b\n", encoding="utf-8")
    ctx = ToolContext(session_id="t", workspace=work, settings=Settings(workspace=work))
    ctx.deadline = time.monotonic()  # max_wall_seconds already spent
    grep = await GrepTool().call({"pattern": "(a+)+$"}, ctx)
    glob = await GlobTool().call({"pattern": "**/*"}, ctx)
    for result in (grep, glob):
        assert "agent.max_wall_seconds" in result.content


async def test_deep_glob_patterns_over_a_deep_tree_end(work: Path) -> None:
    deep = work
    for _ in range(300):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "leaf.txt").write_text("x\n", encoding="utf-8")
    ctx = ToolContext(session_id="t", workspace=work, settings=Settings(workspace=work))

    def glob() -> Any:
        import anyio

        return anyio.run(GlobTool().call, {"pattern": "**/**/**/**/**/**/**/*x"}, ctx)

    finished, result = run_with_deadline(glob, 120)
    assert finished, "Glob with a deep pattern over a deep tree did not end"
    assert not result.is_error and "folder(s) deeper than" in result.content


def test_glob_matching_cannot_backtrack_catastrophically() -> None:
    from skilldeck.skills.rules import path_rule_matches
    from skilldeck.tools.fs._walk import compile_glob

    path = "/".join(["a"] * 2000) + "/b"
    finished, hit = run_with_deadline(
        lambda: compile_glob("**/" * 30 + "*a*a*a*a*a*a*a*a*c").match(path), 60
    )
    assert finished and hit is False
    rule = "**/" * 20 + "*a*a*a*a*a*a*a*a*c"
    finished, hit = run_with_deadline(
        lambda: path_rule_matches(rule, Path("/ws") / path, Path("/ws")), 60
    )
    assert finished and hit is False


async def test_read_of_a_huge_one_line_file_streams(work: Path) -> None:
    size = 50 * 1024 * 1024
    with open(work / "big.txt", "wb") as fh:
        block = b"x" * (1024 * 1024)
        for _ in range(size // len(block)):
            fh.write(block)
    ctx = ToolContext(session_id="t", workspace=work, settings=Settings(workspace=work))
    tracemalloc.start()
    try:
        result = await ReadTool().call({"file_path": "big.txt"}, ctx)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not result.is_error
    assert f"line truncated: {size:,} bytes" in result.content
    assert peak < size // 10, f"Read peaked at {peak:,} bytes for a {size:,}-byte file"


class _AsyncGate:
    """A gate that really awaits (and denies ``secrets``), or breaks."""

    def __init__(self, *, broken: bool = False) -> None:
        self.broken = broken

    async def check(self, call: Any, ctx: ToolContext) -> Any:
        import anyio

        from skilldeck.agent.permissions import GateDecision

        await anyio.sleep(0)
        if self.broken:
            raise RuntimeError("gate exploded")
        path = str(next(iter(call.input.values()), ""))
        return GateDecision.deny("no") if "secrets" in path else GateDecision.allow()


async def test_the_path_filter_asks_async_gates_and_fails_closed(work: Path) -> None:
    from skilldeck.agent.dispatch import gate_path_filter

    ctx = ToolContext(session_id="t", workspace=work, settings=Settings(workspace=work))
    ctx.path_filter = gate_path_filter(_AsyncGate(), ctx)
    listed = await GlobTool().call({"pattern": "**/*"}, ctx)
    assert "README.md" in listed.content and "key.txt" not in listed.content
    ctx.path_filter = gate_path_filter(_AsyncGate(broken=True), ctx)
    broken = await GrepTool().call({"pattern": SECRET, "path": "src"}, ctx)
    assert broken.is_error and SECRET not in broken.content
