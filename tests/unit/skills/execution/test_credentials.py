"""Declared credentials: parsing, gating, and who receives them (exactly their skill)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from skilldeck.agent.dispatch import redact_result
from skilldeck.config import SandboxSettings, Settings
from skilldeck.errors import SkillExecutionError
from skilldeck.sandbox import bwrap_argv
from skilldeck.skills.execution import (
    ScriptRunner,
    SecretStore,
    credential_env,
    declared_credentials,
    expand_dynamic_context,
    machine_gating,
    machine_reason,
    shell_runner,
    started_by,
)
from skilldeck.skills.format import load_skill, validate_path
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import ToolContext
from skilldeck.tools.bash import BashTool
from skilldeck.tools.skill_tool import SkillTool

pytestmark = pytest.mark.anyio

PRINT_KEY = """
import json, os, sys
print("stderr saw", os.environ.get("GITHUB_TOKEN"), file=sys.stderr)
print(json.dumps({"key": os.environ.get("GITHUB_TOKEN"), "other": os.environ.get("OTHER_TOKEN"),
                  "leak": os.environ.get("AWS_SECRET_ACCESS_KEY")}))
sys.exit(int(json.loads(sys.argv[1]).get("exit", 0)))
"""
TOKEN = "ghp_unit_secret_0123456789"


def write_skill(root: Path, name: str, front: str, script: str = PRINT_KEY) -> Skill:
    folder = root / name
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "run.py").write_text(textwrap.dedent(script), encoding="utf-8")
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: test skill {name}\nentrypoint: scripts/run.py\n"
        f"{front}---\nBody of {name}.\n",
        encoding="utf-8",
    )
    skill, _ = load_skill(folder)
    assert skill is not None
    return skill


@pytest.fixture
def settings(tmp_path: Path, skilldeck_home: Path) -> Settings:
    ws = tmp_path / "ws"
    ws.mkdir()
    return Settings(workspace=ws, home=skilldeck_home, sandbox=SandboxSettings(mode="off"))


@pytest.fixture
def store(skilldeck_home: Path) -> SecretStore:
    return SecretStore(skilldeck_home, use_keyring=False)


GH = "credentials:\n  - name: GITHUB_TOKEN\n    description: repo scope\n"


def test_credentials_field_and_its_diagnostics(tmp_path: Path) -> None:
    skill = write_skill(
        tmp_path,
        "gh",
        GH + "  - OPTIONAL_KEY\n  - {name: 'not valid'}\n  - {name: X_KEY, required: maybe}\n",
    )
    assert [(c.name, c.required) for c in declared_credentials(skill)] == [
        ("GITHUB_TOKEN", True),
        ("OPTIONAL_KEY", True),
    ]
    (report,) = validate_path(tmp_path / "gh")
    codes = [d.code for d in report.diagnostics]
    assert codes.count("SD180") == 2 and report.valid


def test_openclaw_requires_env_and_primary_env_are_credentials(tmp_path: Path) -> None:
    front = 'metadata:\n  openclaw: {"requires": {"env": ["A_KEY"]}, "primaryEnv": "B_KEY"}\n'
    skill = write_skill(tmp_path, "claw", front)
    assert [c.name for c in declared_credentials(skill)] == ["B_KEY", "A_KEY"]


def test_a_missing_required_credential_gates_the_skill_with_a_hint(
    tmp_path: Path, store: SecretStore
) -> None:
    skill = write_skill(tmp_path, "gh", GH)
    reason = machine_reason(skill, store=store)
    assert reason is not None and "GITHUB_TOKEN" in reason
    assert "skilldeck secrets set GITHUB_TOKEN" in reason
    # the registry's call: the default store of SKILLDECK_HOME
    assert machine_gating([skill]) == {skill: reason}
    store.set("GITHUB_TOKEN", TOKEN, skill="gh")
    assert machine_gating([skill]) == {}


def test_an_optional_credential_never_gates(tmp_path: Path, store: SecretStore) -> None:
    skill = write_skill(tmp_path, "gh", "credentials: [{name: GITHUB_TOKEN, required: false}]\n")
    assert machine_reason(skill, store=store) is None


async def test_the_script_gets_exactly_its_declared_credentials_and_results_are_redacted(
    tmp_path: Path, settings: Settings, store: SecretStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTHER_TOKEN", "other-process-token")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-process-secret")
    store.set("GITHUB_TOKEN", TOKEN)
    gh = write_skill(tmp_path, "gh", GH)
    plain = write_skill(tmp_path, "plain", "")
    runner = ScriptRunner(settings, secrets=store)
    ran = await runner.run(gh, {})
    assert ran.ok, ran.error
    # it had the value (the runner shows it redacted), and nothing else secret
    assert ran.value == {"key": "[secret GITHUB_TOKEN]", "other": None, "leak": None}
    assert TOKEN not in ran.stdout + ran.stderr and "[secret GITHUB_TOKEN]" in ran.stderr
    other = await runner.run(plain, {})
    assert other.value == {"key": None, "other": None, "leak": None}
    failed = await runner.run(gh, {"exit": 3})
    assert not failed.ok and failed.error is not None
    assert "[secret GITHUB_TOKEN]" in failed.error and TOKEN not in failed.error


async def test_environment_hands_out_the_skill_scoped_value(
    tmp_path: Path, settings: Settings, store: SecretStore
) -> None:
    store.set("GITHUB_TOKEN", "global-token-value")
    store.set("GITHUB_TOKEN", "scoped-token-value", skill="gh")
    gh = write_skill(tmp_path, "gh", GH)
    runner = ScriptRunner(settings, secrets=store)
    env = runner.environment(gh, session_id="s", workspace=tmp_path, scratch=tmp_path)
    assert env["GITHUB_TOKEN"] == "scoped-token-value"
    assert credential_env(write_skill(tmp_path, "none", ""), store) == {}


async def test_dynamic_context_gets_its_skills_credentials_and_shows_them_redacted(
    tmp_path: Path, store: SecretStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTHER_TOKEN", "process-level-token")
    store.set("GITHUB_TOKEN", TOKEN)
    gh = write_skill(tmp_path, "gh", GH)
    plain = write_skill(tmp_path, "plain", "")
    run = shell_runner(cwd=tmp_path, timeout=10, cap=10_000)
    body = 'key: !`echo "$GITHUB_TOKEN"` other: !`echo "x${OTHER_TOKEN}x"`'
    text = await expand_dynamic_context(body, run=run, skill=gh)
    assert text == "key: [secret GITHUB_TOKEN] other: xx"
    assert await expand_dynamic_context(body, run=run, skill=plain) == "key:  other: xx"
    with pytest.raises(SkillExecutionError) as failed:
        await expand_dynamic_context('!`echo "$GITHUB_TOKEN" >&2; exit 2`', run=run, skill=gh)
    assert TOKEN not in str(failed.value) and "[secret GITHUB_TOKEN]" in str(failed.value)


async def test_bash_gets_credentials_only_inside_a_call_its_skill_started(
    tmp_path: Path, settings: Settings
) -> None:
    ctx = ToolContext(session_id="s", workspace=settings.workspace.resolve(), settings=settings)
    tool = BashTool()

    async def echo() -> Any:
        return await tool.run(tool.Input(command='echo "k=$GITHUB_TOKEN"'), ctx)

    assert (await echo()).content == "k="
    with started_by({"GITHUB_TOKEN": TOKEN}):
        assert (await echo()).content == f"k={TOKEN}"  # redaction is the dispatcher's job
    assert (await echo()).content == "k="


def test_the_sandbox_hides_the_file_store(skilldeck_home: Path, store: SecretStore) -> None:
    argv = bwrap_argv("bwrap", ["true"], workspace=None, scratch=None, network=False)
    assert "--tmpfs" in argv and str(skilldeck_home / "secrets") not in argv  # none yet
    store.set("GITHUB_TOKEN", TOKEN)
    argv = bwrap_argv("bwrap", ["true"], workspace=None, scratch=None, network=False)
    hidden = str((skilldeck_home / "secrets").resolve())
    assert argv[argv.index(hidden) - 1] == "--tmpfs"


CODE_SKILL = """
import os
from skilldeck.skills.code.codeskill import CodeSkill, SkillResult

class UsesToken(CodeSkill):
    async def execute(self, ctx):
        r = await ctx.tools.call("Bash", {"command": 'echo "bash=$GITHUB_TOKEN"'})
        child = os.environ.get("GITHUB_TOKEN")
        return SkillResult(success=True, output=f"child={child} {r.content}")
"""


async def test_a_code_skills_child_and_its_bash_calls_get_its_credentials(
    tmp_path: Path, settings: Settings, store: SecretStore
) -> None:
    store.set("GITHUB_TOKEN", TOKEN)
    folder = tmp_path / "coded"
    folder.mkdir()
    (folder / "skill.py").write_text(CODE_SKILL, encoding="utf-8")
    (folder / "SKILL.md").write_text(
        "---\nname: coded\ndescription: a code skill with a token\n" + GH + "---\nb\n",
        encoding="utf-8",
    )
    skill, _ = load_skill(folder)
    assert skill is not None and skill.kind.value == "code"
    registry = SkillRegistry(settings)
    registry.register(skill)

    async def allow(tool: str, tool_input: dict[str, Any]) -> str | None:
        return None

    ctx = ToolContext(
        session_id="s",
        workspace=settings.workspace.resolve(),
        settings=settings,
        services={"permission_check": allow},
    )
    result = await SkillTool(registry).call({"skill": "coded", "args": {}}, ctx)
    assert f"child={TOKEN} bash={TOKEN}" in result.content, result.content
    shown = redact_result(result).content  # what the dispatcher passes on
    assert TOKEN not in shown and "bash=[secret GITHUB_TOKEN]" in shown
