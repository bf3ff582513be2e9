"""Per-skill environments built offline from a local wheel: install, sharing, a failed
build (unavailable with the reason), and a script importing its dependency."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wheels import write_wheel

from skilldeck.config import SandboxSettings, Settings
from skilldeck.errors import EnvironmentBuildError, SkillUnavailableError
from skilldeck.sandbox import probe_sandbox
from skilldeck.skills.execution import (
    ENVS_RECORD,
    Environments,
    ScriptRunner,
    environment_key,
    machine_gating,
    machine_reason,
    read_requirements,
)
from skilldeck.skills.format import load_skill, validate_path
from skilldeck.skills.model.skill import Skill

pytestmark = pytest.mark.anyio
SANDBOX = probe_sandbox()
IMPORTS = (
    "import json, sys, tinydep\n"
    "print(json.dumps({'answer': tinydep.ANSWER, 'py': sys.executable}))\n"
)


def skill_with(root: Path, name: str, requirements: str | None, front: str = "") -> Skill:
    folder = root / name
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "run.py").write_text(IMPORTS, encoding="utf-8")
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: uses tinydep\nentrypoint: scripts/run.py\n{front}"
        "---\nRun it.\n",
        encoding="utf-8",
    )
    if requirements is not None:
        (folder / "requirements.txt").write_text(requirements, encoding="utf-8")
    skill, _ = load_skill(folder)
    assert skill is not None
    return skill


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    write_wheel(tmp_path / "wheels", "tinydep")
    return tmp_path / "wheels"


@pytest.fixture
def envs(skilldeck_home: Path) -> Environments:
    return Environments(skilldeck_home)


def test_requirements_come_from_the_file_and_the_frontmatter(tmp_path: Path) -> None:
    skill = skill_with(
        tmp_path,
        "both",
        "# pinned\ntinydep==1.0  # the one\n\n",
        "dependencies: {python: [extra>=1]}\n",
    )
    assert read_requirements(skill) == ["extra>=1", "tinydep==1.0"]
    plain = skill_with(tmp_path, "file-only", "tinydep\n")
    assert plain.metadata.dependencies == {"files": ["requirements.txt"]}  # gating sees it
    assert plain.may_be_gated()
    assert environment_key(["b", "a"]) == environment_key(["a", "b"])
    assert environment_key(["a"]) != environment_key(["a"], python="/other/python3.12")


def test_requirement_options_are_refused(tmp_path: Path, envs: Environments) -> None:
    skill = skill_with(tmp_path, "evil", "--index-url http://evil.example/simple\ntinydep\n")
    with pytest.raises(EnvironmentBuildError, match="not allowed"):
        envs.ensure(skill, offline=True)
    bad = tmp_path / "front"
    skill_with(tmp_path, "front", None, "dependencies: {python: ['-e git+https://x/y']}\n")
    (report,) = validate_path(bad)
    assert "SD181" in [d.code for d in report.diagnostics]


def test_offline_install_from_a_wheel_folder_and_two_skills_share_it(
    tmp_path: Path, envs: Environments, wheels: Path, skilldeck_home: Path
) -> None:
    first = skill_with(tmp_path, "first", "tinydep==1.0\n")
    second = skill_with(tmp_path, "second", None, "dependencies: {python: [tinydep==1.0]}\n")
    messages: list[str] = []
    one = envs.ensure(first, offline=True, find_links=[wheels], progress=messages.append)
    assert one is not None and one.status == "ready" and one.python.exists()
    assert any("uv pip install" in m for m in messages)
    assert (one.path / "lib").exists() and one.path.parent == skilldeck_home / "envs"
    built: list[str] = []
    two = envs.ensure(second, offline=True, find_links=[wheels], progress=built.append)
    assert two is not None and two.path == one.path and built == []  # shared, not rebuilt
    assert envs.for_skill(second).shared_with == ["first"]  # type: ignore[union-attr]
    record = json.loads((skilldeck_home / ENVS_RECORD).read_text())
    assert record["environments"][one.key]["requirements"] == ["tinydep==1.0"]
    assert {v["name"] for v in record["skills"].values()} == {"first", "second"}


async def test_a_failed_build_makes_the_skill_unavailable_with_the_reason(
    tmp_path: Path, envs: Environments, wheels: Path, skilldeck_home: Path
) -> None:
    skill = skill_with(tmp_path, "broken", "no-such-package-anywhere==9.9\n")
    with pytest.raises(EnvironmentBuildError, match="no-such-package-anywhere"):
        envs.ensure(skill, offline=True, find_links=[wheels])
    reason = machine_reason(skill)
    assert reason is not None and "failed to build" in reason
    assert "skilldeck skills deps broken --rebuild" in reason
    assert machine_gating([skill]) == {skill: reason}
    settings = Settings(
        workspace=tmp_path, home=skilldeck_home, sandbox=SandboxSettings(mode="off")
    )
    with pytest.raises(SkillUnavailableError, match="no-such-package-anywhere"):
        await ScriptRunner(settings, environments=envs).run(skill, {})
    # fixed requirements: a new key, no recorded failure, available again
    (skill.folder / "requirements.txt").write_text("tinydep==1.0\n", encoding="utf-8")
    assert machine_reason(skill) is None
    assert machine_gating([skill]) == {}


def test_a_code_skill_with_requirements_is_refused_with_a_reason(tmp_path: Path) -> None:
    skill = skill_with(tmp_path, "coded", "tinydep\n")
    (skill.folder / "skill.py").write_text(
        "from skilldeck.skills.code import CodeSkill\n", encoding="utf-8"
    )
    coded, _ = load_skill(skill.folder)
    assert coded is not None
    reason = machine_reason(coded)
    assert reason is not None and "code skill cannot declare its own requirements" in reason


@pytest.mark.parametrize(
    "mode",
    [
        "off",
        pytest.param(
            "required",
            marks=pytest.mark.skipif(not SANDBOX.available, reason=f"no sandbox: {SANDBOX.reason}"),
        ),
    ],
)
async def test_a_script_imports_its_dependency_with_the_envs_python(
    tmp_path: Path, envs: Environments, wheels: Path, skilldeck_home: Path, mode: str
) -> None:
    skill = skill_with(tmp_path, "uses-dep", "tinydep==1.0\n")
    env = envs.ensure(skill, offline=True, find_links=[wheels])
    assert env is not None
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = Settings(workspace=ws, home=skilldeck_home, sandbox=SandboxSettings(mode=mode))
    result = await ScriptRunner(settings, environments=envs).run(skill, {})
    assert result.ok, result.error
    assert result.value == {"answer": 42, "py": str(env.python)}
    assert result.sandboxed is (mode == "required")
    # skilldeck's own Python does not have the package: the environment is isolated
    without = skill_with(tmp_path, "no-env", None)
    failed = await ScriptRunner(settings, environments=envs).run(without, {})
    assert not failed.ok and "ModuleNotFoundError" in (failed.error or "")


def test_a_plain_dependencies_list_means_python_requirements(tmp_path: Path) -> None:
    skill = skill_with(tmp_path, "listed", None, "dependencies: [tinydep, other>=1]\n")
    assert skill.metadata.dependencies == {"python": ["tinydep", "other>=1"]}
    assert read_requirements(skill) == ["tinydep", "other>=1"]


def test_a_refused_requirements_line_says_to_edit_the_file_and_validate_warns(
    tmp_path: Path, envs: Environments
) -> None:
    skill = skill_with(tmp_path, "opt", "tinydep\n# a note\n--index-url http://evil.example/x\n")
    with pytest.raises(EnvironmentBuildError) as caught:
        envs.ensure(skill, offline=True)
    message = str(caught.value)
    assert "line 3" in message and f"Edit {skill.folder / 'requirements.txt'}" in message
    assert "--rebuild" not in message  # a rebuild cannot get past the file
    (report,) = validate_path(skill.folder)
    (warning,) = [d for d in report.diagnostics if d.code == "SD181"]
    assert not warning.is_error and report.valid
    assert (warning.path, warning.line) == (skill.folder / "requirements.txt", 3)
    assert "'--index-url' is not allowed" in warning.message
    clean = skill_with(tmp_path, "clean", "tinydep==1.0  # pinned\n")
    (ok,) = validate_path(clean.folder)
    assert "SD181" not in [d.code for d in ok.diagnostics]
