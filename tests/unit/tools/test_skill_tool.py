"""The Skill tool in each mode: prompt, script (with and without args), code, query,
errors, gating, dynamic context through permission checks, description and schema."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
from pydantic import BaseModel

from skilldeck.config import Settings
from skilldeck.llm.messages import ToolCall
from skilldeck.skills.model.skill import Skill, SkillKind, SkillSource
from skilldeck.skills.model.spec import SkillMetadata
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools import skill_tool as skill_tool_module
from skilldeck.tools.base import Tool, ToolContext, ToolRegistry, ToolResult
from skilldeck.tools.skill_tool import SkillTool

pytestmark = pytest.mark.anyio


def add_skill(
    root: Path,
    name: str,
    body: str = "Do the thing.",
    *,
    files: dict[str, str] | None = None,
    description: str = "",
    **meta: Any,
) -> Skill:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    head = f"---\nname: {name}\ndescription: {description or name}\n---\n"
    (folder / "SKILL.md").write_text(head + textwrap.dedent(body), encoding="utf-8")
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(textwrap.dedent(text), encoding="utf-8")
    kind = SkillKind.PROMPT
    if (folder / "skill.py").exists():
        kind = SkillKind.CODE
    elif meta.get("entrypoint"):
        kind = SkillKind.SCRIPT
    metadata = SkillMetadata(name=name, description=description or f"The {name} skill", **meta)
    return Skill(
        metadata=metadata,
        folder=folder,
        skill_md=folder / "SKILL.md",
        body_offset=len(head.encode()),
        kind=kind,
        source=SkillSource.ROOT,
        root=root,
    )


@pytest.fixture
def env(tmp_path: Path) -> tuple[Settings, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = Settings(workspace=ws, sandbox={"mode": "off"}, skills={"disabled": ["off-skill"]})
    return settings, tmp_path / "skills"


def make_tool(settings: Settings, *skills: Skill, **kwargs: Any) -> SkillTool:
    registry = SkillRegistry(settings)
    for skill in skills:
        registry.register(skill)
    return SkillTool(registry, **kwargs)


def context(settings: Settings, **services: Any) -> ToolContext:
    return ToolContext(
        session_id="sess-7", workspace=settings.workspace, settings=settings, services=services
    )


async def call(tool: SkillTool, ctx: ToolContext, **raw: Any) -> ToolResult:
    return await tool.call(raw, ctx)


SCRIPT = """
import json, sys
args = json.loads(sys.argv[1])
if args.get("fail"):
    sys.stderr.write("cannot do that\\n")
    sys.exit(5)
print(json.dumps({"sum": sum(args["numbers"])}))
"""


async def test_prompt_skill_returns_level2(env: tuple[Settings, Path]) -> None:
    settings, root = env
    skill = add_skill(
        root,
        "review",
        "Review $ARGUMENTS in ${SKILL_DIR} for session ${SESSION_ID}.\n",
        files={"references/guide.md": "guide"},
        allowed_tools=["Read", "Bash(git diff:*)"],
        forbidden_tools=["Write"],
    )
    tool = make_tool(settings, skill)
    result = await call(tool, context(settings), skill="review", args="src/app.py")
    assert not result.is_error
    lines = result.content.splitlines()
    assert lines[0] == "Loaded skill review (prompt)"
    assert f"Base directory for this skill: {skill.folder}" in result.content
    assert f"Review src/app.py in {skill.folder} for session sess-7." in result.content
    assert "references/guide.md" in result.content
    assert result.data["mode"] == "loaded" and result.data["kind"] == "prompt"
    assert result.data["allowed_tools"] == ["Read", "Bash(git diff:*)"]
    assert result.data["forbidden_tools"] == ["Write"]


async def test_slash_prefixed_name_is_accepted(env: tuple[Settings, Path]) -> None:
    settings, root = env
    tool = make_tool(settings, add_skill(root, "review"))
    result = await call(tool, context(settings), skill="/review")
    assert result.content.startswith("Loaded skill review (prompt)")


async def test_script_skill_without_args_returns_instructions(env: tuple[Settings, Path]) -> None:
    settings, root = env
    skill = add_skill(
        root,
        "adder",
        'Pass {"numbers": [...]}.',
        files={"scripts/add.py": SCRIPT},
        entrypoint="scripts/add.py",
    )
    tool = make_tool(settings, skill)
    result = await call(tool, context(settings), skill="adder")
    assert result.content.startswith("Loaded skill adder (script)\nThis is a script skill")
    assert 'Pass {"numbers": [...]}.' in result.content
    assert result.data["mode"] == "loaded"


async def test_script_skill_with_args_runs_and_returns_json(env: tuple[Settings, Path]) -> None:
    settings, root = env
    skill = add_skill(root, "adder", files={"scripts/add.py": SCRIPT}, entrypoint="scripts/add.py")
    tool = make_tool(settings, skill)
    result = await call(tool, context(settings), skill="adder", args={"numbers": [1, 2, 39]})
    assert not result.is_error, result.content
    head, _, body = result.content.partition("\n")
    assert head == "Ran script skill adder"
    assert json.loads(body) == {"sum": 42}
    assert result.data["result"] == {"sum": 42} and result.data["mode"] == "ran"
    # a JSON string works as well as an object
    again = await call(tool, context(settings), skill="adder", args='{"numbers": [1]}')
    assert again.data["result"] == {"sum": 1}


async def test_failing_script_is_an_error_result(env: tuple[Settings, Path]) -> None:
    settings, root = env
    skill = add_skill(root, "adder", files={"scripts/add.py": SCRIPT}, entrypoint="scripts/add.py")
    result = await call(
        make_tool(settings, skill), context(settings), skill="adder", args={"fail": 1}
    )
    assert result.is_error
    assert result.content.startswith("Script skill adder failed")
    assert "exit code 5" in result.content and "cannot do that" in result.content
    assert result.data["exit_code"] == 5


CODE = """
from skilldeck.skills.code import CodeSkill, SkillContext, SkillResult

class Lister(CodeSkill):
    async def execute(self, ctx: SkillContext) -> SkillResult:
        listing = await ctx.tools.call("Echo", {"text": str(ctx.args)})
        if listing.is_error:
            return SkillResult(success=False, error=listing.content)
        answer = await ctx.llm.complete("hi") if ctx.llm else "-"
        return SkillResult(success=True, output=f"{listing.content} / {answer}",
                           prompt_injection="Summarise for the user.")
"""


class EchoInput(BaseModel):
    text: str


class EchoTool(Tool):
    name: ClassVar[str] = "Echo"
    description: ClassVar[str] = "echo"
    Input: ClassVar[type[BaseModel]] = EchoInput

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        return ToolResult(content=f"echo:{input.text}")


class FakeLLM:
    async def complete(self, prompt: str, system: str | None = None) -> str:
        return "llm-answer"


async def test_code_skill_runs_with_tools_and_llm(env: tuple[Settings, Path]) -> None:
    settings, root = env
    skill = add_skill(root, "lister", files={"skill.py": CODE})
    tool = make_tool(settings, skill, tools=ToolRegistry([EchoTool()]))
    result = await call(tool, context(settings, llm=FakeLLM()), skill="lister", args={"a": 1})
    assert not result.is_error, result.content
    assert result.content.splitlines()[0] == "Ran code skill lister"
    assert "echo:{'a': 1} / llm-answer" in result.content
    assert "Instructions from the skill:\nSummarise for the user." in result.content
    assert result.data["prompt_injection"] == "Summarise for the user."
    assert result.data["result"]["success"] is True


async def test_code_skill_uses_the_wired_dispatcher(env: tuple[Settings, Path]) -> None:
    settings, root = env
    seen: list[tuple[str, dict[str, Any]]] = []

    class Dispatcher:
        async def call(self, name: str, input: dict[str, Any]) -> ToolResult:
            seen.append((name, input))
            return ToolResult(content="via-agent")

    tool = make_tool(settings, add_skill(root, "lister", files={"skill.py": CODE}))
    ctx = context(settings, tool_dispatcher=Dispatcher())
    result = await call(tool, ctx, skill="lister", args="x")
    assert "via-agent / -" in result.content
    assert seen == [("Echo", {"text": "x"})]


async def test_code_skill_tool_calls_respect_forbidden_and_permissions(
    env: tuple[Settings, Path],
) -> None:
    settings, root = env
    forbidding = add_skill(root, "lister", files={"skill.py": CODE}, forbidden_tools=["Echo"])
    tool = make_tool(settings, forbidding, tools=ToolRegistry([EchoTool()]))
    result = await call(tool, context(settings), skill="lister", args="x")
    assert result.is_error and "forbids Echo" in result.content

    async def deny(name: str, tool_input: dict[str, Any]) -> str | None:
        return "no echo today"

    other = add_skill(root, "lister2", files={"skill.py": CODE})
    tool = make_tool(settings, other, tools=ToolRegistry([EchoTool()]))
    result = await call(tool, context(settings, permission_check=deny), skill="lister2", args="x")
    assert result.is_error and "Permission denied for Echo: no echo today" in result.content


async def test_code_skill_audit_findings_are_advice_attached_to_the_result(
    env: tuple[Settings, Path],
) -> None:
    # issue 15: the audit no longer decides; an untrusted skill runs out of process
    settings, root = env
    risky = add_skill(root, "risky", files={"skill.py": "import socket\n" + CODE})
    tool = make_tool(settings, risky, tools=ToolRegistry([EchoTool()]))
    result = await call(tool, context(settings), skill="risky", args="x")
    assert not result.is_error, result.content
    assert "SDX03" in str(result.data["result"]["metadata"]["audit"])


async def test_unknown_skill_suggests_close_names(env: tuple[Settings, Path]) -> None:
    settings, root = env
    tool = make_tool(settings, add_skill(root, "review"))
    result = await call(tool, context(settings), skill="reveiw")
    assert result.is_error and "No skill named 'reveiw'" in result.content
    assert "review" in result.content


async def test_disabled_skill_is_refused(env: tuple[Settings, Path]) -> None:
    settings, root = env
    tool = make_tool(settings, add_skill(root, "off-skill"), add_skill(root, "on-skill"))
    result = await call(tool, context(settings), skill="off-skill")
    assert result.is_error and "disabled" in result.content
    assert [s.name for s in tool.invocable()] == ["on-skill"]


async def test_gated_skill_is_unavailable_with_reason(env: tuple[Settings, Path]) -> None:
    settings, root = env
    gated = add_skill(root, "needs-gh", requires_bins=["definitely-not-a-program-xyz"])
    tooled = add_skill(root, "needs-web", requires_tools=["WebFetch"])
    tool = make_tool(settings, gated, tooled, available_tools={"Read", "Skill"})
    result = await call(tool, context(settings), skill="needs-gh")
    assert result.is_error and "definitely-not-a-program-xyz" in result.content
    result = await call(tool, context(settings), skill="needs-web")
    assert result.is_error and "WebFetch" in result.content
    assert tool.invocable() == []
    assert "needs-gh" not in tool.describe()


async def test_user_only_skill_is_hidden_and_refused(env: tuple[Settings, Path]) -> None:
    settings, root = env
    tool = make_tool(settings, add_skill(root, "deploy", disable_model_invocation=True))
    result = await call(tool, context(settings), skill="deploy")
    assert result.is_error and "only be invoked by the user" in result.content
    assert "deploy" not in tool.describe()


async def test_query_lists_matches(env: tuple[Settings, Path]) -> None:
    settings, root = env
    pdf = add_skill(root, "pdf-tools", description="Extract text and tables from PDF files")
    xls = add_skill(root, "spreadsheets", description="Edit Excel spreadsheets and formulas")
    tool = make_tool(settings, pdf, xls)
    result = await call(tool, context(settings), query="extract tables from a pdf")
    assert not result.is_error
    names = [m["name"] for m in result.data["matches"]]
    assert names[0] == "pdf-tools" and "spreadsheets" not in names[:1]
    assert result.content.startswith("Skills matching 'extract tables from a pdf'")


async def test_needs_skill_or_query(env: tuple[Settings, Path]) -> None:
    settings, _ = env
    result = await call(make_tool(settings), context(settings))
    assert result.is_error and '"skill"' in result.content


async def test_description_and_schema_list_available_skills(
    env: tuple[Settings, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, root = env
    tool = make_tool(settings, add_skill(root, "alpha"), add_skill(root, "beta"))
    spec = tool.spec()
    assert spec.name == "Skill"
    assert "<available_skills>" in spec.description and "<name>alpha</name>" in spec.description
    skill_schema = spec.input_schema["properties"]["skill"]
    assert skill_schema["anyOf"][0]["enum"] == ["alpha", "beta"]
    monkeypatch.setattr(skill_tool_module, "ENUM_LIMIT", 1)
    assert "enum" not in json.dumps(tool.input_schema()["properties"]["skill"])
    quiet = SkillTool(tool.registry, list_in_description=False)
    assert "<available_skills>" not in quiet.spec().description


async def test_invalid_input_is_an_error_result(env: tuple[Settings, Path]) -> None:
    settings, _ = env
    result = await make_tool(settings).call({"skill": 5}, context(settings))
    assert result.is_error and "Invalid input for Skill" in result.content


# ---- dynamic context through the permission layer --------------------------------------

DYNAMIC = "Files: !`ls`\n"


async def test_dynamic_context_runs_when_allowed(env: tuple[Settings, Path]) -> None:
    settings, root = env
    (settings.workspace / "marker.txt").write_text("x")
    tool = make_tool(settings, add_skill(root, "dyn", DYNAMIC))
    result = await call(tool, context(settings), skill="dyn")
    assert not result.is_error, result.content
    assert "Files: marker.txt" in result.content


async def test_dynamic_context_denied_aborts_the_skill(env: tuple[Settings, Path]) -> None:
    settings, root = env
    asked: list[tuple[str, dict[str, Any]]] = []

    def check(tool_name: str, tool_input: dict[str, Any]) -> str | None:
        asked.append((tool_name, tool_input))
        return "Bash(ls) is denied"

    tool = make_tool(settings, add_skill(root, "dyn", DYNAMIC))
    result = await call(tool, context(settings, permission_check=check), skill="dyn")
    assert result.is_error and "not allowed (Bash(ls) is denied)" in result.content
    assert asked == [("Bash", {"command": "ls"})]


class Decision:
    def __init__(self, kind: str, message: str = "") -> None:
        self.kind, self.message = kind, message


class AskingGate:
    def __init__(self) -> None:
        self.calls: list[ToolCall] = []

    async def check(self, call: ToolCall, ctx: ToolContext) -> Decision:
        self.calls.append(call)
        return Decision("ask")


async def test_gate_ask_is_satisfied_by_the_skills_allowed_tools(
    env: tuple[Settings, Path],
) -> None:
    settings, root = env
    gate = AskingGate()
    pre_approved = add_skill(root, "dyn", DYNAMIC, allowed_tools=["Bash(ls:*)"])
    unapproved = add_skill(root, "dyn2", DYNAMIC)
    tool = make_tool(settings, pre_approved, unapproved)
    ok = await call(tool, context(settings, tool_gate=gate), skill="dyn")
    assert not ok.is_error, ok.content
    refused = await call(tool, context(settings, tool_gate=gate), skill="dyn2")
    assert refused.is_error and "needs approval" in refused.content
    assert [c.input for c in gate.calls] == [{"command": "ls"}, {"command": "ls"}]


async def test_dynamic_context_can_be_switched_off(env: tuple[Settings, Path]) -> None:
    settings, root = env
    settings.skills.dynamic_context = False
    tool = make_tool(settings, add_skill(root, "dyn", DYNAMIC))
    result = await call(tool, context(settings), skill="dyn")
    assert "Files: !`ls`" in result.content


async def test_failing_dynamic_command_aborts(env: tuple[Settings, Path]) -> None:
    settings, root = env
    tool = make_tool(settings, add_skill(root, "dyn", "State: !`exit 3`\n"))
    result = await call(tool, context(settings), skill="dyn")
    assert result.is_error and "exited with status 3" in result.content


RECURSE = """
from skilldeck.skills.code import CodeSkill, SkillContext, SkillResult

class Recurse(CodeSkill):
    async def execute(self, ctx: SkillContext) -> SkillResult:
        inner = await ctx.tools.call("Skill", {"skill": "recurse", "args": {}})
        return SkillResult(success=not inner.is_error, output=inner.content, error=inner.content)
"""


async def test_nesting_is_bounded_but_parallel_calls_are_not(env: tuple[Settings, Path]) -> None:
    settings, root = env
    tool = make_tool(settings, add_skill(root, "recurse", files={"skill.py": RECURSE}))
    result = await call(tool, context(settings), skill="recurse")
    assert result.is_error and "Skills nested too deep (>4) at 'recurse'" in result.content

    prompt = make_tool(settings, add_skill(root, "plain"))
    results: list[ToolResult] = []

    async def one() -> None:
        results.append(await call(prompt, context(settings), skill="plain"))

    async with anyio.create_task_group() as tg:
        for _ in range(8):
            tg.start_soon(one)
    assert len(results) == 8 and not any(r.is_error for r in results)
