"""``skilldeck skills validate`` stays import-light: no pydantic, typer, click or rich.

Its CPU time is judged against skills-ref's ``agentskills validate`` (``python -m
bench startup``, row ``validate``), and pydantic alone cost about as much as the
whole reference command. The rules run on plain values; the metadata model is
built only for callers that read it, so a validation never imports pydantic.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skilldeck.skills.format import load_skill

HEAVY = ("pydantic", "pydantic_core", "typer", "click", "rich")

RUN = """
import json, sys
sys.argv = ["skilldeck", *sys.argv[1:]]
from skilldeck.cli.main import main
try:
    main()
except SystemExit as e:
    code = e.code
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print(json.dumps({{"code": code, "heavy": heavy}}), file=sys.stderr)
"""

GOOD = "---\nname: good\ndescription: A good skill. Use it to test.\n---\nBody\n"
#: unknown field, name/folder mismatch, uppercase name, entrypoint missing: warnings
#: in lenient mode, errors in strict mode (and a non-spec field)
WARNED = (
    "---\nname: Warned\ndescription: A warned skill.\nauthor: me\ntimeout: 30s\n"
    "requires-tools: Read, Bash\nentrypoint: scripts/run.py\n"
    "credentials: [{name: GITHUB_TOKEN}]\nmetadata: {version: '1.0'}\n---\nBody\n"
)
BROKEN = "---\nname: broken\ndescription: [not, text]\n---\nBody\n"


def run(args: list[str], cwd: Path) -> tuple[str, dict[str, object]]:
    out = subprocess.run(
        [sys.executable, "-c", RUN.format(heavy=HEAVY), *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return out.stdout, json.loads(out.stderr.strip().splitlines()[-1])


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    for name, text in (("good", GOOD), ("warned", WARNED), ("broken", BROKEN)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "SKILL.md").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["good"], 0),
        (["good", "--strict"], 0),
        (["warned"], 0),
        (["warned", "--strict"], 1),
        (["broken", "--json"], 1),
        (["good", "warned", "broken", "--strict", "--json"], 1),
    ],
)
def test_validate_imports_no_model_or_cli_framework(
    skills: Path, args: list[str], code: int
) -> None:
    out, seen = run(["skills", "validate", *args], skills)
    assert seen["code"] == code, out
    assert seen["heavy"] == []


@pytest.mark.parametrize("strict", [False, True])
def test_the_lean_validation_reports_what_the_model_path_reports(
    skills: Path, strict: bool
) -> None:
    """Every diagnostic, line and verdict is the one ``load_skill`` gives while it
    builds the metadata model (the path ``skills validate`` no longer takes)."""
    names = ["good", "warned", "broken"]
    paths = [str(skills / n) for n in names]
    out, _seen = run(["skills", "validate", *paths, "--json", *(["--strict"] * strict)], skills)
    reports = json.loads(out)
    for name, report in zip(names, reports, strict=True):
        skill, diagnostics = load_skill(skills / name, strict=strict)
        assert report["valid"] == (skill is not None and not any(d.is_error for d in diagnostics))
        assert report["name"] == (skill.name if skill else {"warned": "Warned"}.get(name, name))
        rows = [(d.code, d.rule, d.message, d.line, d.is_error) for d in diagnostics]
        shown = [(r["code"], r["rule"], r["message"], r["line"], True) for r in report["errors"]]
        shown += [
            (r["code"], r["rule"], r["message"], r["line"], False) for r in report["warnings"]
        ]
        assert sorted(shown, key=str) == sorted(rows, key=str)
    warned = [(w["code"], w["line"]) for w in reports[1]["warnings"]]
    assert warned == ([] if strict else [("SD104", 2), ("SD101", 2), ("SD150", 4), ("SD170", 7)])
