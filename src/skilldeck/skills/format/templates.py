"""``skilldeck skills new``: starter skills that already pass ``validate --strict``.

Strict mode allows only the six spec fields, so a script skill declares its entry
point as ``metadata: {entrypoint: scripts/run.py}`` (``metadata`` is a map of strings
in the spec) — ``detect_kind`` and the script runner read it from there as well as
from a top-level ``entrypoint:``. A code skill needs no declaration: its
``skill.py`` is what makes it one.

Every kind also gets ``evals/trigger_evals.json``, a trigger eval set in the format
Anthropic's skill-creator uses (``{"query", "should_trigger"}``), for
``skilldeck skills eval``: its requests are placeholders the author replaces with real
ones — some the skill must take, some near misses it must leave alone.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Literal

from skilldeck.errors import SkillError, SkillValidationError

__all__ = ["KINDS", "TemplateKind", "check_new_name", "new_skill"]

TemplateKind = Literal["prompt", "script", "code"]
KINDS: tuple[str, ...] = ("prompt", "script", "code")

_PROMPT = """\
---
name: {name}
description: {description}
---

# {title}

Replace this text with the instructions the model follows when it uses the skill.
Keep this file short; move long material into `references/` and say here when to
read it — files are only loaded when asked for.

## When to use

- The user asks for …

## Steps

1. …
2. …

## Output

Describe what a good result looks like.
"""

_SCRIPT = """\
---
name: {name}
description: {description}
metadata:
  entrypoint: scripts/run.py
---

# {title}

This skill runs `scripts/run.py`. Call it with a JSON object of arguments; it
prints one JSON object as its result.

## Arguments

- `text` (string): the input to work on.

## Result

`{{"ok": true, "result": ...}}` on success, `{{"ok": false, "error": "..."}}` otherwise.
"""

_RUN_PY = '''\
#!/usr/bin/env python3
"""Entry point of the {name} skill: JSON arguments in, one JSON value out.

The arguments arrive as a JSON string in argv[1] and the same JSON on stdin.
"""

import json
import sys


def main() -> int:
    raw = sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read()
    try:
        args = json.loads(raw or "{{}}")
    except json.JSONDecodeError as e:
        print(json.dumps({{"ok": False, "error": f"arguments are not JSON: {{e}}"}}))
        return 0
    text = str(args.get("text", "")) if isinstance(args, dict) else ""
    print(json.dumps({{"ok": True, "result": text.upper()}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
'''

_CODE = """\
---
name: {name}
description: {description}
---

# {title}

This skill is implemented in Python: `skill.py` defines one `CodeSkill` subclass.
Call it with a JSON object of arguments.

## Arguments

- `text` (string): the input to work on.
"""

_SKILL_PY = '''\
"""The {name} skill, implemented in Python.

``execute`` gets a SkillContext: ``ctx.args`` holds the arguments, ``ctx.tools``
calls the same tools the model uses (Read, Glob, Bash…, under the same
permissions) and ``ctx.llm`` (when set) asks the model a question.
"""

from __future__ import annotations

from skilldeck.skills.code import CodeSkill, SkillContext, SkillResult


class {cls}(CodeSkill):
    """Upper-cases `text`. Replace with the real work."""

    async def execute(self, ctx: SkillContext) -> SkillResult:
        args = ctx.args if isinstance(ctx.args, dict) else {{"text": ctx.args or ""}}
        text = str(args.get("text", ""))
        return SkillResult(success=True, output=text.upper())
'''

_EVALS = """\
[
  {{"query": "A request in a user's words that {name} should handle", "should_trigger": true}},
  {{"query": "The same need said differently, without its keywords", "should_trigger": true}},
  {{"query": "A harder case: indirect, or in another language", "should_trigger": true}},
  {{"query": "A near miss: related words, but a task {name} is not for", "should_trigger": false}},
  {{"query": "A request another skill (or no skill) should take", "should_trigger": false}}
]
"""

_DESCRIPTION = (
    "Describe what the {name} skill does and when to use it; the model decides "
    "from this line whether to load the skill."
)


def check_new_name(name: str) -> None:
    """The spec's name rule, checked before anything is written."""
    normal = unicodedata.normalize("NFKC", name)
    ok = (
        0 < len(normal) <= 64
        and all((c.isalpha() and c == c.lower()) or c.isdigit() or c == "-" for c in normal)
        and not normal.startswith("-")
        and not normal.endswith("-")
        and "--" not in normal
    )
    if not ok:
        raise SkillValidationError(
            f"Invalid skill name {name!r}: use 1-64 lowercase letters, digits and single "
            "hyphens, not starting or ending with a hyphen (e.g. 'pdf-tools')."
        )


def new_skill(name: str, *, kind: TemplateKind = "prompt", directory: Path) -> Path:
    """Create ``directory/name`` holding a ``kind`` skill; return the new folder.

    Refuses to touch an existing folder.
    """
    check_new_name(name)
    if kind not in KINDS:
        raise SkillValidationError(f"Unknown skill kind {kind!r}; use one of {', '.join(KINDS)}.")
    folder = directory / name
    try:
        directory.mkdir(parents=True, exist_ok=True)
        folder.mkdir()
    except FileExistsError as e:
        raise SkillError(
            f"{folder} already exists; choose another name or directory (nothing was changed)."
        ) from e
    except OSError as e:
        raise SkillError(f"Cannot create {folder}: {e.strerror}.") from e
    fields = {
        "name": name,
        "description": _DESCRIPTION.format(name=name),
        "title": name.replace("-", " ").capitalize(),
        "cls": _class_name(name),
    }
    skill_md = {"prompt": _PROMPT, "script": _SCRIPT, "code": _CODE}[kind]
    (folder / "SKILL.md").write_text(skill_md.format(**fields), encoding="utf-8")
    (folder / "evals").mkdir()
    (folder / "evals" / "trigger_evals.json").write_text(_EVALS.format(**fields), encoding="utf-8")
    if kind == "script":
        script = folder / "scripts" / "run.py"
        script.parent.mkdir()
        script.write_text(_RUN_PY.format(**fields), encoding="utf-8")
        script.chmod(0o755)
    elif kind == "code":
        (folder / "skill.py").write_text(_SKILL_PY.format(**fields), encoding="utf-8")
    return folder


def _class_name(name: str) -> str:
    cls = "".join(part.capitalize() for part in name.split("-")) + "Skill"
    return cls if cls.isidentifier() else "Skill" + "".join(c for c in cls if c.isalnum())
