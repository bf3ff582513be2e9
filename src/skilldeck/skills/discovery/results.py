"""What discovery hands out: per root, the skills that loaded (:class:`Skill`), the
SKILL.md files that did not (:class:`InvalidSkill`, with every reason why) and the
scan's own problems, all in scan order.

These are the only shapes that leave discovery: a loaded skill is a ``Skill``
(its warnings decoded when asked), a broken one an ``InvalidSkill``. Snapshot
records and worker items stay inside the snapshot and the parallel scan.

Plain classes with ``__slots__`` rather than ``@dataclass``: the generated methods
of the three cost about two milliseconds at every import (``python -m bench
discovery``, figure ``cli_list_json_warm``; ``python -m bench startup``).
"""

from __future__ import annotations

from pathlib import Path

from skilldeck.skills.discovery.roots import Root
from skilldeck.skills.model.diagnostics import Diagnostic, DiagnosticRow, diagnostic_from_row
from skilldeck.skills.model.skill import Skill, SkillSource

__all__ = ["DiscoveryResult", "InvalidSkill", "RootScan"]


_INVALID_FIELDS = ("name", "folder", "skill_md", "source", "root", "diagnostics")


class InvalidSkill:
    """A SKILL.md that could not be loaded, with every reason why. Compared by value."""

    __slots__ = ("diagnostics", "folder", "name", "root", "skill_md", "source")

    def __init__(
        self,
        name: str,
        folder: Path,
        skill_md: Path,
        source: SkillSource,
        root: Path,
        diagnostics: list[Diagnostic],
    ) -> None:
        self.name = name
        self.folder = folder
        self.skill_md = skill_md
        self.source = source
        self.root = root
        self.diagnostics = diagnostics

    def _key(self) -> tuple[object, ...]:
        return (self.name, self.folder, self.skill_md, self.source, self.root, self.diagnostics)

    def __eq__(self, other: object) -> bool:
        if type(other) is not InvalidSkill:
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable, like a dataclass

    def __repr__(self) -> str:  # a dataclass's: every field, diagnostics included
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in _INVALID_FIELDS)
        return f"InvalidSkill({fields})"


class RootScan:
    """What one root holds, in scan order (parents before nested skills)."""

    __slots__ = (
        "diagnostics",
        "file_mtimes",
        "file_paths",
        "file_sizes",
        "invalid",
        "parsed",
        "root",
        "skills",
        "tree_from_cache",
    )

    def __init__(self, root: Root, *, tree_from_cache: bool = False) -> None:
        self.root = root
        self.skills: list[Skill] = []
        self.invalid: list[InvalidSkill] = []
        self.diagnostics: list[Diagnostic] = []
        #: every skill file's path, mtime_ns and size (see ``files``)
        self.file_paths: list[str] = []
        self.file_mtimes: list[int] = []
        self.file_sizes: list[int] = []
        #: how many SKILL.md files were parsed (0 on a fully warm scan)
        self.parsed = 0
        #: True when the directory tree was taken from the snapshot without re-listing
        self.tree_from_cache = tree_from_cache

    def __repr__(self) -> str:
        return (
            f"RootScan(root={self.root!r}, skills={len(self.skills)}, "
            f"invalid={len(self.invalid)}, parsed={self.parsed})"
        )

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


class DiscoveryResult:
    """Every root's scan, highest precedence first."""

    __slots__ = ("roots",)

    def __init__(self, roots: list[RootScan]) -> None:
        self.roots = roots

    def __repr__(self) -> str:
        return f"DiscoveryResult(roots={self.roots!r})"

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


def invalid_skill(
    name: str, md: str, rows: list[DiagnosticRow], *, source: SkillSource, root: Path
) -> InvalidSkill:
    """The :class:`InvalidSkill` of the SKILL.md at ``md`` in ``root``, its
    diagnostics decoded from ``rows`` (a fresh parse's or a snapshot record's)."""
    skill_md = Path(md)
    diagnostics = [diagnostic_from_row(row, skill_md) for row in rows]
    return InvalidSkill(name, skill_md.parent, skill_md, source, root, diagnostics)
