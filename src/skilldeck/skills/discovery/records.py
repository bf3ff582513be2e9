"""One SKILL.md into a scan: rebuilt from its snapshot record when the file did not
change, else parsed afresh (and remembered as a new record).

Either way what comes out is one of the two shapes discovery hands out, a
:class:`~skilldeck.skills.model.skill.Skill` or an
:class:`~.results.InvalidSkill`; the :data:`~.snapshot.Record` lists stay between
this module, the snapshot and the parallel scan.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from skilldeck.skills.discovery.results import InvalidSkill, RootScan, invalid_skill
from skilldeck.skills.discovery.snapshot import KINDS, Record, Stored
from skilldeck.skills.model.skill import Skill, SkillKind, SkillSource

if TYPE_CHECKING:
    from skilldeck.skills.discovery.roots import Root
    from skilldeck.skills.format import Discovered
    from skilldeck.skills.model.diagnostics import DiagnosticRow

__all__ = ["load_one", "md_path", "parse_file", "record_from_load", "skill_from_record"]

#: a SKILL.md's ``(mtime_ns, size)``
Stamp = tuple[int, int]


def md_path(prefix: str, rel: str) -> str:
    """The SKILL.md path as ``Path`` would print it (``rel`` uses ``/``; ``prefix``
    is the root followed by one separator)."""
    return prefix + (rel if os.sep == "/" else rel.replace("/", os.sep))


def record_from_load(
    stamp: Stamp,
    skill: Skill | None,
    rows: list[DiagnosticRow],
    declared: str | None,
    *,
    name: str,
) -> Record:
    """What to remember about one SKILL.md after discovery read it at ``stamp`` (its
    ``(mtime_ns, size)``): ``rows`` are its diagnostics and ``declared`` its declared
    kind (whether a ``skill.py`` makes it a code skill is the walk's to say)."""
    mtime, size = stamp
    if skill is None:
        return [mtime, size, None, 0, None, rows, name]
    return [mtime, size, skill.field_values(), skill.body_offset, declared, rows, name]


def skill_from_record(
    rec: Record, md: str, *, source: SkillSource, root: Path, has_code: bool
) -> Skill | InvalidSkill | None:
    """The skill (or, for a SKILL.md that did not load, the :class:`InvalidSkill`)
    a record stands for, without parsing; None when the record is unusable (then the
    file is simply parsed again).

    Diagnostics are only decoded here for a skill that did not load; a loaded one
    decodes them (and its metadata) when asked.
    """
    try:
        _mtime, _size, stored, offset, kind, _diags, name = rec
        if type(name) is not str or type(offset) is not int or not isinstance(stored, Stored):
            return None
        if kind is None:  # a skill that did not load: its diagnostics are all there is
            meta, rows = stored.blob.decode(stored.start, stored.end)
            if meta is not None:
                return None
            return invalid_skill(name, md, rows, source=source, root=root)
        return Skill._from_store(
            name,
            md,
            stored.blob,
            stored.start,
            stored.end,
            gate=stored.gate,
            source=source,
            root=root,
            body_offset=offset,
            kind=SkillKind.CODE if has_code else KINDS[kind],
        )
    except (ValueError, TypeError, KeyError):
        return None


def load_one(
    scan: RootScan,
    rel: str,
    md: str,
    stamp: Stamp | None,
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
    root = scan.root
    has_code = rel in with_code
    loaded: Skill | InvalidSkill | None = None
    if rec is not None and stamp is not None and rec[0] == stamp[0] and rec[1] == stamp[1]:
        loaded = skill_from_record(rec, md, source=root.source, root=root.path, has_code=has_code)
    if loaded is None:
        if got is None:
            got = parse_file(
                md, source=root.source, root=root.path, strict=strict, has_code=has_code
            )
        fresh = _from_parse(root, md, got, stamp)
        if fresh is None:
            return None  # removed since the walk
        loaded, rec, stamp = fresh
        scan.parsed += 1
    if add_file and stamp is not None:
        scan.add_file(md, stamp[0], stamp[1])
    scan.add(loaded)
    return rec


def _from_parse(
    root: Root, md: str, got: Discovered, stamp: Stamp | None
) -> tuple[Skill | InvalidSkill, Record, Stamp] | None:
    """A parse's outcome, its record and the stamp it stands for (``stamp``, else
    what the parse saw); None when the file is gone."""
    skill, rows, declared, read_at = got
    if stamp is None:
        # what the parse saw; a file it could not read is stat-ed now (an edit
        # racing this is caught by the snapshot's racy-timestamp rule)
        stamp = read_at or _stamp_of(md)
        if stamp is None:
            return None
    name = skill.name if skill else os.path.basename(os.path.dirname(md))
    rec = record_from_load(stamp, skill, rows, declared, name=name)
    if skill is not None:
        return skill, rec, stamp
    return invalid_skill(name, md, rows, source=root.source, root=root.path), rec, stamp


def _stamp_of(path: str) -> Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def parse_file(
    md: str, *, source: SkillSource, root: Path, strict: bool, has_code: bool
) -> Discovered:
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
