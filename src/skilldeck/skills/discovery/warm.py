"""The warm path: a root whose tree is the snapshot's, its skills rebuilt from the
snapshot's rows without reading or decoding anything that did not change.

The snapshot's rows are the tree's SKILL.md files, in order. One ``stat`` per file
(in a C loop); a row whose (mtime, size) still match becomes a skill without
reading its file. In the usual case (nothing changed) every skill is built from
whole columns in one call (:func:`_rebuild_unchanged`); otherwise the rows go one
by one, unchanged rows built in runs between the others (:func:`_build_run`), so
the tree's order is kept.

Speed-fenced (``python -m bench discovery``, figures ``warm`` and
``cli_list_json_warm``; ``python -m bench compare discovery`` against the old code):
the column loops, the bulk constructor and the gating marks set only on the
skills gating can act on. Positional snapshot rows stay in this module,
:mod:`.snapshot`, :mod:`.cache` and :mod:`.records`.
"""

from __future__ import annotations

import itertools
import operator
import os
from typing import Any

from skilldeck.skills.discovery.records import load_one, md_path, skill_from_record
from skilldeck.skills.discovery.results import InvalidSkill, RootScan
from skilldeck.skills.discovery.snapshot import KINDS, Record, RootSnapshot, gates
from skilldeck.skills.model.skill import Skill, SkillKind

__all__ = ["load_unchanged_tree"]

#: one unchanged row as the bulk constructor takes it: (md, name, start, end,
#: offset, kind)
_Built = tuple[str, str, int, int, int, SkillKind]

# row fields (see snapshot.Record) and stat fields, as C getters for whole-column work
_SECOND, _THIRD = operator.itemgetter(1), operator.itemgetter(2)
_MTIME_NS, _SIZE = operator.attrgetter("st_mtime_ns"), operator.attrgetter("st_size")
_KIND_NAMES = frozenset(KINDS)


def load_unchanged_tree(
    scan: RootScan, snapshot: RootSnapshot, *, strict: bool
) -> dict[str, Record] | None:
    """Load every SKILL.md of a tree that is the snapshot's into ``scan``. Returns
    the records to store when any file had to be read again, None when the snapshot
    stays as it is. A malformed row raises (ValueError/TypeError/KeyError/IndexError)
    and the caller scans the root afresh."""
    tree, rels = snapshot.tree, snapshot.cols[0]
    prefix = tree.root.rstrip(os.sep) + os.sep
    mds = list(map(prefix.__add__, rels))
    if os.sep != "/":
        mds = [md_path(prefix, rel) for rel in rels]
    try:
        stats: list[os.stat_result | None] = list(map(os.stat, mds))
    except OSError:  # one went missing since: look at them one by one
        stats = [_stat_or_none(md) for md in mds]
    else:
        if _rebuild_unchanged(scan, snapshot, mds, stats):
            return None
    # some file changed, or a skill did not load (13 in the corpus): row by row
    fresh = _row_by_row(scan, snapshot, mds, stats, strict=strict)
    if not fresh:
        return None
    records = snapshot.records
    for rel, new in fresh.items():
        if new is None:
            records.pop(rel, None)
        else:
            records[rel] = new
    return records


def _row_by_row(
    scan: RootScan,
    snapshot: RootSnapshot,
    mds: list[str],
    stats: list[os.stat_result | None],
    *,
    strict: bool,
) -> dict[str, Record | None]:
    """Unchanged rows built in runs between the others, keeping the tree's order.
    Returns the new record (None: removed) of every file that had to be read."""
    rows = snapshot.rows
    with_code = snapshot.tree.with_code
    others: dict[int, os.stat_result | None] = {}  # rows not rebuilt from the snapshot
    fresh: dict[str, Record | None] = {}
    run: list[_Built] = []
    marks: list[int] = []  # the places in ``run`` of skills gating must look at
    gate = snapshot.gate
    for index, (md, st, row) in enumerate(zip(mds, stats, rows, strict=True)):
        rel, mtime, size, start, offset, kind, end, name = row
        if st is not None and st.st_mtime_ns == mtime and st.st_size == size and kind:
            if type(offset) is not int or type(name) is not str:
                raise ValueError(f"malformed snapshot row for {rel}")
            skill_kind = SkillKind.CODE if rel in with_code else KINDS[kind]
            if rel in gate and gates(rel, skill_kind, snapshot):
                marks.append(len(run))
            run.append((md, name, start, end, offset, skill_kind))
        else:
            _build_run(scan, snapshot, run, marks)
            others[index] = st
            _load_other(scan, snapshot, row, md, st, fresh, strict=strict)
    _build_run(scan, snapshot, run, marks)
    _record_files(scan, mds, rows, others)
    return fresh


def _rebuild_unchanged(
    scan: RootScan, snapshot: RootSnapshot, mds: list[str], stats: list[os.stat_result | None]
) -> bool:
    """The usual warm case, all at once: when every SKILL.md still has its stored
    (mtime, size) and every row is well-formed, build the skills in one tight loop
    (the few that did not load go to ``scan.invalid`` from their stored diagnostics)
    and return True; otherwise change nothing and return False (the row-by-row loop
    takes over). The comparisons and type checks are whole-column operations that
    run in C."""
    cols = snapshot.cols
    mtimes, sizes = cols[1], cols[2]
    if list(map(_MTIME_NS, stats)) != mtimes or list(map(_SIZE, stats)) != sizes:
        return False
    split = _split_loaded(scan, snapshot, mds)
    if split is None:
        return False
    rels, columns, invalid = split
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
            if rel in gate and gates(rel, skill.kind, snapshot):
                skill._gate = True
    scan.invalid.extend(invalid)
    scan.file_paths, scan.file_mtimes, scan.file_sizes = mds, mtimes, sizes
    return True


def _split_loaded(
    scan: RootScan, snapshot: RootSnapshot, mds: list[str]
) -> tuple[list[str], Any, list[InvalidSkill]] | None:
    """The rels and bulk-constructor columns of the rows that loaded, and the
    :class:`InvalidSkill` of those that did not; None when a column is not of the
    shape the bulk path takes."""
    rels, _, _, starts, offsets, kind_names, ends, names = snapshot.cols
    if not (_all_of(str, names) and _all_of(int, starts) and _all_of(int, ends)):
        return None
    invalid: list[InvalidSkill] = []
    if not (_all_of(int, offsets) and set(kind_names) <= _KIND_NAMES):
        # skills that did not load (kind None; 13 in the corpus), taken out of the columns
        found = _unchanged_invalid(scan, snapshot, mds)
        if found is None:
            return None
        invalid = found
        loaded = [kind is not None for kind in kind_names]
        rels, starts, offsets, kind_names, ends, names = (
            list(itertools.compress(col, loaded))
            for col in (rels, starts, offsets, kind_names, ends, names)
        )
        mds = list(itertools.compress(mds, loaded))
        if not _all_of(int, offsets):
            return None
    kinds = list(map(KINDS.__getitem__, kind_names))
    return rels, zip(mds, names, starts, ends, offsets, kinds, strict=True), invalid


def _unchanged_invalid(
    scan: RootScan, snapshot: RootSnapshot, mds: list[str]
) -> list[InvalidSkill] | None:
    """The unchanged rows of skills that did not load, rebuilt from their stored
    diagnostics (as :func:`_load_other` would); None when a row is not of that shape
    (kind neither a known kind nor None) or its record does not decode."""
    cols = snapshot.cols
    source, root = scan.root.source, scan.root.path
    invalid: list[InvalidSkill] = []
    for index, kind in enumerate(cols[5]):
        if kind is not None:
            if kind not in _KIND_NAMES:
                return None
            continue
        rec = snapshot.record([col[index] for col in cols])
        loaded = skill_from_record(rec, mds[index], source=source, root=root, has_code=False)
        if not isinstance(loaded, InvalidSkill):
            return None
        invalid.append(loaded)
    return invalid


def _build_run(scan: RootScan, snapshot: RootSnapshot, run: list[_Built], marks: list[int]) -> None:
    """The skills of consecutive unchanged rows ``(md, name, start, end, offset,
    kind)`` in one :meth:`Skill._many_from_store` call (a call per skill is a tenth
    of a warm discovery), those at ``marks`` marked for gating; empties both."""
    if not run:
        return
    root = scan.root
    built = Skill._many_from_store(snapshot.blob, run, source=root.source, root=root.path)
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
    """A row the fast branch of :func:`_row_by_row` did not take: a changed or
    removed file (its new record, or None, goes to ``fresh``) or a skill that did
    not load (rebuilt from its record: nothing to store)."""
    rel = row[0]
    if st is None:
        fresh[rel] = None  # removed since
        return
    rec = snapshot.record(row)
    parsed = scan.parsed
    with_code = snapshot.tree.with_code
    stamp = (st.st_mtime_ns, st.st_size)
    new = load_one(scan, rel, md, stamp, rec, with_code, strict=strict, add_file=False)
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
