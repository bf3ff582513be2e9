"""What discovery hands out: per root, the skills that loaded (:class:`Skill`), the
SKILL.md files that did not (:class:`InvalidSkill`, with every reason why) and the
scan's own problems, all in scan order.

These are the only shapes that leave discovery: a loaded skill is a ``Skill``
(its warnings decoded when asked), a broken one an ``InvalidSkill``. Snapshot
records and worker items stay inside the snapshot and the parallel scan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from skilldeck.skills.discovery.roots import Root
from skilldeck.skills.model.diagnostics import Diagnostic
from skilldeck.skills.model.skill import Skill, SkillSource

__all__ = ["DiscoveryResult", "InvalidSkill", "RootScan"]


@dataclass(slots=True)
class InvalidSkill:
    """A SKILL.md that could not be loaded, with every reason why."""

    name: str
    folder: Path
    skill_md: Path
    source: SkillSource
    root: Path
    diagnostics: list[Diagnostic]


@dataclass(slots=True)
class RootScan:
    """What one root holds, in scan order (parents before nested skills)."""

    root: Root
    skills: list[Skill] = field(default_factory=list)
    invalid: list[InvalidSkill] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: every skill file's path, mtime_ns and size (see ``files``)
    file_paths: list[str] = field(default_factory=list)
    file_mtimes: list[int] = field(default_factory=list)
    file_sizes: list[int] = field(default_factory=list)
    #: how many SKILL.md files were parsed (0 on a fully warm scan)
    parsed: int = 0
    #: True when the directory tree was taken from the snapshot without re-listing
    tree_from_cache: bool = False

    @property
    def files(self) -> list[tuple[str, int, int]]:
        """(SKILL.md path, mtime_ns, size) of every skill file, for fingerprints.
        Kept as three flat lists: no tuple per file for the collector to walk."""
        return list(zip(self.file_paths, self.file_mtimes, self.file_sizes, strict=True))

    def add_file(self, path: str, mtime: int, size: int) -> None:
        self.file_paths.append(path)
        self.file_mtimes.append(mtime)
        self.file_sizes.append(size)

    def add(self, loaded: Skill | InvalidSkill) -> None:
        """One SKILL.md's outcome, in scan order."""
        if isinstance(loaded, InvalidSkill):
            self.invalid.append(loaded)
        else:
            self.skills.append(loaded)


@dataclass(slots=True)
class DiscoveryResult:
    roots: list[RootScan]

    @property
    def skills(self) -> list[Skill]:
        """Every loaded skill, highest-precedence root first."""
        return [s for scan in self.roots for s in scan.skills]

    @property
    def invalid(self) -> list[InvalidSkill]:
        return [i for scan in self.roots for i in scan.invalid]

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Scan problems (loops, dangling links, unreadable folders, missing roots)."""
        return [d for scan in self.roots for d in scan.diagnostics]

    @property
    def parsed(self) -> int:
        return sum(scan.parsed for scan in self.roots)


def invalid_skill(name: str, md: str, root: Root, diagnostics: list[Diagnostic]) -> InvalidSkill:
    """The :class:`InvalidSkill` of the SKILL.md at ``md`` under ``root``."""
    skill_md = Path(md)
    return InvalidSkill(name, skill_md.parent, skill_md, root.source, root.path, diagnostics)
