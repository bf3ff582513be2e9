"""Skill folders for tests: one place for the SKILL.md writers many test files need.

Importable from any test file (``from skill_fixtures import ...``): pytest puts the
``tests/`` folder on ``sys.path`` for its root ``conftest.py``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

ECHO_SCRIPT = "import json, sys\nprint(json.dumps({'echo': json.loads(sys.argv[1])}))\n"


def write_skill_md(
    folder: Path, name: str | None = None, description: str = "Does things.", body: str = "# Body"
) -> Path:
    """A minimal valid SKILL.md in ``folder`` (name defaults to the folder's); its path."""
    folder.mkdir(parents=True, exist_ok=True)
    md = folder / "SKILL.md"
    md.write_text(
        f"---\nname: {name or folder.name}\ndescription: {description}\n---\n\n{body}\n",
        encoding="utf-8",
    )
    return md


def write_skill(root: Path, name: str, body: str = "Do $ARGUMENTS.", **fields: str) -> Path:
    """``root/name/SKILL.md`` with extra frontmatter ``fields``; the skill folder."""
    folder = root / name
    folder.mkdir(parents=True)
    extra = "".join(f"{k}: {v}\n" for k, v in fields.items())
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Skill {name} for {name} tasks.\n{extra}---\n\n{body}\n",
        encoding="utf-8",
    )
    return folder


def write_demo_catalog(root: Path, *, guide: str = "# Guide\n", **demo_fields: str) -> Path:
    """Two skills: ``demo`` (a prompt skill with ``references/guide.md``) and
    ``echo-script`` (a script skill echoing its JSON input). Returns ``root``."""
    demo = write_skill(root, "demo", "Demo body: $ARGUMENTS", **demo_fields)
    (demo / "references").mkdir()
    (demo / "references" / "guide.md").write_text(guide, encoding="utf-8")
    echo = write_skill(root, "echo-script", "Echo.", entrypoint="scripts/echo.py")
    (echo / "scripts").mkdir()
    (echo / "scripts" / "echo.py").write_text(ECHO_SCRIPT, encoding="utf-8")
    return root


def age_tree(top: Path, seconds: float = 3600) -> None:
    """Set every file and folder under ``top`` (and ``top``) ``seconds`` in the past,
    so a later write is newer than anything a scan saw."""
    past = time.time() - seconds
    for dirpath, dirnames, filenames in os.walk(top, topdown=False):
        for name in filenames + dirnames:
            os.utime(os.path.join(dirpath, name), (past, past))
    os.utime(top, (past, past))
