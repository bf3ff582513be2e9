"""Discovery: which folders are skills, in which roots (:mod:`.roots` says which
roots, in which precedence).

What counts as a skill and how a root is walked (nested skills, hidden folders,
symlink loops and dangling links) is :mod:`.walk`'s job; broken skills and scan
problems come back as diagnostics, never as exceptions (:mod:`.results`).

Only frontmatter is read here. The per-root snapshot (:mod:`.cache` reads and
writes it) makes a second discovery of an unchanged tree cost a few thousand
``stat`` calls and no YAML (:mod:`.warm`); a cold scan of a large tree may parse
on several CPUs (:mod:`._parallel`).
"""

from __future__ import annotations

import contextlib
import gc
import os
import stat as stat_mod
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from skilldeck.skills.discovery import cache as cache_mod
from skilldeck.skills.discovery.records import load_one, md_path, parse_file
from skilldeck.skills.discovery.results import DiscoveryResult, RootScan
from skilldeck.skills.discovery.roots import Root, resolve_roots
from skilldeck.skills.discovery.walk import ROOT_NOT_FOUND, Tree, diagnostic, walk_tree
from skilldeck.skills.discovery.warm import load_unchanged_tree
from skilldeck.skills.model.skill import Skill

if TYPE_CHECKING:
    from skilldeck.config import Settings
    from skilldeck.skills.discovery import _parallel
    from skilldeck.skills.discovery.snapshot import Record, RootSnapshot
    from skilldeck.skills.format import Discovered

__all__ = ["discover", "gc_paused", "scan_root"]


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
        warm = _scan_warm(root, snapshot, cache_dir, started=started, strict=strict)
        if warm is not None:
            return warm
        snapshot = None  # a damaged row: scan afresh, trusting nothing stored
    scan = RootScan(root)
    cached = _records_of(snapshot)
    with _feed(root, cached, strict=strict, workers=workers) as feed:
        tree = walk_tree(root.path, found=feed.found if feed is not None else None)
        scan.diagnostics.extend(tree.diagnostics)
        records = _load_all(scan, tree, cached, strict=strict, feed=feed)
    if cache_dir is not None:
        cache_mod.save_snapshot(cache_dir, root.path, tree, records, started=started, strict=strict)
    return scan


def _scan_warm(
    root: Root, snapshot: RootSnapshot, cache_dir: Path | None, *, started: int, strict: bool
) -> RootScan | None:
    """The scan of a root whose tree is the snapshot's (see :mod:`.warm`), the
    snapshot written again when a file had to be read; None for a damaged row."""
    scan = RootScan(root, tree_from_cache=True)
    try:
        records = load_unchanged_tree(scan, snapshot, strict=strict)
    except (ValueError, TypeError, IndexError, KeyError):
        return None
    scan.diagnostics.extend(snapshot.tree.diagnostics)
    if cache_dir is not None and records is not None:
        tree = snapshot.full_tree()
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
        parse=parse_file,
    )


def _records_of(snapshot: RootSnapshot | None) -> dict[str, Record]:
    """The snapshot's records, reusable for files whose (mtime, size) still match."""
    if snapshot is None:
        return {}
    try:
        return snapshot.records
    except (TypeError, ValueError, IndexError, KeyError):  # malformed rows: reuse none
        return {}


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
    read the file at. With a ``feed`` that forked children during the walk, see
    :func:`_load_all_parallel`."""
    if feed is not None and feed.found_rels == tree.skill_mds:
        return _load_all_parallel(scan, tree, strict=strict, feed=feed)
    records: dict[str, Record] = {}
    prefix = tree.root.rstrip(os.sep) + os.sep
    with_code = tree.with_code
    for rel in tree.skill_mds:
        md = md_path(prefix, rel)
        rec = cached.get(rel)
        stamp = None
        if rec is not None:
            try:
                st = os.stat(md)
            except OSError:
                continue  # removed since the walk
            stamp = (st.st_mtime_ns, st.st_size)
        new = load_one(scan, rel, md, stamp, rec, with_code, strict=strict)
        if new is not None:
            records[rel] = new
    return records


def _load_all_parallel(
    scan: RootScan, tree: Tree, *, strict: bool, feed: _parallel.ParseFeed
) -> dict[str, Record]:
    """With a ``feed`` that forked children during the walk (see :mod:`._parallel`),
    this process parses what they did not take, then every file is loaded in tree
    order: a child's as the record it sent (like a cached file), so the skills,
    their order and the snapshot are the same either way."""
    records: dict[str, Record] = {}
    prefix = tree.root.rstrip(os.sep) + os.sep
    with_code = tree.with_code
    rels = tree.skill_mds
    source, root = scan.root.source, scan.root.path

    def parse(index: int) -> Discovered:
        rel = rels[index]
        md = md_path(prefix, rel)
        return parse_file(md, source=source, root=root, strict=strict, has_code=rel in with_code)

    own = feed.parse_rest(parse)
    from_children = feed.collect()
    for index, rel in enumerate(rels):
        md = md_path(prefix, rel)
        got = from_children.get(index)
        if got is not None:
            parsed = scan.parsed
            new = load_one(scan, rel, md, got[0], got[1], with_code, strict=strict)
            if scan.parsed == parsed:
                scan.parsed += 1  # parsed by the child
        else:
            new = load_one(scan, rel, md, None, None, with_code, strict=strict, got=own.get(index))
        if new is not None:
            records[rel] = new
    return records
