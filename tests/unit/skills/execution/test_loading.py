"""The one load operation (skills/loading.py): substitutions, dynamic context through
the caller's gate, refusals (no gate, plan mode), failures, grants."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from skilldeck.errors import PermissionDeniedError
from skilldeck.skills.execution import (
    PLAN_REFUSAL,
    CommandOutput,
    LoadStatus,
    argument_string,
    load_skill_for_use,
)
from skilldeck.skills.model.skill import Skill, SkillKind, SkillSource
from skilldeck.skills.model.spec import SkillMetadata

pytestmark = pytest.mark.anyio


def make(tmp_path: Path, body: str, **meta: Any) -> Skill:
    folder = tmp_path / "s"
    folder.mkdir(parents=True, exist_ok=True)
    head = "---\nname: s\ndescription: d\n---\n"
    (folder / "SKILL.md").write_text(head + textwrap.dedent(body), encoding="utf-8")
    return Skill(
        metadata=SkillMetadata(name="s", description="d", **meta),
        folder=folder,
        skill_md=folder / "SKILL.md",
        body_offset=len(head.encode()),
        kind=SkillKind.PROMPT,
        source=SkillSource.ROOT,
    )


class Gate:
    def __init__(self, allowed: set[str], *, read_only: bool = False) -> None:
        self.allowed, self._ro, self.asked = allowed, read_only, []  # type: list[str]

    @property
    def read_only(self) -> bool:
        return self._ro

    async def check_command(self, skill: Skill, command: str) -> str | None:
        self.asked.append(command)
        return None if command in self.allowed else "no rule allows it"


class Runner:
    def __init__(self) -> None:
        self.ran: list[str] = []

    async def __call__(self, command: str, /) -> CommandOutput:
        self.ran.append(command)
        return CommandOutput(exit_code=0, stdout=f"OUT({command})\n")


async def load(skill: Skill, **kw: Any) -> Any:
    kw.setdefault("session_id", "s-1")
    kw.setdefault("workspace", Path("/ws"))
    kw.setdefault("gate", None)
    kw.setdefault("run_command", None)
    return await load_skill_for_use(skill, **kw)


async def test_substitutions_and_grants(tmp_path: Path) -> None:
    skill = make(
        tmp_path,
        "Hi $ARGUMENTS in ${SESSION_ID}",
        allowed_tools=["Bash(git:*)"],
        forbidden_tools=["WebFetch"],
    )
    loaded = await load(skill, arguments="Ada")
    assert loaded.ok and loaded.status is LoadStatus.LOADED
    assert "Hi Ada in s-1" in loaded.text and f"Base directory for this skill: {skill.folder}"
    assert loaded.allowed_tools == ("Bash(git:*)",) and loaded.forbidden_tools == ("WebFetch",)
    assert [str(r) for r in loaded.grants] == ["Bash(git:*)"]
    assert loaded.kind is SkillKind.PROMPT and not loaded.runs_code


async def test_dynamic_context_runs_through_the_gate(tmp_path: Path) -> None:
    skill = make(tmp_path, "Now: !`echo hi`\n")
    gate, runner = Gate({"echo hi"}), Runner()
    loaded = await load(skill, gate=gate, run_command=runner)
    assert loaded.ok and "Now: OUT(echo hi)" in loaded.text
    assert gate.asked == ["echo hi"] and runner.ran == ["echo hi"]


async def test_a_denied_command_aborts_the_load_and_runs_nothing(tmp_path: Path) -> None:
    skill = make(tmp_path, "A: !`echo a`\nB: !`rm -rf x`\n")
    runner = Runner()
    loaded = await load(skill, gate=Gate({"echo a"}), run_command=runner)
    assert loaded.status is LoadStatus.FAILED and runner.ran == []
    assert "rm -rf x" in (loaded.error or "") and loaded.text == ""
    with pytest.raises(PermissionDeniedError):
        loaded.raise_for_status()


async def test_no_gate_refuses_dynamic_context_with_the_reason(tmp_path: Path) -> None:
    loaded = await load(make(tmp_path, "!`date`\n"), where="the MCP server")
    assert loaded.status is LoadStatus.REFUSED
    assert "the MCP server has none" in (loaded.error or "")
    with pytest.raises(PermissionDeniedError):
        loaded.raise_for_status()


async def test_plan_mode_refuses_and_runs_nothing(tmp_path: Path) -> None:
    runner = Runner()
    gate = Gate({"date"}, read_only=True)
    loaded = await load(make(tmp_path, "!`date`\n"), gate=gate, run_command=runner)
    assert loaded.status is LoadStatus.REFUSED and PLAN_REFUSAL in (loaded.error or "")
    assert runner.ran == [] and gate.asked == []


async def test_dynamic_context_off_gives_the_body_verbatim(tmp_path: Path) -> None:
    loaded = await load(make(tmp_path, "Now: !`date`\n"), dynamic=False)
    assert loaded.ok and "Now: !`date`" in loaded.text


def test_argument_string() -> None:
    assert argument_string(None, []) is None
    assert argument_string({"a": "x y", "b": 2}, ["a", "b"]) == "'x y' 2"
    assert argument_string(["p", "q r"], []) == "p 'q r'"
    assert argument_string({"z": 1}, []) == '{"z": 1}'
