"""Code skills: loading (trust, audit, one subclass), context, results, can_handle."""

from __future__ import annotations

import logging
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from skilldeck.config import Settings
from skilldeck.errors import SkillExecutionError, SkillUnavailableError
from skilldeck.skills.codeskill import (
    CodeSkill,
    NoTools,
    SkillContext,
    SkillResult,
    keyword_score,
    load_code_skill,
    run_code_skill,
)
from skilldeck.skills.skill import Skill, SkillKind, SkillSource
from skilldeck.skills.spec import SkillMetadata

pytestmark = pytest.mark.anyio

GOOD = """
from skilldeck.skills.codeskill import CodeSkill, SkillContext, SkillResult

class Counter(CodeSkill):
    async def execute(self, ctx: SkillContext) -> SkillResult:
        found = await ctx.tools.call("Glob", {"pattern": ctx.args["pattern"]})
        files = found.content.splitlines()
        verdict = await ctx.llm.complete(f"{len(files)} files") if ctx.llm else "no llm"
        return SkillResult(success=True, output=f"{len(files)} files; {verdict}",
                           metadata={"files": files, "session": ctx.session,
                                     "config": ctx.config})
"""


def make_code_skill(root: Path, source: str, *, name: str = "counter", **extra: str) -> Skill:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "skill.py").write_text(textwrap.dedent(source), encoding="utf-8")
    for filename, text in extra.items():
        (folder / filename).write_text(textwrap.dedent(text), encoding="utf-8")
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Count files\n---\nb\n")
    return Skill(
        metadata=SkillMetadata(name=name, description="Count files by pattern"),
        folder=folder,
        skill_md=folder / "SKILL.md",
        source=SkillSource.ROOT,
        root=root,
        kind=SkillKind.CODE,
    )


def settings(mode: str = "audit", trusted: tuple[str, ...] = ()) -> Settings:
    return Settings(skills={"code_skills": mode, "trusted": list(trusted)})


class FakeResult:
    def __init__(self, content: str, is_error: bool = False) -> None:
        self.content, self.is_error = content, is_error


class FakeTools:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def call(self, name: str, input: dict[str, Any]) -> FakeResult:
        self.calls.append((name, input))
        return FakeResult("a.py\nb.py")


class FakeLLM:
    async def complete(self, prompt: str, system: str | None = None) -> str:
        return f"llm saw: {prompt}"


async def test_loads_and_executes_with_tools_and_llm(tmp_path: Path) -> None:
    skill = make_code_skill(tmp_path, GOOD)
    instance = load_code_skill(skill, settings=settings())
    assert instance.skill is skill and instance.metadata.name == "counter"
    tools = FakeTools()
    ctx = SkillContext(
        tools=tools, llm=FakeLLM(), session="s9", args={"pattern": "*.py"}, config={"k": 1}
    )
    result = await run_code_skill(instance, ctx, timeout=10)
    assert result.success and result.output == "2 files; llm saw: 2 files"
    assert result.metadata == {"files": ["a.py", "b.py"], "session": "s9", "config": {"k": 1}}
    assert tools.calls == [("Glob", {"pattern": "*.py"})]


async def test_no_tools_dispatcher_returns_error_results() -> None:
    outcome = await NoTools().call("Bash", {"command": "ls"})
    assert outcome.is_error and "No tools" in outcome.content


def test_zero_or_two_subclasses_is_an_error(tmp_path: Path) -> None:
    none = make_code_skill(
        tmp_path, "from skilldeck.skills.codeskill import CodeSkill\n", name="none"
    )
    with pytest.raises(SkillExecutionError, match="exactly one CodeSkill subclass; found 0"):
        load_code_skill(none, settings=settings())
    two = """
    from skilldeck.skills.codeskill import CodeSkill
    class A(CodeSkill): pass
    class B(CodeSkill): pass
    """
    both = make_code_skill(tmp_path, two, name="two")
    with pytest.raises(SkillExecutionError, match=r"found 2 \(A, B\)"):
        load_code_skill(both, settings=settings())


def test_code_skills_off_refuses(tmp_path: Path) -> None:
    with pytest.raises(SkillUnavailableError, match="disabled"):
        load_code_skill(make_code_skill(tmp_path, GOOD), settings=settings("off"))


def test_disabled_skill_is_not_imported(tmp_path: Path) -> None:
    skill = make_code_skill(tmp_path, GOOD)
    skill.enabled = False
    with pytest.raises(SkillUnavailableError, match="disabled"):
        load_code_skill(skill, settings=settings("on"))


RISKY = """
import subprocess
from skilldeck.skills.codeskill import CodeSkill, SkillResult

class Risky(CodeSkill):
    async def execute(self, ctx):
        return SkillResult(success=True, output=subprocess.list2cmdline(["a", "b"]))
"""


def test_audit_mode_refuses_findings_unless_trusted(tmp_path: Path) -> None:
    skill = make_code_skill(tmp_path, RISKY, name="risky")
    with pytest.raises(SkillExecutionError, match=r"(?s)audit found 1 .*SDX02 subprocess"):
        load_code_skill(skill, settings=settings("audit"))
    assert load_code_skill(skill, settings=settings("audit", trusted=("risky",)))


def test_on_mode_skips_the_audit(tmp_path: Path) -> None:
    skill = make_code_skill(tmp_path, RISKY, name="risky2")
    assert load_code_skill(skill, settings=settings("on"))


def test_audit_covers_helper_modules_but_not_scripts(tmp_path: Path) -> None:
    source = """
    from skilldeck.skills.codeskill import CodeSkill
    from . import helpers
    class Uses(CodeSkill):
        pass
    """
    skill = make_code_skill(tmp_path, source, name="uses", **{"helpers.py": "import socket\n"})
    with pytest.raises(SkillExecutionError, match="SDX03"):
        load_code_skill(skill, settings=settings())
    (skill.folder / "helpers.py").write_text("VALUE = 42\n")
    (skill.folder / "scripts").mkdir()
    (skill.folder / "scripts" / "run.py").write_text("import subprocess\n")
    instance = load_code_skill(skill, settings=settings())  # relative import works
    assert type(instance).__name__ == "Uses"


def test_each_import_is_logged_with_its_hash(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    skill = make_code_skill(tmp_path, GOOD, name="logged")
    with caplog.at_level(logging.INFO, logger="skilldeck.skills.codeskill"):
        load_code_skill(skill, settings=settings())
    record = next(r for r in caplog.records if "importing code skill" in r.getMessage())
    assert "'logged'" in record.getMessage() and "sha256" in record.getMessage()


def test_import_failure_is_a_clear_error(tmp_path: Path) -> None:
    skill = make_code_skill(tmp_path, "raise RuntimeError('boom at import')\n", name="broken")
    with pytest.raises(SkillExecutionError, match="boom at import"):
        load_code_skill(skill, settings=settings())


def test_changed_file_is_reimported(tmp_path: Path) -> None:
    skill = make_code_skill(tmp_path, GOOD, name="changing")
    first = type(load_code_skill(skill, settings=settings()))
    same = Skill(metadata=skill.metadata, folder=skill.folder, skill_md=skill.skill_md)
    assert type(load_code_skill(same, settings=settings())) is first  # cached class
    (skill.folder / "skill.py").write_text(GOOD.replace("class Counter", "class Counter2"))
    fresh = Skill(metadata=skill.metadata, folder=skill.folder, skill_md=skill.skill_md)
    assert type(load_code_skill(fresh, settings=settings())).__name__ == "Counter2"


class Greeter(CodeSkill):
    """Greet people by name. Longer explanation here."""

    tags = ("hello", "people")

    async def execute(self, ctx: SkillContext) -> SkillResult:
        return SkillResult(success=True, output=f"hello {ctx.args}")


def test_metadata_from_class_and_to_skill() -> None:
    skill = Greeter.to_skill()
    assert skill.name == "greeter" and skill.kind is SkillKind.CODE
    assert skill.description == "Greet people by name. Longer explanation here."
    assert skill.source is SkillSource.REGISTERED
    instance = load_code_skill(skill, settings=settings("off"))  # bound: no import, no gate
    assert isinstance(instance, Greeter) and instance.skill is skill

    async def go() -> SkillResult:
        return await run_code_skill(instance, SkillContext(args="ada"), timeout=5)

    assert anyio.run(go).output == "hello ada"


def test_can_handle_is_keyword_overlap() -> None:
    skill = Greeter()
    assert skill.can_handle("please greet these people") == pytest.approx(2 / 3)
    assert skill.can_handle("compile the kernel") == 0.0
    assert skill.can_handle("the and of") == 0.0
    assert keyword_score("PDF forms", "Fill PDF forms") == 1.0


class Crashing(CodeSkill):
    async def execute(self, ctx: SkillContext) -> SkillResult:
        raise ValueError("bad input")


class Slow(CodeSkill):
    async def execute(self, ctx: SkillContext) -> SkillResult:
        await anyio.sleep(10)
        return SkillResult(success=True)


class WrongType(CodeSkill):
    async def execute(self, ctx: SkillContext) -> Any:
        return "just a string"


async def test_failures_become_failed_results() -> None:
    crashed = await run_code_skill(Crashing(), SkillContext(), timeout=5)
    assert not crashed.success and "ValueError: bad input" in (crashed.error or "")
    slow = await run_code_skill(Slow(), SkillContext(), timeout=0.2)
    assert not slow.success and "timed out after 0.2s" in (slow.error or "")
    wrong = await run_code_skill(WrongType(), SkillContext(), timeout=5)
    assert not wrong.success and "not a SkillResult" in (wrong.error or "")


def test_result_render() -> None:
    ok = SkillResult(success=True, output="done", prompt_injection="Now run the tests.")
    assert ok.render() == "done\n\nInstructions from the skill:\nNow run the tests."
    bad = SkillResult(success=False, error="no repo", output="partial")
    assert bad.render() == "Error: no repo\npartial"
    assert SkillResult(success=True).to_dict()["metadata"] == {}
