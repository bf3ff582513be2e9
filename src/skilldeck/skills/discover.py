"""Discovery: which folders are skills, in which roots, in which precedence.

Roots, highest precedence first (see ``docs/architecture.md``):

1. explicit roots (``--root``), in the order given
2. workspace: ``./.skilldeck/skills``, ``./.agents/skills``, ``./.claude/skills``
3. user: ``$SKILLDECK_HOME/skills``, ``~/.agents/skills``, ``~/.claude/skills``
4. ``settings.skills.dirs`` in listed order
5. bundled: ``skilldeck/bundled/skills``

(Skills registered in code outrank all of them; that is the registry's business.)

What counts as a skill and how a root is walked (nested skills, hidden folders,
symlink loops and dangling links) is :mod:`.walk`'s job; broken skills and scan
problems come back as diagnostics, never as exceptions.

Only frontmatter is read here. The per-root snapshot cache (:mod:`.cache`) makes a
second discovery of an unchanged tree cost a few thousand ``stat`` calls and no YAML.
"""

from __future__ import annotations

import contextlib
import gc
import os
import stat as stat_mod
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from skilldeck.skills.diagnostics import Diagnostic
from skilldeck.skills.skill import Skill, SkillSource
from skilldeck.skills.walk import ROOT_NOT_FOUND, Tree, diagnostic, walk_tree

if TYPE_CHECKING:
    from skilldeck.config import Settings
    from skilldeck.skills.cache import Record

__all__ = [
    "DiscoveryResult",
    "InvalidSkill",
    "Root",
    "RootScan",
    "bundled_root",
    "discover",
    "resolve_roots",
    "scan_root",
    "walk_tree",
]


@dataclass(frozen=True, slots=True)
class Root:
    """One folder to scan, and where it sits in the precedence order."""

    path: Path
    source: SkillSource
    #: ``--root`` and configured dirs must exist; default roots may be absent.
    explicit: bool = False


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
    #: (SKILL.md path, mtime_ns, size) of every skill file, for fingerprints.
    files: list[tuple[str, int, int]] = field(default_factory=list)
    #: how many SKILL.md files were parsed (0 on a fully warm scan)
    parsed: int = 0
    #: True when the directory tree was taken from the snapshot without re-listing
    tree_from_cache: bool = False


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


def bundled_root() -> Path:
    """The skills shipped inside the package (``skilldeck/bundled/skills``)."""
    return Path(__file__).resolve().parent.parent / "bundled" / "skills"


def resolve_roots(
    settings: Settings, *, roots: Sequence[Path] = (), no_defaults: bool = False
) -> list[Root]:
    """All roots in precedence order, duplicates (same real folder) removed."""
    workspace, home = settings.workspace, Path.home()
    found = [Root(_absolute(p, workspace), SkillSource.ROOT, explicit=True) for p in roots]
    if not no_defaults:
        found += [
            Root(workspace / sub, SkillSource.WORKSPACE)
            for sub in (".skilldeck/skills", ".agents/skills", ".claude/skills")
        ]
        found += [
            Root(settings.home / "skills", SkillSource.USER),
            Root(home / ".agents" / "skills", SkillSource.USER),
            Root(home / ".claude" / "skills", SkillSource.USER),
        ]
        found += [
            Root(_absolute(p, workspace), SkillSource.EXTRA, explicit=True)
            for p in settings.skills.dirs
        ]
        found.append(Root(bundled_root(), SkillSource.BUNDLED))
    unique: list[Root] = []
    seen: set[str] = set()
    for root in found:
        real = os.path.realpath(root.path)
        if real not in seen:
            seen.add(real)
            unique.append(root)
    return unique


def _absolute(path: Path, base: Path) -> Path:
    path = path.expanduser()
    return path if path.is_absolute() else base / path


def discover(
    settings: Settings,
    *,
    roots: Sequence[Path] = (),
    no_defaults: bool = False,
    use_cache: bool = True,
) -> DiscoveryResult:
    """Scan every root (see module docs); bodies are not read."""
    cache_dir = settings.cache_dir if use_cache else None
    strict = settings.skills.strict
    with gc_paused():
        scans = [
            scan_root(root, cache_dir=cache_dir, strict=strict)
            for root in resolve_roots(settings, roots=roots, no_defaults=no_defaults)
        ]
        _drop_overlaps(scans)
    return DiscoveryResult(scans)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Run discovery without the cyclic garbage collector.

    Discovery allocates a few hundred thousand small, acyclic objects (metadata,
    paths, records) that reference counting frees on its own. With the collector
    on, the growing heap triggers repeated full collections part-way through (on
    the 3,200-skill corpus they cost as much as the discovery itself); paused, the
    new objects are examined once, when the collector resumes.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _drop_overlaps(scans: list[RootScan]) -> None:
    """A skill reachable from two roots (one root inside another) counts once, for
    the higher-precedence root. Only paid when roots actually nest."""
    reals = [os.path.realpath(scan.root.path) + os.sep for scan in scans]
    nested = any(
        i != j and b.startswith(a) for i, a in enumerate(reals) for j, b in enumerate(reals)
    )
    if not nested:
        return
    seen: set[str] = set()
    for scan in scans:
        kept: list[Skill] = []
        for skill in scan.skills:
            real = os.path.realpath(skill.skill_md)
            if real not in seen:
                seen.add(real)
                kept.append(skill)
        scan.skills = kept
        invalid = [i for i in scan.invalid if os.path.realpath(i.skill_md) not in seen]
        seen.update(os.path.realpath(i.skill_md) for i in scan.invalid)
        scan.invalid = invalid


# ---- one root -----------------------------------------------------------------


def scan_root(root: Root, *, cache_dir: Path | None, strict: bool = False) -> RootScan:
    """Scan one root, reusing its snapshot where the files did not change."""
    from skilldeck.skills import cache as cache_mod

    scan = RootScan(root)
    try:
        is_dir = stat_mod.S_ISDIR(os.stat(root.path).st_mode)
    except OSError:
        is_dir = False
    if not is_dir:
        if root.explicit:
            scan.diagnostics.append(
                diagnostic(ROOT_NOT_FOUND, f"Skill root {root.path} is not a folder.", root.path)
            )
        return scan
    started = time.time_ns()
    snapshot = cache_mod.load_snapshot(cache_dir, root.path, strict=strict) if cache_dir else None
    if snapshot is not None and snapshot.tree_unchanged():
        tree, scan.tree_from_cache = snapshot.tree, True
    else:
        tree = walk_tree(root.path)
    scan.diagnostics.extend(tree.diagnostics)
    records = _load_all(scan, tree, snapshot.records if snapshot else {}, strict=strict)
    if cache_dir is not None and (scan.parsed or not scan.tree_from_cache):
        cache_mod.save_snapshot(cache_dir, root.path, tree, records, started=started, strict=strict)
    return scan


def _load_all(
    scan: RootScan, tree: Tree, cached: dict[str, Record], *, strict: bool
) -> dict[str, Record]:
    """Load every SKILL.md of ``tree``: from its record when the file's (mtime, size)
    still match, else by parsing it. Returns the records to store."""
    from skilldeck.skills import cache as cache_mod

    root, source = scan.root.path, scan.root.source
    records: dict[str, Record] = {}
    prefix = tree.root.rstrip(os.sep) + os.sep
    for rel in tree.skill_mds:
        md = prefix + rel
        try:
            st = os.stat(md)
        except OSError:
            continue  # removed since the walk
        rec = cached.get(rel)
        loaded = None
        if rec is not None and rec[0] == st.st_mtime_ns and rec[1] == st.st_size:
            loaded = cache_mod.skill_from_record(
                rec, md, source=source, root=root, recheck_kind=not scan.tree_from_cache
            )
        if rec is not None and loaded is not None:
            skill, diags, name = loaded
        else:
            skill, diags = _parse(Path(md), source=source, root=root, strict=strict)
            name = skill.name if skill else os.path.basename(os.path.dirname(md))
            rec = cache_mod.record_from_load(st, skill, diags, name=name)
            scan.parsed += 1
        records[rel] = rec
        scan.files.append((md, st.st_mtime_ns, st.st_size))
        if skill is not None:
            scan.skills.append(skill)
        else:
            folder = Path(md).parent
            scan.invalid.append(InvalidSkill(name, folder, Path(md), source, root, diags))
    return records


def _parse(
    skill_md: Path, *, source: SkillSource, root: Path, strict: bool
) -> tuple[Skill | None, list[Diagnostic]]:
    """Read one SKILL.md's frontmatter. Looked up through the module each time so a
    test can count parses by patching ``validate.load_skill``."""
    from skilldeck.skills import validate

    loaded: tuple[Skill | None, list[Diagnostic]] = validate.load_skill(
        skill_md, strict=strict, source=source, root=root
    )
    return loaded
