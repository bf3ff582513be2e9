"""The discovery snapshot: one compact index file per root under ``settings.cache_dir``.

What a snapshot holds, and why it is enough to skip work safely:

* the mtime of every folder the walk visited — a folder's mtime changes whenever an
  entry is added, removed or renamed in it, so if none changed, the set of SKILL.md
  files (and of ``skill.py`` files beside them) is the same and the tree need not be
  listed again;
* the state of every symlink met (a dangling link that starts resolving changes no
  folder's mtime, so links are re-checked one by one);
* per SKILL.md: ``(mtime_ns, size)`` and the validated load result (metadata, body
  offset, declared kind, diagnostics, name). A file whose stat still matches is not
  read again: the skill is rebuilt from the stored, already-normalised fields, so
  the warm path parses no YAML and runs none of the frontmatter rules.

The index is :mod:`marshal` data (plain dicts, lists, strings and numbers) behind a
checksum (:mod:`._sealed`): it loads several times faster than the same data as
JSON, which matters because loading it is part of every warm discovery. The
metadata and diagnostics are not in the index at all: they go, as one marshal
chunk of plain data per skill, into a sidecar file
(``<name>.<token>.blob``) that the row points into, and which is only read when a
skill is asked for more than its name (see
:class:`~skilldeck.skills.discovery._blob.SnapshotBlob`). Loading a snapshot then decodes a
few small values per skill, and nearly all of a warm discovery is the ``stat``
calls that prove nothing changed. The sidecar is written before the index that
names it and never rewritten (each snapshot gets a new token), so an index and
the blob it names always belong together; older blobs are removed after a write.

Speed-fenced: the marshal columns, the sidecar blob and the ``gate``/``deps_only``
sets (which rows gating must decode) are justified by ``python -m bench discovery``
(figure ``warm``).

Timestamps written in the last :data:`RACY_NS` before the scan started are not
trusted (the "racy git" problem: a second write within the filesystem's timestamp
granularity leaves mtime unchanged), so such entries are re-checked next time.

The file records a format key built from the snapshot format, skilldeck's version,
strict mode and the size+mtime of the ``skills`` package's modules: any change there
drops the snapshot. A missing, unreadable or corrupt file is ignored and rebuilt.
Only plain data is stored (marshal of dicts/lists/strings/numbers, checked for
shape when read) — never pickle, so reading a snapshot runs no code — and writes
are atomic (not fsynced: see :func:`_replace`). Both files live in the user's own
cache folder; anyone who can write there can already change the user's skills.
"""

from __future__ import annotations

import contextlib
import functools
import marshal
import operator
import os
import sys
import time
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import skilldeck
from skilldeck.skills.discovery._blob import SnapshotBlob, encode_stored
from skilldeck.skills.discovery._sealed import seal, unseal
from skilldeck.skills.discovery.walk import Tree, link_state
from skilldeck.skills.model.diagnostics import diagnostic_from_row, diagnostic_to_row
from skilldeck.skills.model.skill import (
    GATING_FIELDS,
    Skill,
    SkillKind,
    SkillSource,
    sets_gating_field,
)

if TYPE_CHECKING:
    from skilldeck.skills.model.diagnostics import Diagnostic, DiagnosticRow

__all__ = [
    "RACY_NS",
    "Record",
    "RootSnapshot",
    "Stored",
    "gates",
    "load_snapshot",
    "record_from_load",
    "save_snapshot",
    "skill_from_record",
    "snapshot_path",
]

FORMAT = 5
#: Entries modified this recently before a scan are re-checked on the next one.
RACY_NS = 2_000_000_000
#: Blobs of older snapshots of a root are removed once they are this old.
STALE_BLOB_SECONDS = 60
#: One SKILL.md: ``[mtime_ns, size, metadata, body_offset, kind, diagnostics, name]``.
#: Fresh from a parse, metadata is a dict (None when the skill did not load) and
#: diagnostics a list of rows; read back from a snapshot, metadata is a
#: :class:`Stored` reference to the blob chunk holding both, and diagnostics None. ``kind`` is the
#: declared kind (``prompt`` or ``script``): whether a ``skill.py`` makes it
#: ``code`` comes from the walk.
Record = list[Any]
#: One row: ``[rel, mtime_ns, size, start, body_offset, kind, end, name]`` with bytes
#: ``start:end`` of the blob the marshal of ``[metadata-or-None, diagnostic rows]``.
#: The file stores the rows as this many columns (see :class:`RootSnapshot`).
_COLUMNS = 8

_KINDS = {str(k): k for k in SkillKind}
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
        """Rows as records (TypeError/ValueError on a malformed row)."""
        blob, gate, out = self.blob, self.gate, {}
        for rel, mtime, size, start, offset, kind, end, name in self.rows:
            if type(start) is not int or type(end) is not int:
                continue
            stored = Stored(blob, start, end, rel in gate)
            out[rel] = [mtime, size, stored, offset, kind, None, name]
        return out

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


def _format_key(strict: bool) -> str:
    """What a snapshot's validity depends on besides the files themselves."""
    # the Python version too: the blob is marshal data
    python = "{}.{}".format(*sys.version_info[:2])
    return f"{FORMAT}|{skilldeck.__version__}|{python}|{int(strict)}|{_code_stamp()}"


#: the subpackages whose code shapes a snapshot's records
_STAMPED_PACKAGES = ("format", "format/reference", "model", "discovery")


@functools.cache
def _code_stamp() -> str:
    """Size and mtime of every module that decides what a snapshot holds — the
    parser, validator and schema (``format/``, ``model/``) and discovery itself — so
    an edited one (in a development checkout) drops every snapshot. Computed once per
    process, which is right: a running process keeps the code it imported."""
    parts = []
    skills_dir = Path(__file__).resolve().parents[1]
    for sub in _STAMPED_PACKAGES:
        with contextlib.suppress(OSError), os.scandir(skills_dir / sub) as it:
            for entry in it:
                if entry.name.endswith(".py"):
                    st = entry.stat()
                    parts.append(f"{sub}/{entry.name}:{st.st_mtime_ns}:{st.st_size}")
    return _digest("/".join(sorted(parts)))


def _digest(text: str) -> str:
    """A short, stable name for ``text`` (not security-relevant: a collision only
    makes two roots share, and keep rebuilding, one snapshot file)."""
    data = text.encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data) & 0xFFFF:04x}"


def snapshot_path(cache_dir: Path, root: Path) -> Path:
    return cache_dir / "discovery" / f"{_digest(os.path.realpath(root))}.snapshot"


def _blob_path(index_path: Path, token: str) -> Path:
    return index_path.with_name(f"{index_path.stem}.{token}.blob")


def load_snapshot(cache_dir: Path, root: Path, *, strict: bool) -> RootSnapshot | None:
    """The stored snapshot of ``root``, or None when absent, stale or corrupt.

    Only the outer shape is checked here; rows are checked as they are used (see
    ``discover``), and a malformed row makes the whole root be scanned afresh.
    """
    path = snapshot_path(cache_dir, root)
    try:
        with open(path, "rb") as fh:
            data = marshal.loads(unseal(fh.read()))
    except (OSError, ValueError, EOFError, TypeError):
        return None
    try:
        if type(data) is not dict or data["v"] != _format_key(strict):
            return None
        if data["real"] != os.path.realpath(root):
            return None
        cols, dir_rels, dir_mtimes = data["cols"], data["dirs"], data["dir_mtimes"]
        links, token = data["links"], data["blob"]
        if not (
            type(cols) is list
            and len(cols) == _COLUMNS
            and all(type(col) is list and len(col) == len(cols[0]) for col in cols)
            and type(dir_rels) is list
            and type(dir_mtimes) is list
            and len(dir_rels) == len(dir_mtimes)
            and type(links) is dict
            and type(token) is str
            and token.isalnum()
        ):
            return None
        blob_path = _blob_path(path, token)
        if os.stat(blob_path).st_size != data["blob_size"]:
            return None  # gone or not the one written with this index: rebuild both
        tree = Tree(
            str(root),
            skill_mds=[],  # the rows' paths: filled by RootSnapshot.full_tree() when needed
            dirs={},  # likewise
            links=links,
            diagnostics=[diagnostic_from_row(d, None) for d in data["diags"]],
            with_code=set(data["code"]),
        )
        gate, deps_only = set(data["gate"]), set(data["deps_only"])
    except (KeyError, TypeError, IndexError, ValueError, AttributeError, OSError):
        return None
    blob = SnapshotBlob(str(blob_path))
    return RootSnapshot(tree, cols, blob, gate, dir_rels, dir_mtimes, deps_only)


def save_snapshot(
    cache_dir: Path,
    root: Path,
    tree: Tree,
    records: dict[str, Record],
    *,
    started: int,
    strict: bool,
) -> None:
    """Write the snapshot atomically; a cache that cannot be written is not an error."""
    racy_after = started - RACY_NS
    dir_mtimes = [(-1 if m >= racy_after else m) for m in tree.dirs.values()]
    rows: list[list[Any]] = []
    chunks: list[bytes] = []
    gate: list[str] = []
    deps_only: list[str] = []
    pos = 0
    for rel in tree.skill_mds:
        rec = records.get(rel)
        if rec is None:
            continue
        row, chunk, gated = _row(rel, rec, racy_after, pos)
        rows.append(row)
        chunks.append(chunk)
        pos += len(chunk)
        if gated:
            gate.append(rel)
            if _only_dependencies(rec[2], chunk):
                deps_only.append(rel)
    path = snapshot_path(cache_dir, root)
    token = os.urandom(6).hex()
    sealed_blob = seal(b"".join(chunks))
    head = {
        "v": _format_key(strict),
        "real": os.path.realpath(root),
        "dirs": list(tree.dirs),
        "dir_mtimes": dir_mtimes,
        "links": tree.links,
        "code": sorted(tree.with_code),
        "gate": gate,
        "deps_only": deps_only,
        "diags": [diagnostic_to_row(d, None) for d in tree.diagnostics],
        "blob": token,
        "blob_size": len(sealed_blob),
        "cols": [list(col) for col in zip(*rows, strict=True)] if rows else _empty_columns(),
    }
    # marshal keeps undecodable file names (lone surrogates) round-tripping exactly
    data = seal(marshal.dumps(head))
    with contextlib.suppress(OSError):  # a read-only or full disk only costs speed
        blob = _blob_path(path, token)
        _replace(blob, sealed_blob)  # first: an index never names a missing blob
        _replace(path, data)
        _remove_stale_blobs(path, keep=blob.name)


def _empty_columns() -> list[list[Any]]:
    return [[] for _ in range(_COLUMNS)]


def _remove_stale_blobs(index_path: Path, *, keep: str) -> None:
    """Blobs of earlier snapshots of this root. Recent ones are kept: they may be
    another process's, about to be named by the index it writes next (an index
    whose blob is missing is simply rebuilt, see :func:`load_snapshot`). A process
    still holding a removed blob's snapshot only loses speed: its skills read
    their SKILL.md when asked for more than a name."""
    prefix = f"{index_path.stem}."
    old = time.time() - STALE_BLOB_SECONDS
    with os.scandir(index_path.parent) as it:
        for entry in it:
            name = entry.name
            if name.startswith(prefix) and name.endswith(".blob") and name != keep:
                with contextlib.suppress(OSError):
                    if entry.stat().st_mtime < old:
                        os.unlink(entry.path)


def _row(rel: str, rec: Record, racy_after: int, pos: int) -> tuple[list[Any], bytes, bool]:
    """One SKILL.md's row, its blob chunk and whether gating must look at it. A
    record that is not plain data (an unexpected type in an unknown field, say)
    keeps its place in the tree with an impossible mtime, so that file is simply
    parsed again."""
    mtime, size, meta, offset, kind, diags, name = rec
    try:
        if isinstance(meta, Stored):
            chunk, gated = meta.chunk, meta.gate
        else:
            chunk = encode_stored(meta, diags or [])
            gated = meta is not None and sets_gating_field(meta)
    except (TypeError, ValueError, OSError):  # not plain data: parse it every time
        mtime, chunk, gated = -1, encode_stored(None, []), False
    if mtime >= racy_after:
        mtime = -1
    return [rel, mtime, size, pos, offset, kind, pos + len(chunk), name], chunk, gated


def _only_dependencies(meta: dict[str, Any] | Stored | None, chunk: bytes) -> bool:
    """Whether ``dependencies`` is the only gating field a gated record sets (decoded
    from its ``chunk`` when the record is stored): written once with the snapshot, so
    a warm discovery does not decode the ~180 prompt skills of the corpus that list
    requirements only for their reader (``python -m bench discovery``, ``warm``)."""
    if isinstance(meta, Stored):
        try:
            loaded = marshal.loads(chunk)
        except (EOFError, ValueError, TypeError):
            return False
        meta = loaded[0] if type(loaded) is list and len(loaded) == 2 else None
    if type(meta) is not dict:
        return False
    others = (*GATING_FIELDS, "credentials")
    return bool(meta.get("dependencies")) and not any(meta.get(f) for f in others)


def gates(rel: str, kind: SkillKind, snapshot: RootSnapshot) -> bool:
    """Whether the skill of row ``rel`` (of final ``kind``) is one gating must look
    at: it sets a gating field, and not merely ``dependencies`` on a prompt skill
    (which only script and code skills act on; see :mod:`..execution.gating`)."""
    if rel not in snapshot.gate:
        return False
    return kind is not SkillKind.PROMPT or rel not in snapshot.deps_only


def _replace(path: Path, data: bytes) -> None:
    """Atomic (never half a file) but not durable: no fsync. After a crash a
    snapshot is at worst old or missing, which costs one re-parse — while an fsync
    costs more than a whole warm discovery."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# ---- records <-> skills ----------------------------------------------------------


def record_from_load(
    stamp: tuple[int, int],
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
) -> tuple[Skill | None, list[Diagnostic], str] | None:
    """Rebuild (skill-or-None, diagnostics, name) from a record without parsing;
    None when the record is unusable (then the file is simply parsed again).

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
            skill_md = Path(md)
            return None, [diagnostic_from_row(d, skill_md) for d in rows], name
        skill = Skill._from_store(
            name,
            md,
            stored.blob,
            stored.start,
            stored.end,
            gate=stored.gate,
            source=source,
            root=root,
            body_offset=offset,
            kind=SkillKind.CODE if has_code else _KINDS[kind],
        )
    except (ValueError, TypeError, KeyError):
        return None
    return skill, [], name
