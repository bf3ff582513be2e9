"""The AST audit of code skills: each rule, line numbers, and what is not flagged."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from skilldeck.skills.code import RULES, Finding, audit_path, audit_skill, audit_source

P = Path("skill.py")


def codes(source: str) -> list[tuple[str, int]]:
    return [(f.code, f.line) for f in audit_source(textwrap.dedent(source), path=P)]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import os\nos.system('ls')\n", [("SDX01", 2)]),
        ("import os as o\no.popen('ls')\n", [("SDX01", 2)]),
        ("import os\nos.execvp('ls', ['ls'])\nos.spawnl(0, 'x')\n", [("SDX01", 2), ("SDX01", 3)]),
        ("from os import system\n", [("SDX01", 1)]),
        ("import subprocess\n", [("SDX02", 1)]),
        ("from subprocess import run\n", [("SDX02", 1)]),
        ("import multiprocessing.pool\n", [("SDX02", 1)]),
        ("import asyncio\nasyncio.create_subprocess_exec('ls')\n", [("SDX02", 2)]),
        ("import socket\n", [("SDX03", 1)]),
        ("x = eval('1')\n", [("SDX04", 1)]),
        ("exec('x = 1')\n", [("SDX04", 1)]),
        ("compile('1', 'f', 'eval')\n", [("SDX04", 1)]),
        ("import ctypes\n", [("SDX05", 1)]),
        ("import importlib\n", [("SDX06", 1)]),
        ("m = __import__('os')\n", [("SDX06", 1)]),
        ("import os\ngetattr(os, 'system')('ls')\n", [("SDX01", 2)]),
        ("getattr(__builtins__, 'eval')\n", [("SDX04", 1)]),
        ("open('/etc/passwd')\n", [("SDX07", 1)]),
        ("open('../../secrets.txt')\n", [("SDX07", 1)]),
        ("open('~/.ssh/id_rsa')\n", [("SDX07", 1)]),
        ("open(f'/home/{user}/x')\n", [("SDX07", 1)]),
        ("import io\nio.open('/etc/hosts')\n", [("SDX07", 2)]),
        ("from pathlib import Path\nPath('/etc/hosts').read_text()\n", [("SDX07", 2)]),
        ("import pathlib\npathlib.Path('../x').write_text('y')\n", [("SDX07", 2)]),
        # issue 15: references, aliases and other spellings of the same calls
        ("open(path)\n", [("SDX07", 1)]),
        ("import posix\nposix.system('x')\n", [("SDX01", 2)]),
        ("import builtins\nbuiltins.exec('x')\n", [("SDX04", 2)]),
        ("import sys\nsys.modules['os'].system('x')\n", [("SDX06", 2)]),
        ("import os as q\nrun = q.system\n", [("SDX01", 2)]),
        ("from os import system as s\ns('x')\n", [("SDX01", 1), ("SDX01", 2)]),
        ("import functools, os\nfunctools.partial(os.system, 'x')\n", [("SDX01", 2)]),
        ("import os\nlist(map(os.system, ['x']))\n", [("SDX01", 2)]),
        ("list(map(exec, ['x']))\n", [("SDX04", 1)]),
        ("import pickle\n", [("SDX10", 1)]),
        ("import runpy\n", [("SDX06", 1)]),
        ("from asyncio import create_subprocess_shell\n", [("SDX02", 1)]),
    ],
)
def test_rules(source: str, expected: list[tuple[str, int]]) -> None:
    assert codes(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "import os\nos.path.join('a', 'b')\nos.environ.get('X')\n",
        "open('data/local.txt')\n",
        "open('a/../b.txt')\n",
        "from pathlib import Path\nPath(__file__).parent.joinpath('x').read_text()\n",
        "from pathlib import Path\nPath('/etc')\n",  # constructing is not opening
        "import json, re, collections\n",
        "ctx.tools.call('Bash', {'command': 'rm -rf /'})\n",  # goes through the tools
        "from . import helpers\n",
    ],
)
def test_not_flagged(source: str) -> None:
    assert codes(source) == []


def test_syntax_error_is_a_finding() -> None:
    findings = audit_source("def broken(:\n", path=P)
    assert [f.code for f in findings] == ["SDX00"] and findings[0].line == 1


def test_finding_rendering_and_dict() -> None:
    finding = audit_source("import os\n\nos.system('x')\n", path=P)[0]
    assert isinstance(finding, Finding) and finding.rule == "os-exec"
    assert str(finding).startswith("skill.py:3:0: SDX01 os-exec: calls `os.system()`")
    assert finding.to_dict() == {
        "code": "SDX01",
        "rule": "os-exec",
        "message": "calls `os.system()` (runs programs)",
        "path": "skill.py",
        "line": 3,
        "col": 0,
    }
    assert set(RULES) == {f"SDX{i:02d}" for i in range(11)}


def test_audit_skill_walks_every_python_file(tmp_path: Path) -> None:
    # issue 15: hidden folders, .venv, __pycache__ and a code skill's scripts/ are read
    (tmp_path / "SKILL.md").write_text("---\nname: x\ndescription: y\n---\n")
    (tmp_path / "skill.py").write_text("import socket\n")
    for rel, text in {
        "lib/util.py": "eval('1')\n",
        "scripts/run.py": "import subprocess\n",
        "__pycache__/junk.py": "import ctypes\n",
        ".venv/v.py": "import pickle\n",
    }.items():
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "evil.pyc").write_bytes(b"\0" * 16)
    found = {(f.path.name, f.code) for f in audit_skill(tmp_path)}
    assert found == {
        ("skill.py", "SDX03"),
        ("util.py", "SDX04"),
        ("run.py", "SDX02"),
        ("junk.py", "SDX05"),
        ("v.py", "SDX10"),
        ("evil.pyc", "SDX09"),
    }
    (tmp_path / "skill.py").unlink()  # a script skill: its scripts/ run sandboxed
    without = {f.path.name for f in audit_skill(tmp_path)}
    assert "run.py" not in without
    assert "run.py" in {f.path.name for f in audit_skill(tmp_path, include_scripts=True)}


def test_utf7_cookie_is_decoded_and_flagged(tmp_path: Path) -> None:
    file = tmp_path / "skill.py"
    file.write_bytes(b"# coding: utf-7\n# note +AAo-import os+ADs-os.system(+ACc-x+ACc-)\n")
    assert [(f.code, f.line) for f in audit_path(file)] == [("SDX08", 1), ("SDX01", 3)]


def test_audit_path_accepts_a_single_file(tmp_path: Path) -> None:
    file = tmp_path / "one.py"
    file.write_text("import os\nos.system('x')\n")
    assert [(f.code, f.line) for f in audit_path(file)] == [("SDX01", 2)]
