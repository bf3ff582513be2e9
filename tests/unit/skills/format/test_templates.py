"""``new_skill`` templates: strict-valid, the right kind, and they actually run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skilldeck.errors import SkillError, SkillValidationError
from skilldeck.skills.format import KINDS, check_new_name, load_skill, new_skill, validate_path
from skilldeck.skills.model.skill import SkillKind


@pytest.mark.parametrize("kind", KINDS)
def test_every_template_passes_strict_validation(kind: str, tmp_path: Path) -> None:
    folder = new_skill("my-tool", kind=kind, directory=tmp_path)  # type: ignore[arg-type]
    assert folder == tmp_path / "my-tool"
    [report] = validate_path(folder, strict=True)
    assert report.valid, report.to_dict()
    assert report.to_dict()["warnings"] == []
    skill, _ = load_skill(folder)
    assert skill is not None and skill.name == "my-tool"
    assert skill.kind is SkillKind(kind)


def test_script_template_reads_json_and_prints_json(tmp_path: Path) -> None:
    folder = new_skill("shout", kind="script", directory=tmp_path)
    script = folder / "scripts" / "run.py"
    assert script.stat().st_mode & 0o111
    by_argv = subprocess.run(
        [sys.executable, str(script), '{"text": "hi"}'], capture_output=True, text=True, check=True
    )
    assert json.loads(by_argv.stdout) == {"ok": True, "result": "HI"}
    by_stdin = subprocess.run(
        [sys.executable, str(script)], input='{"text": "yo"}', capture_output=True, text=True
    )
    assert json.loads(by_stdin.stdout) == {"ok": True, "result": "YO"}
    bad = subprocess.run([sys.executable, str(script), "not json"], capture_output=True, text=True)
    assert json.loads(bad.stdout)["ok"] is False


def test_script_template_entrypoint_is_under_metadata(tmp_path: Path) -> None:
    folder = new_skill("runner", kind="script", directory=tmp_path)
    skill, _ = load_skill(folder, strict=True)
    assert skill is not None
    assert skill.metadata.metadata == {"entrypoint": "scripts/run.py"}
    assert skill.kind is SkillKind.SCRIPT
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    assert "\nentrypoint:" not in text  # only spec fields at the top level


def test_code_template_defines_a_working_code_skill(tmp_path: Path) -> None:
    import anyio

    from skilldeck.config import load_settings
    from skilldeck.skills.code import SkillContext, load_code_skill, run_code_skill

    folder = new_skill("upper-case", kind="code", directory=tmp_path)
    skill, _ = load_skill(folder)
    assert skill is not None
    instance = load_code_skill(skill, settings=load_settings())  # untrusted: out of process
    assert instance.metadata.name == "upper-case"
    result = anyio.run(
        lambda: run_code_skill(instance, SkillContext(args={"text": "abc"}), timeout=10)
    )
    assert result.success and result.output == "ABC"


def test_existing_folder_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(SkillError, match="already exists"):
        new_skill("taken", directory=tmp_path)
    assert (tmp_path / "taken" / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert not (tmp_path / "taken" / "SKILL.md").exists()


@pytest.mark.parametrize("bad", ["", "Upper", "-lead", "trail-", "dou--ble", "sp ace", "a" * 65])
def test_bad_names_are_refused_before_writing(bad: str, tmp_path: Path) -> None:
    with pytest.raises(SkillValidationError):
        new_skill(bad, directory=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_unicode_lowercase_names_are_allowed() -> None:
    check_new_name("café-tools")


def test_unknown_kind_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SkillValidationError, match="kind"):
        new_skill("x", kind="binary", directory=tmp_path)  # type: ignore[arg-type]


def test_names_starting_with_a_digit_get_a_valid_class(tmp_path: Path) -> None:
    folder = new_skill("3d-render", kind="code", directory=tmp_path)
    source = (folder / "skill.py").read_text(encoding="utf-8")
    compile(source, "skill.py", "exec")
    assert "class Skill3dRenderSkill(CodeSkill)" in source
