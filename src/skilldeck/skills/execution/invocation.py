"""How a script skill is invoked: its entry point inside the folder, the interpreter
that runs it (extension, else shebang), the JSON value its arguments become, the size
above which that JSON goes on stdin only, the environment without secret-looking
variables, and the scratch folder's safe name prefix.

:mod:`.runner` runs the process with these; ``skills/execution/dynamic.py`` uses the
same environment scrub for `` !`cmd` `` dynamic context.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skilldeck.errors import SkillExecutionError
from skilldeck.skills.execution.substitute import split_arguments
from skilldeck.skills.model.skill import Skill

__all__ = [
    "ARGV_LIMIT",
    "SECRET_MARKERS",
    "entrypoint_of",
    "interpreter_argv",
    "normalize_args",
    "resolve_entrypoint",
    "scratch_prefix",
    "scrub_env",
]

_PREFIX_UNSAFE = re.compile(r"[^a-z0-9-]+")


def scratch_prefix(name: str) -> str:
    """The scratch folder's name prefix: the skill name reduced to ``[a-z0-9-]``, so
    no name (``../../x``, ``a/b``, NUL) can move the folder out of the temp dir."""
    slug = _PREFIX_UNSAFE.sub("-", name.lower()).strip("-")[:40]
    return f"skilldeck-{slug or 'skill'}-"


#: substrings (upper-case) that mark an environment variable as a secret
SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")
#: Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN); above this size the
#: JSON goes on stdin only and argv[1] is "-"
ARGV_LIMIT = 100 * 1024
_BY_SUFFIX = {".sh": "bash", ".bash": "bash", ".js": "node", ".mjs": "node", ".cjs": "node"}


def entrypoint_of(skill: Skill) -> str | None:
    """The declared entry point: ``entrypoint:`` or, in strict-valid skills,
    ``metadata: {entrypoint: …}`` (the spec only allows string maps there)."""
    return skill.metadata.entrypoint or skill.metadata.metadata.get("entrypoint") or None


def resolve_entrypoint(skill: Skill) -> Path:
    """The script file of ``skill``, inside its folder (SkillExecutionError naming
    what is wrong otherwise)."""
    entry = entrypoint_of(skill)
    if not entry:
        raise SkillExecutionError(
            f"Skill {skill.name!r} is not a script skill: it declares no `entrypoint`."
        )
    try:
        script = skill.resolve_resource(entry)
    except Exception as e:
        raise SkillExecutionError(
            f"Entry point {entry!r} of skill {skill.name!r} is not inside its folder "
            f"({skill.folder}); it must be a relative path such as scripts/run.py."
        ) from e
    if not script.is_file():
        raise SkillExecutionError(
            f"Entry point {entry!r} of skill {skill.name!r} does not exist in {skill.folder}."
        )
    return script


def _read_shebang(script: Path) -> list[str] | None:
    with script.open("rb") as fh:
        first = fh.readline(512)
    if not first.startswith(b"#!"):
        return None
    parts = first[2:].decode("utf-8", errors="replace").split()
    if len(parts) >= 2 and Path(parts[0]).name == "env" and parts[1] == "-S":
        del parts[1]  # `env -S "a b"` on one line: we already split it
    return parts or None


def interpreter_argv(script: Path, *, python: str | None = None) -> list[str]:
    """The argv prefix that runs ``script`` (without arguments); ``python`` runs a
    ``.py`` (default: the running interpreter)."""
    suffix = script.suffix.lower()
    if suffix == ".py":
        return [python or sys.executable, str(script)]
    if suffix in _BY_SUFFIX:
        program = _BY_SUFFIX[suffix]
        found = shutil.which(program)
        if found is None:
            raise SkillExecutionError(
                f"{script.name} needs `{program}`, which is not installed or not on PATH. "
                f"Install {program} to run this skill."
            )
        return [found, str(script)]
    shebang = _read_shebang(script)
    if shebang:
        program = shebang[0]
        if not Path(program).is_file():
            resolved = shutil.which(Path(program).name)
            if resolved is None:
                raise SkillExecutionError(
                    f"{script.name} asks for interpreter {program!r} (shebang), which is "
                    "not installed."
                )
            program = resolved
        return [program, *shebang[1:], str(script)]
    if os.access(script, os.X_OK):
        return [str(script)]
    raise SkillExecutionError(
        f"Cannot tell how to run {script.name}: give it a shebang line (#!/usr/bin/env …) "
        "or a .py, .sh or .js extension."
    )


def scrub_env(
    base: Mapping[str, str], *, allow: set[str] | frozenset[str] = frozenset()
) -> dict[str, str]:
    """``base`` without variables that look like secrets, except those in ``allow``."""
    return {
        k: v
        for k, v in base.items()
        if k in allow or not any(marker in k.upper() for marker in SECRET_MARKERS)
    }


def normalize_args(args: Any, *, declared: list[str] | tuple[str, ...] = ()) -> Any:
    """Turn what a model or a CLI passed into the JSON value the script receives.

    Objects, lists, numbers and booleans pass through; ``None`` becomes ``{}``; a string
    holding JSON is decoded; any other string becomes
    ``{"arguments": raw, "args": [shell-split words], <declared name>: word…}``.
    """
    if args is None:
        return {}
    if not isinstance(args, str):
        return args
    text = args.strip()
    if text[:1] in ("{", "["):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    words = split_arguments(args)
    value: dict[str, Any] = {"arguments": args, "args": words}
    for index, name in enumerate(declared):
        if index < len(words):
            value[name] = words[index]
    return value
