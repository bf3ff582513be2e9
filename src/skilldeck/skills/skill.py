"""The ``Skill`` object: metadata read eagerly, body and resources read lazily.

Level 1 (name + description) is all discovery pays for; the body (level 2) is read
from disk the first time ``body`` is asked for, starting at the byte offset the parser
recorded, and resources (level 3) are listed/read on demand with path confinement.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from skilldeck.errors import ResourceAccessError
from skilldeck.skills.diagnostics import Diagnostic
from skilldeck.skills.spec import SkillMetadata

#: Upper bound on files listed as level-3 resources, so a skill folder holding a
#: vendored dependency tree cannot flood the model's context.
MAX_LISTED_RESOURCES = 200
_SKIP_DIRS = frozenset({"__pycache__", ".git", "node_modules", ".venv", ".DS_Store"})


class SkillKind(StrEnum):
    PROMPT = "prompt"  # SKILL.md only (plus resources)
    SCRIPT = "script"  # frontmatter `entrypoint: scripts/<file>`
    CODE = "code"  # skill.py with one CodeSkill subclass


class SkillSource(StrEnum):
    """Where a skill came from, highest precedence first."""

    REGISTERED = "registered"
    ROOT = "root"  # an explicit --root given on the command line
    WORKSPACE = "workspace"
    USER = "user"
    EXTRA = "extra"  # extra directories from config
    BUNDLED = "bundled"


def detect_kind(folder: Path, metadata: SkillMetadata) -> SkillKind:
    if (folder / "skill.py").is_file():
        return SkillKind.CODE
    # strict-valid skills (spec fields only) declare it as `metadata: {entrypoint: …}`
    if metadata.entrypoint or metadata.metadata.get("entrypoint"):
        return SkillKind.SCRIPT
    return SkillKind.PROMPT


@dataclass(eq=False)
class Skill:
    """One loaded skill. ``folder`` is the skill directory, ``skill_md`` its SKILL.md.

    ``body_offset`` is the byte offset of the body inside ``skill_md`` (after the
    closing ``---`` line), so the body can be loaded without re-parsing YAML.
    """

    metadata: SkillMetadata
    folder: Path
    skill_md: Path
    source: SkillSource = SkillSource.REGISTERED
    root: Path | None = None
    body_offset: int = 0
    kind: SkillKind = SkillKind.PROMPT
    enabled: bool = True
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: when set, the skill is known but cannot be used here (gating), and why.
    unavailable_reason: str | None = None
    _body: str | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def description(self) -> str:
        return self.metadata.description

    @property
    def version(self) -> str | None:
        return self.metadata.version

    @property
    def available(self) -> bool:
        return self.enabled and self.unavailable_reason is None

    @property
    def body(self) -> str:
        """Level 2: the Markdown after the frontmatter, read on first access."""
        if self._body is None:
            raw = self.skill_md.read_bytes()[self.body_offset :]
            text = raw.decode("utf-8", errors="replace")
            self._body = text.replace("\r\n", "\n").strip("\n")
        return self._body

    def with_body(self, body: str) -> Skill:
        """Attach an in-memory body (for skills registered in code)."""
        self._body = body
        return self

    # ---- level 3 -------------------------------------------------------------

    def resolve_resource(self, relative: str) -> Path:
        """Resolve ``relative`` inside the skill folder or raise ResourceAccessError.

        Symlinks are resolved before the check, so a link pointing outside is refused.
        """
        if not relative or os.path.isabs(relative) or "\x00" in relative:
            raise ResourceAccessError(
                f"Resource path {relative!r} of skill {self.name!r} must be a relative path "
                "inside the skill folder."
            )
        base = self.folder.resolve()
        target = (base / relative).resolve()
        if target != base and base not in target.parents:
            raise ResourceAccessError(
                f"Resource path {relative!r} escapes the folder of skill {self.name!r} "
                f"({base}); only files inside it can be read."
            )
        return target

    def list_resources(self) -> list[str]:
        """Files under the skill folder other than SKILL.md, as sorted relative paths."""
        base = self.folder.resolve()
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
            for name in sorted(filenames):
                full = Path(dirpath) / name
                rel = full.relative_to(base).as_posix()
                if rel.lower() == "skill.md" or name.endswith(".pyc"):
                    continue
                if full.is_symlink() and not _inside(full.resolve(), base):
                    continue
                found.append(rel)
                if len(found) >= MAX_LISTED_RESOURCES:
                    return found
        return found

    def read_resource(self, relative: str) -> str:
        target = self.resolve_resource(relative)
        if not target.is_file():
            raise ResourceAccessError(
                f"Skill {self.name!r} has no file {relative!r}. "
                f"Available: {', '.join(self.list_resources()[:20]) or 'none'}."
            )
        return target.read_text(encoding="utf-8", errors="replace")


def _inside(path: Path, base: Path) -> bool:
    return path == base or base in path.parents
