"""Discovery: which folders are skills, in which roots, in which precedence.

Roots, highest precedence first (see ``docs/architecture.md``):

1. explicit roots (``--root``), in the order given
2. workspace: ``./.skilldeck/skills``, ``./.agents/skills``, ``./.claude/skills`` —
   only when the workspace is trusted and the root existed when it was trusted
   (``settings.workspace_trust.accepts``, see
   :mod:`skilldeck.trust`): whoever writes the folder, a cloned repository or a model,
   must not choose the skills (and the code) a run loads
3. user: ``$SKILLDECK_HOME/skills``, ``~/.agents/skills``, ``~/.claude/skills``
4. ``settings.skills.dirs`` in listed order
5. bundled: ``skilldeck/bundled/skills``

(Skills registered in code outrank all of them; that is the registry's business.)

What counts as a skill and how a root is walked (nested skills, hidden folders,
symlink loops and dangling links) is :mod:`.walk`'s job; broken skills and scan
problems come back as diagnostics, never as exceptions.

Only frontmatter is read here. The per-root snapshot cache (:mod:`.cache`) makes a
second discovery of an unchanged tree cost a few thousand ``stat`` calls and no YAML.

Speed-fenced (``python -m bench discovery``, figures ``warm`` and
``cli_list_json_warm``; ``python -m bench compare discovery`` against the old code):
the warm path rebuilds skills from the snapshot's columns in bulk
(:func:`_rebuild_unchanged`, :func:`_build_run`), marks only the skills gating can
act on, and keeps positional rows out of every other module.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import itertools
import operator
import os
import stat as stat_mod
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.skills.discovery import cache as cache_mod
from skilldeck.skills.discovery.walk import ROOT_NOT_FOUND, Tree, diagnostic, walk_tree
from skilldeck.skills.model.diagnostics import Diagnostic, DiagnosticRow, diagnostic_from_row
from skilldeck.skills.model.skill import Skill, SkillKind, SkillSource
from skilldeck.trust import WORKSPACE_SKILL_ROOTS

if TYPE_CHECKING:
    from skilldeck.config import Settings
    from skilldeck.skills.discovery import _parallel
    from skilldeck.skills.discovery._blob import SnapshotBlob
    from skilldeck.skills.discovery.cache import Record, RootSnapshot
    from skilldeck.skills.format import Discovered

_KINDS = {str(k): k for k in SkillKind}

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
    return Path(__file__).resolve().parents[2] / "bundled" / "skills"


def resolve_roots(
    settings: Settings, *, roots: Sequence[Path] = (), no_defaults: bool = False
) -> list[Root]:
    """All roots in precedence order, duplicates (same real folder) removed."""
    workspace, home = settings.workspace, Path.home()
    found = [Root(_absolute(p, workspace), SkillSource.ROOT, explicit=True) for p in roots]
    if not no_defaults:
        # a trusted folder's roots that existed at trust time (skilldeck.trust)
        trust = settings.workspace_trust
        found += [
            Root(workspace / sub, SkillSource.WORKSPACE)
            for sub in WORKSPACE_SKILL_ROOTS
            if trust.accepts(sub)
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
    workers = settings.skills.discovery_workers
    with gc_paused():
        scans = [
            scan_root(root, cache_dir=cache_dir, strict=strict, workers=workers)
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
    new objects are examined once, when the collector resumes. The one GC pause of
    the skills layer (the registry wraps discovery and its resolve pass in it):
    justified by ``python -m bench discovery``, figures ``cold`` and ``warm``.
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
            real = os.path.realpath(skill.skill_md_str)
            if real not in seen:
                seen.add(real)
                kept.append(skill)
        scan.skills = kept
        invalid = [i for i in scan.invalid if os.path.realpath(i.skill_md) not in seen]
        seen.update(os.path.realpath(i.skill_md) for i in scan.invalid)
        scan.invalid = invalid


# ---- one root -----------------------------------------------------------------


def scan_root(
    root: Root, *, cache_dir: Path | None, strict: bool = False, workers: int = 1
) -> RootScan:
    """Scan one root, reusing its snapshot where the files did not change. A cold
    scan of a large tree may parse on up to ``workers`` CPUs (0: as many as are
    available; see :mod:`._parallel`)."""
    try:
        is_dir = stat_mod.S_ISDIR(os.stat(root.path).st_mode)
    except OSError:
        is_dir = False
    if not is_dir:
        scan = RootScan(root)
        if root.explicit:
            scan.diagnostics.append(
                diagnostic(ROOT_NOT_FOUND, f"Skill root {root.path} is not a folder.", root.path)
            )
        return scan
    started = time.time_ns()
    snapshot = cache_mod.load_snapshot(cache_dir, root.path, strict=strict) if cache_dir else None
    if snapshot is not None and snapshot.tree_unchanged():
        scan = RootScan(root, tree_from_cache=True)
        try:
            records = _load_unchanged_tree(scan, snapshot, strict=strict)
        except (ValueError, TypeError, IndexError, KeyError):
            snapshot = None  # a damaged row: scan afresh, trusting nothing stored
        else:
            scan.diagnostics.extend(snapshot.tree.diagnostics)
            if cache_dir is not None and records is not None:
                tree = snapshot.full_tree()
                cache_mod.save_snapshot(
                    cache_dir, root.path, tree, records, started=started, strict=strict
                )
            return scan
    scan = RootScan(root)
    cached = _records_of(snapshot)
    with _feed(root, cached, strict=strict, workers=workers) as feed:
        tree = walk_tree(root.path, found=feed.found if feed is not None else None)
        scan.diagnostics.extend(tree.diagnostics)
        records = _load_all(scan, tree, cached, strict=strict, feed=feed)
    if cache_dir is not None:
        cache_mod.save_snapshot(cache_dir, root.path, tree, records, started=started, strict=strict)
    return scan


def _feed(
    root: Root, cached: dict[str, Record], *, strict: bool, workers: int
) -> contextlib.AbstractContextManager[_parallel.ParseFeed | None]:
    """Where a cold scan's SKILL.md files go as the walk finds them: a
    :class:`~._parallel.ParseFeed` when more than one process may parse (nothing
    cached, ``workers`` other than 1, forking safe here), else nothing."""
    if cached or workers == 1:
        return contextlib.nullcontext()
    from skilldeck.skills.discovery import _parallel  # lazy: forking helpers, cold scans only

    limit = _parallel.worker_limit(workers)
    if limit < 2:
        return contextlib.nullcontext()
    return _parallel.ParseFeed(
        str(root.path),
        source=root.source,
        root_path=root.path,
        strict=strict,
        workers=limit,
        parse=_parse,
    )


def _records_of(snapshot: RootSnapshot | None) -> dict[str, Record]:
    if snapshot is None:
        return {}
    try:
        return snapshot.records
    except (TypeError, ValueError, IndexError, KeyError):  # malformed rows: reuse none
        return {}


def _prefix(tree: Tree) -> str:
    return tree.root.rstrip(os.sep) + os.sep


def _md_path(prefix: str, rel: str) -> str:
    """The SKILL.md path as ``Path`` would print it (``rel`` uses ``/``)."""
    return prefix + (rel if os.sep == "/" else rel.replace("/", os.sep))


def _load_unchanged_tree(
    scan: RootScan, snapshot: RootSnapshot, *, strict: bool
) -> dict[str, Record] | None:
    """The warm path (speed-fenced: positional snapshot rows and column loops stay in
    discovery; ``python -m bench discovery``, figure ``warm``): the tree is the
    snapshot's, so its rows are the SKILL.md files,
    in order. One ``stat`` per file (in a C loop); a row whose (mtime, size) still
    match becomes a skill without reading or decoding anything. Returns the records
    to store when any file had to be read again, None when the snapshot stays as it
    is. A malformed row raises (ValueError/TypeError/KeyError/IndexError) and the
    caller scans the root afresh."""
    tree, rels = snapshot.tree, snapshot.cols[0]
    prefix = _prefix(tree)
    mds = list(map(prefix.__add__, rels))
    if os.sep != "/":
        mds = [_md_path(prefix, rel) for rel in rels]
    try:
        stats: list[os.stat_result | None] = list(map(os.stat, mds))
    except OSError:  # one went missing since: look at them one by one
        stats = [_stat_or_none(md) for md in mds]
    else:
        if _rebuild_unchanged(scan, snapshot, mds, stats):
            return None
    # some file changed, or a skill did not load (13 in the corpus): row by row,
    # unchanged rows built in runs between the others, keeping the tree's order
    rows = snapshot.rows
    with_code = tree.with_code
    others: dict[int, os.stat_result | None] = {}  # rows not rebuilt from the snapshot
    fresh: dict[str, Record | None] = {}
    run: list[tuple[str, str, int, int, int, SkillKind]] = []
    marks: list[int] = []  # the places in ``run`` of skills gating must look at
    gate = snapshot.gate
    for index, (md, st, row) in enumerate(zip(mds, stats, rows, strict=True)):
        rel, mtime, size, start, offset, kind, end, name = row
        if st is not None and st.st_mtime_ns == mtime and st.st_size == size and kind:
            if type(offset) is not int or type(name) is not str:
                raise ValueError(f"malformed snapshot row for {rel}")
            skill_kind = SkillKind.CODE if rel in with_code else _KINDS[kind]
            if rel in gate and cache_mod.gates(rel, skill_kind, snapshot):
                marks.append(len(run))
            run.append((md, name, start, end, offset, skill_kind))
        else:
            _build_run(scan, snapshot.blob, run, marks)
            others[index] = st
            _load_other(scan, snapshot, row, md, st, fresh, strict=strict)
    _build_run(scan, snapshot.blob, run, marks)
    _record_files(scan, mds, rows, others)
    if not fresh:
        return None
    records = snapshot.records
    for rel, new in fresh.items():
        if new is None:
            records.pop(rel, None)
        else:
            records[rel] = new
    return records


def _rebuild_unchanged(
    scan: RootScan, snapshot: RootSnapshot, mds: list[str], stats: list[os.stat_result | None]
) -> bool:
    """The usual warm case, all at once: when every SKILL.md still has its stored
    (mtime, size) and every row is well-formed, build the skills in one tight loop
    (the few that did not load go to ``scan.invalid`` from their stored diagnostics)
    and return True; otherwise change nothing and return False (the row-by-row loop
    of :func:`_load_unchanged_tree` takes over). The comparisons and type checks
    are whole-column operations that run in C."""
    cols, all_mds = snapshot.cols, mds
    mtimes, sizes = cols[1], cols[2]
    if list(map(_MTIME_NS, stats)) != mtimes or list(map(_SIZE, stats)) != sizes:
        return False
    rels, _, _, starts, offsets, kind_names, ends, names = cols
    if not (_all_of(str, names) and _all_of(int, starts) and _all_of(int, ends)):
        return False
    invalid: list[InvalidSkill] = []
    if not (_all_of(int, offsets) and set(kind_names) <= _KIND_NAMES):
        # skills that did not load (kind None; 13 in the corpus), taken out of the columns
        found = _unchanged_invalid(scan, snapshot, mds)
        if found is None:
            return False
        invalid = found
        loaded = [kind is not None for kind in kind_names]
        rels, starts, offsets, kind_names, ends, names = (
            list(itertools.compress(col, loaded))
            for col in (rels, starts, offsets, kind_names, ends, names)
        )
        mds = list(itertools.compress(mds, loaded))
        if not _all_of(int, offsets):
            return False
    kinds = list(map(_KINDS.__getitem__, kind_names))
    columns = zip(mds, names, starts, ends, offsets, kinds, strict=True)
    built = Skill._many_from_store(
        snapshot.blob, columns, source=scan.root.source, root=scan.root.path
    )
    skills = scan.skills
    first = len(skills)
    skills.extend(built)
    gate, with_code = snapshot.gate, snapshot.tree.with_code
    if gate or with_code:  # a second pass over the few skills either set names
        code = SkillKind.CODE
        for skill, rel in zip(skills[first:], rels, strict=True):
            if rel in with_code:
                skill.kind = code
            if rel in gate and cache_mod.gates(rel, skill.kind, snapshot):
                skill._gate = True
    scan.invalid.extend(invalid)
    scan.file_paths, scan.file_mtimes, scan.file_sizes = all_mds, mtimes, sizes
    return True


def _unchanged_invalid(
    scan: RootScan, snapshot: RootSnapshot, mds: list[str]
) -> list[InvalidSkill] | None:
    """The unchanged rows of skills that did not load, rebuilt from their stored
    diagnostics (as :func:`_load_other` would); None when a row is not of that shape
    (kind neither a known kind nor None) or its record does not decode."""
    _rels, mtimes, sizes, starts, offsets, kinds, ends, names = snapshot.cols
    source, root = scan.root.source, scan.root.path
    invalid: list[InvalidSkill] = []
    for index, kind in enumerate(kinds):
        if kind is not None:
            if kind not in _KIND_NAMES:
                return None
            continue
        stored = cache_mod.Stored(snapshot.blob, starts[index], ends[index], False)
        rec = [mtimes[index], sizes[index], stored, offsets[index], None, None, names[index]]
        md = mds[index]
        loaded = cache_mod.skill_from_record(rec, md, source=source, root=root, has_code=False)
        if loaded is None or loaded[0] is not None:
            return None
        skill_md = Path(md)
        invalid.append(InvalidSkill(loaded[2], skill_md.parent, skill_md, source, root, loaded[1]))
    return invalid


def _build_run(
    scan: RootScan,
    blob: SnapshotBlob,
    run: list[tuple[str, str, int, int, int, SkillKind]],
    marks: list[int],
) -> None:
    """The skills of consecutive unchanged rows ``(md, name, start, end, offset,
    kind)`` in one :meth:`Skill._many_from_store` call (a call per skill is a tenth
    of a warm discovery), those at ``marks`` marked for gating; empties both."""
    if not run:
        return
    built = Skill._many_from_store(blob, run, source=scan.root.source, root=scan.root.path)
    for place in marks:
        built[place]._gate = True
    scan.skills.extend(built)
    run.clear()
    marks.clear()


def _all_of(kind: type, values: list[Any]) -> bool:
    return set(map(type, values)) <= {kind}


def _stat_or_none(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _load_other(
    scan: RootScan,
    snapshot: RootSnapshot,
    row: list[Any],
    md: str,
    st: os.stat_result | None,
    fresh: dict[str, Record | None],
    *,
    strict: bool,
) -> None:
    """A row the fast branch of :func:`_load_unchanged_tree` did not take: a changed
    or removed file (its new record, or None, goes to ``fresh``) or a skill that did
    not load (rebuilt from its record: nothing to store)."""
    rel, mtime, size, start, offset, kind, end, name = row
    if st is None:
        fresh[rel] = None  # removed since
        return
    stored = cache_mod.Stored(snapshot.blob, start, end, rel in snapshot.gate)
    rec = [mtime, size, stored, offset, kind, None, name]
    parsed = scan.parsed
    with_code = snapshot.tree.with_code
    stamp = (st.st_mtime_ns, st.st_size)
    new = _load_one(scan, rel, md, stamp, rec, with_code, strict=strict, add_file=False)
    if scan.parsed != parsed:
        fresh[rel] = new


def _record_files(
    scan: RootScan,
    mds: list[str],
    rows: list[list[Any]],
    others: dict[int, os.stat_result | None],
) -> None:
    """Fill ``scan``'s file lists in tree order (fingerprints depend on it)."""
    if not others:  # the usual warm case: all three lists in C loops
        scan.file_paths = mds
        scan.file_mtimes = list(map(_SECOND, rows))
        scan.file_sizes = list(map(_THIRD, rows))
        return
    for index, (md, row) in enumerate(zip(mds, rows, strict=True)):
        if index not in others:
            scan.add_file(md, row[1], row[2])
            continue
        st = others[index]
        if st is not None:
            scan.add_file(md, st.st_mtime_ns, st.st_size)


# row fields (see cache.Record) and stat fields, as C getters for whole-column work
_SECOND, _THIRD = operator.itemgetter(1), operator.itemgetter(2)
_MTIME_NS, _SIZE = operator.attrgetter("st_mtime_ns"), operator.attrgetter("st_size")
_KIND_NAMES = frozenset(_KINDS)


def _load_all(
    scan: RootScan,
    tree: Tree,
    cached: dict[str, Record],
    *,
    strict: bool,
    feed: _parallel.ParseFeed | None = None,
) -> dict[str, Record]:
    """Load every SKILL.md of a freshly walked ``tree``: from its record when the
    file's (mtime, size) still match, else by parsing it. Returns the records to store.
    A file with no record is not ``stat``-ed first: the parse reports the stamp it
    read the file at.

    With a ``feed`` that forked children during the walk (see :mod:`._parallel`),
    this process parses what they did not take, then every file is loaded in tree
    order: a child's as the record it sent (like a cached file), so the skills,
    their order and the snapshot are the same either way."""
    records: dict[str, Record] = {}
    prefix = _prefix(tree)
    with_code = tree.with_code
    rels = tree.skill_mds
    if feed is None or feed.found_rels != rels:
        for rel in rels:
            md = _md_path(prefix, rel)
            rec = cached.get(rel)
            stamp = None
            if rec is not None:
                try:
                    st = os.stat(md)
                except OSError:
                    continue  # removed since the walk
                stamp = (st.st_mtime_ns, st.st_size)
            new = _load_one(scan, rel, md, stamp, rec, with_code, strict=strict)
            if new is not None:
                records[rel] = new
        return records
    source, root = scan.root.source, scan.root.path

    def parse(index: int) -> Discovered:
        rel = rels[index]
        md = _md_path(prefix, rel)
        return _parse(md, source=source, root=root, strict=strict, has_code=rel in with_code)

    own = feed.parse_rest(parse)
    from_children = feed.collect()
    for index, rel in enumerate(rels):
        md = _md_path(prefix, rel)
        got = from_children.get(index)
        if got is not None:
            parsed = scan.parsed
            new = _load_one(scan, rel, md, got[0], got[1], with_code, strict=strict)
            if scan.parsed == parsed:
                scan.parsed += 1  # parsed by the child
        else:
            new = _load_one(scan, rel, md, None, None, with_code, strict=strict, got=own.get(index))
        if new is not None:
            records[rel] = new
    return records


def _load_one(
    scan: RootScan,
    rel: str,
    md: str,
    stamp: tuple[int, int] | None,
    rec: Record | None,
    with_code: set[str],
    *,
    strict: bool,
    add_file: bool = True,
    got: Discovered | None = None,
) -> Record | None:
    """One SKILL.md into ``scan``: from ``rec`` when it still matches ``stamp`` (the
    file's (mtime, size), None when not taken yet), else from ``got`` (its parse,
    done already), else parsed now. Returns its record, None when the file is gone."""
    root, source = scan.root.path, scan.root.source
    has_code = rel in with_code
    loaded = None
    if rec is not None and stamp is not None and rec[0] == stamp[0] and rec[1] == stamp[1]:
        loaded = cache_mod.skill_from_record(rec, md, source=source, root=root, has_code=has_code)
    if loaded is not None:
        skill, diags, name = loaded
    else:
        if got is None:
            got = _parse(md, source=source, root=root, strict=strict, has_code=has_code)
        skill, rows, declared, read_at = got
        if stamp is None:
            # what the parse saw; a file it could not read is stat-ed now (an edit
            # racing this is caught by the snapshot's racy-timestamp rule)
            stamp = read_at or _stamp_of(md)
            if stamp is None:
                return None  # removed since the walk
        name = skill.name if skill else os.path.basename(os.path.dirname(md))
        rec = cache_mod.record_from_load(stamp, skill, rows, declared, name=name)
        scan.parsed += 1
        diags = [] if skill is not None else _diagnostics(rows, md)
    if add_file and stamp is not None:
        scan.add_file(md, stamp[0], stamp[1])
    if skill is not None:
        scan.skills.append(skill)
    else:
        skill_md = Path(md)
        scan.invalid.append(InvalidSkill(name, skill_md.parent, skill_md, source, root, diags))
    return rec


def _diagnostics(rows: list[DiagnosticRow], md: str) -> list[Diagnostic]:
    skill_md = Path(md)
    return [diagnostic_from_row(row, skill_md) for row in rows]


def _stamp_of(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _parse(md: str, *, source: SkillSource, root: Path, strict: bool, has_code: bool) -> Discovered:
    """Read one SKILL.md's frontmatter. Looked up through the module each time so a
    test can count parses by patching ``validate.load_for_discovery``; the module
    itself is imported on first use only (it brings the metadata model, which a warm
    discovery never needs)."""
    name = "skilldeck.skills.format.validate"
    module = sys.modules.get(name) or importlib.import_module(name)
    loaded: Discovered = module.load_for_discovery(
        md, strict=strict, source=source, root=root, has_code=has_code
    )
    return loaded
