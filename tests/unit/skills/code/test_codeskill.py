"""Code skills: where they run (trust by content, out of process otherwise), one
subclass, context, results, can_handle."""

from __future__ import annotations

import logging
import os
import shutil
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from skilldeck.config import Settings
from skilldeck.errors import SkillExecutionError, SkillUnavailableError
from skilldeck.skills.code import (
    CodeSkill,
    IsolatedCodeSkill,
    SkillContext,
    SkillResult,
    TrustStore,
    bundled_skills_dir,
    keyword_score,
    load_code_skill,
    run_code_skill,
    trust_file,
)
from skilldeck.skills.code._srcimport import snapshot_code
from skilldeck.skills.model.skill import Skill, SkillKind, SkillSource
from skilldeck.skills.model.spec import SkillMetadata
from skilldeck.skills.registry import SkillRegistry

pytestmark = pytest.mark.anyio

GOOD = """
from skilldeck.skills.code import CodeSkill, SkillContext, SkillResult

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


def settings(
    mode: str = "sandboxed", trusted: tuple[str, ...] = (), home: Path | None = None
) -> Settings:
    extra: dict[str, Any] = {}
    if home is not None:
        extra = {"home": home / "home", "workspace": home}
    return Settings(skills={"code_skills": mode, "trusted": list(trusted)}, **extra)


PID = """
import os as _os
Counter.execute_counter = Counter.execute
async def _pid(self, ctx):
    if isinstance(ctx.args, dict) and "pid" in ctx.args:
        return SkillResult(success=True, output=f"pid={_os.getpid()}")
    return await self.execute_counter(ctx)
Counter.execute = _pid
"""


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


def trust(skill: Skill, conf: Settings) -> None:
    TrustStore(trust_file(conf)).trust(skill.name, snapshot_code(skill.folder))


async def run(instance: CodeSkill, **kw: Any) -> SkillResult:
    return await run_code_skill(instance, SkillContext(**kw), timeout=60)


async def test_untrusted_skill_runs_out_of_process_with_tools_and_llm(tmp_path: Path) -> None:
    skill = make_code_skill(tmp_path, GOOD)
    instance = load_code_skill(skill, settings=settings(home=tmp_path))
    assert isinstance(instance, IsolatedCodeSkill) and instance.metadata.name == "counter"
    tools = FakeTools()
    result = await run(
        instance,
        tools=tools,
        llm=FakeLLM(),
        session="s9",
        args={"pattern": "*.py"},
        config={"k": 1},
    )
    assert result.success and result.output == "2 files; llm saw: 2 files", result.error
    assert result.metadata["files"] == ["a.py", "b.py"]
    assert result.metadata["session"] == "s9" and result.metadata["config"] == {"k": 1}
    assert tools.calls == [("Glob", {"pattern": "*.py"})]


async def test_trusted_skill_runs_in_process_until_edited(tmp_path: Path) -> None:
    conf = settings(home=tmp_path)
    skill = make_code_skill(tmp_path, GOOD + PID)
    trust(skill, conf)
    instance = load_code_skill(skill, settings=conf)
    assert type(instance).__name__ == "Counter"
    assert (await run(instance, args={"pid": 1})).output == f"pid={os.getpid()}"
    (skill.folder / "helper.py").write_text("X = 1\n")  # any .py change untrusts
    fresh = Skill(metadata=skill.metadata, folder=skill.folder, skill_md=skill.skill_md)
    moved = load_code_skill(fresh, settings=conf)
    assert isinstance(moved, IsolatedCodeSkill)
    assert (await run(moved, args={"pid": 1})).output != f"pid={os.getpid()}"


async def test_zero_or_two_subclasses_is_an_error(tmp_path: Path) -> None:
    none = make_code_skill(
        tmp_path, "from skilldeck.skills.code.codeskill import CodeSkill\n", name="none"
    )
    result = await run(load_code_skill(none, settings=settings(home=tmp_path)))
    assert not result.success and "exactly one CodeSkill subclass; found 0" in (result.error or "")
    two = """
    from skilldeck.skills.code import CodeSkill
    class A(CodeSkill): pass
    class B(CodeSkill): pass
    """
    both = make_code_skill(tmp_path, two, name="two")
    conf = settings(home=tmp_path)
    trust(both, conf)
    with pytest.raises(SkillExecutionError, match=r"found 2 \(A, B\)"):
        load_code_skill(both, settings=conf)


def test_code_skills_off_refuses(tmp_path: Path) -> None:
    with pytest.raises(SkillUnavailableError, match="disabled"):
        load_code_skill(make_code_skill(tmp_path, GOOD), settings=settings("off"))


def test_disabled_skill_is_not_imported(tmp_path: Path) -> None:
    """Disabled is the registry's view: it refuses the skill (and lists it for no
    matcher) before anything could import its code."""
    skill = make_code_skill(tmp_path, GOOD)
    conf = Settings(skills={"code_skills": "on", "disabled": [skill.name]})
    registry = SkillRegistry(conf)
    registry.register(skill)
    with pytest.raises(SkillUnavailableError, match="disabled"):
        registry.get(skill.name)
    assert registry.list() == [] and registry.usable() == []


RISKY = """
import subprocess
from skilldeck.skills.code import CodeSkill, SkillResult

class Risky(CodeSkill):
    async def execute(self, ctx):
        return SkillResult(success=True, output=subprocess.list2cmdline(["a", "b"]))
"""


@pytest.mark.parametrize("mode", ["audit", "on", "sandboxed"])
async def test_audit_findings_are_advice_and_no_mode_runs_untrusted_code_in_process(
    tmp_path: Path, mode: str
) -> None:
    skill = make_code_skill(tmp_path, RISKY, name="risky")
    conf = settings(mode, trusted=("risky",), home=tmp_path)  # trust by name grants nothing
    instance = load_code_skill(skill, settings=conf)
    assert isinstance(instance, IsolatedCodeSkill)
    result = await run(instance)
    assert result.success and result.output == "a b"
    assert "SDX02" in result.metadata["audit"][0]


async def test_helper_modules_and_scripts_import_from_source(tmp_path: Path) -> None:
    source = """
    from skilldeck.skills.code import CodeSkill, SkillResult
    from . import helpers
    from .scripts import tool
    class Uses(CodeSkill):
        async def execute(self, ctx):
            return SkillResult(success=True, output=f"{helpers.VALUE} {tool.NAME}")
    """
    skill = make_code_skill(tmp_path, source, name="uses", **{"helpers.py": "VALUE = 42\n"})
    (skill.folder / "scripts").mkdir()
    (skill.folder / "scripts" / "tool.py").write_text("NAME = 't'\n")
    conf = settings(home=tmp_path)
    assert (await run(load_code_skill(skill, settings=conf))).output == "42 t"
    trust(skill, conf)
    instance = load_code_skill(skill, settings=conf)
    assert type(instance).__name__ == "Uses" and (await run(instance)).output == "42 t"


def test_each_in_process_import_is_logged_with_its_hash(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    skill = make_code_skill(tmp_path, GOOD, name="logged")
    conf = settings(home=tmp_path)
    trust(skill, conf)
    with caplog.at_level(logging.INFO, logger="skilldeck.skills.code.codeskill"):
        load_code_skill(skill, settings=conf)
    record = next(r for r in caplog.records if "importing code skill" in r.getMessage())
    digest = snapshot_code(skill.folder).digest
    assert "'logged'" in record.getMessage() and digest in record.getMessage()


async def test_import_failure_is_a_clear_error(tmp_path: Path) -> None:
    skill = make_code_skill(tmp_path, "raise RuntimeError('boom at import')\n", name="broken")
    result = await run(load_code_skill(skill, settings=settings(home=tmp_path)))
    assert not result.success and "boom at import" in (result.error or "")
    conf = settings(home=tmp_path)
    trust(skill, conf)
    with pytest.raises(SkillExecutionError, match="boom at import"):
        load_code_skill(skill, settings=conf)


def test_bundled_skill_runs_in_process_only_from_the_package(tmp_path: Path) -> None:
    bundled = bundled_skills_dir() / "repo-stats"
    meta = SkillMetadata(name="repo-stats", description="stats")
    real = Skill(
        metadata=meta,
        folder=bundled,
        skill_md=bundled / "SKILL.md",
        source=SkillSource.BUNDLED,
        kind=SkillKind.CODE,
    )
    conf = settings(home=tmp_path)
    assert type(load_code_skill(real, settings=conf)).__name__ == "RepoStats"
    copy = tmp_path / "copy" / "repo-stats"
    shutil.copytree(bundled, copy, ignore=shutil.ignore_patterns("__pycache__"))
    fake = Skill(
        metadata=meta,
        folder=copy,
        skill_md=copy / "SKILL.md",
        source=SkillSource.BUNDLED,
        kind=SkillKind.CODE,
    )
    assert isinstance(load_code_skill(fake, settings=conf), IsolatedCodeSkill)
    # a checkout of skilldeck opened as the workspace: its bundled folder is writable
    inside = Settings(workspace=bundled.parents[3], home=tmp_path)
    again = Skill(
        metadata=meta,
        folder=bundled,
        skill_md=bundled / "SKILL.md",
        source=SkillSource.BUNDLED,
        kind=SkillKind.CODE,
    )
    assert isinstance(load_code_skill(again, settings=inside), IsolatedCodeSkill)


def test_trust_file_that_others_can_write_is_ignored(tmp_path: Path) -> None:
    conf = settings(home=tmp_path)
    skill = make_code_skill(tmp_path, GOOD, name="shared")
    trust(skill, conf)
    assert oct(trust_file(conf).stat().st_mode & 0o777) == "0o600"
    os.chmod(trust_file(conf), 0o666)
    assert isinstance(load_code_skill(skill, settings=conf), IsolatedCodeSkill)


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
