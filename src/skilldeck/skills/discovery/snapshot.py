"""A root's snapshot as loaded in memory: its rows (as columns), the records they
stand for, and :class:`Stored` references into the blob (reading and writing the
files is :mod:`.cache`'s job).

Speed-fenced, with :mod:`.cache` and :mod:`.warm`: the columns, the blob references
and the ``gate``/``deps_only`` sets (which rows gating must decode) are justified
by ``python -m bench discovery`` (figure ``warm``).
"""

from __future__ import annotations

import operator
import os
from typing import Any

from skilldeck.skills.discovery._blob import SnapshotBlob
from skilldeck.skills.discovery.walk import Tree, link_state
from skilldeck.skills.model.skill import SkillKind

__all__ = ["COLUMNS", "KINDS", "Record", "RootSnapshot", "Stored", "gates"]

#: One SKILL.md: ``[mtime_ns, size, metadata, body_offset, kind, diagnostics, name]``.
#: Fresh from a parse, metadata is a dict (None when the skill did not load) and
#: diagnostics a list of rows; read back from a snapshot, metadata is a
#: :class:`Stored` reference to the blob chunk holding both, and diagnostics None.
#: ``kind`` is the declared kind (``prompt`` or ``script``): whether a ``skill.py``
#: makes it ``code`` comes from the walk.
Record = list[Any]
#: One row: ``[rel, mtime_ns, size, start, body_offset, kind, end, name]`` with bytes
#: ``start:end`` of the blob the marshal of ``[metadata-or-None, diagnostic rows]``.
#: The file stores the rows as this many columns (see :class:`RootSnapshot`).
COLUMNS = 8
#: a kind's stored name to the kind
KINDS = {str(k): k for k in SkillKind}
#: a C getter: no Python frame per folder in :meth:`RootSnapshot.tree_unchanged`
_mtime_ns = operator.attrgetter("st_mtime_ns")


class Stored:
    """A record's metadata and diagnostics still encoded, as a snapshot holds them."""

    __slots__ = ("blob", "end", "gate", "start")

    def __init__(self, blob: SnapshotBlob, start: int, end: int, gate: bool) -> None:
        self.blob, self.start, self.end, self.gate = blob, start, end, gate

    @property
    def chunk(self) -> bytes:
        return self.blob.chunk(self.start, self.end)


class RootSnapshot:
    """A root's tree, its SKILL.md rows (in tree order) and the blob they point into.

    The file stores the rows as eight columns (``cols``, in :data:`Record` row order:
    rel, mtime_ns, size, start, body_offset, kind, end, name) and the folders as two
    (``dir_rels``, ``dir_mtimes``): a warm discovery compares and rebuilds whole
    columns in C loops, and loading them makes eight lists instead of thousands.
    ``rows`` gives the row view the slower paths (a changed file) work with.
    """

    __slots__ = ("_rows", "blob", "cols", "deps_only", "dir_mtimes", "dir_rels", "gate", "tree")

    def __init__(
        self,
        tree: Tree,
        cols: list[list[Any]],
        blob: SnapshotBlob,
        gate: set[str],
        dir_rels: list[str],
        dir_mtimes: list[int],
        deps_only: set[str] | None = None,
    ) -> None:
        self.tree = tree
        self.cols = cols
        self.blob = blob
        self.gate = gate
        #: the rels of ``gate`` whose only gating field is ``dependencies``: gating
        #: never looks at a prompt skill of these (see :func:`gates`)
        self.deps_only: set[str] = set() if deps_only is None else deps_only
        self.dir_rels = dir_rels
        self.dir_mtimes = dir_mtimes
        self._rows: list[list[Any]] | None = None

    @property
    def rows(self) -> list[list[Any]]:
        """One ``[rel, mtime, size, start, offset, kind, end, name]`` list per SKILL.md."""
        rows = self._rows
        if rows is None:
            rows = self._rows = [list(row) for row in zip(*self.cols, strict=True)]
        return rows

    def full_tree(self) -> Tree:
        """The tree with its folders and SKILL.md list, which the warm path itself
        never needs (only a snapshot being written again does)."""
        tree = self.tree
        if not tree.dirs:
            tree.dirs = dict(zip(self.dir_rels, self.dir_mtimes, strict=True))
        if not tree.skill_mds:
            tree.skill_mds = list(self.cols[0])
        return tree

    @property
    def records(self) -> dict[str, Record]:
        """Rows as records (TypeError/ValueError on a malformed row); a row whose blob
        bounds are not numbers has none."""
        record = self.record
        return {
            row[0]: record(row) for row in self.rows if type(row[3]) is int and type(row[6]) is int
        }

    def record(self, row: list[Any]) -> Record:
        """The record one row stands for, its metadata and diagnostics left in the blob
        (ValueError on a row that is not eight fields)."""
        rel, mtime, size, start, offset, kind, end, name = row
        stored = Stored(self.blob, start, end, rel in self.gate)
        return [mtime, size, stored, offset, kind, None, name]

    def tree_unchanged(self) -> bool:
        """True when no visited folder and no symlink changed since the snapshot.

        One ``stat`` per folder, in C loops (``map``) and one list comparison: on a
        warm discovery this is about half of all the work.
        """
        prefix = self.tree.root.rstrip(os.sep) + os.sep
        try:
            now = list(map(_mtime_ns, map(os.stat, map(prefix.__add__, self.dir_rels))))
        except (OSError, TypeError, ValueError):
            return False
        if now != self.dir_mtimes:
            return False
        return all(link_state(prefix + rel) == st for rel, st in self.tree.links.items())


def gates(rel: str, kind: SkillKind, snapshot: RootSnapshot) -> bool:
    """Whether the skill of row ``rel`` (of final ``kind``) is one gating must look
    at: it sets a gating field, and not merely ``dependencies`` on a prompt skill
    (which only script and code skills act on; see :mod:`..execution.gating`)."""
    if rel not in snapshot.gate:
        return False
    return kind is not SkillKind.PROMPT or rel not in snapshot.deps_only
