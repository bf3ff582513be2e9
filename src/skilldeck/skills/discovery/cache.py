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
import os
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import skilldeck
from skilldeck._atomic import atomic_write_bytes
from skilldeck.skills.discovery._blob import SnapshotBlob, encode_stored
from skilldeck.skills.discovery._sealed import seal, unseal
from skilldeck.skills.discovery.snapshot import COLUMNS, Record, RootSnapshot, Stored
from skilldeck.skills.discovery.walk import Tree
from skilldeck.skills.model.diagnostics import diagnostic_from_row, diagnostic_to_row
from skilldeck.skills.model.skill import GATING_FIELDS, sets_gating_field

__all__ = [
    "FORMAT",
    "RACY_NS",
    "STALE_BLOB_SECONDS",
    "load_snapshot",
    "save_snapshot",
    "snapshot_path",
]

FORMAT = 5
#: Entries modified this recently before a scan are re-checked on the next one.
RACY_NS = 2_000_000_000
#: Blobs of older snapshots of a root are removed once they are this old.
STALE_BLOB_SECONDS = 60


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
    return _index_path(cache_dir, os.path.realpath(root))


def _index_path(cache_dir: Path, real: str) -> Path:
    """The index file of the root whose real path is ``real`` (resolved once by the
    caller, which also stores or compares it)."""
    return cache_dir / "discovery" / f"{_digest(real)}.snapshot"


def _blob_path(index_path: Path, token: str) -> Path:
    return index_path.with_name(f"{index_path.stem}.{token}.blob")


def load_snapshot(cache_dir: Path, root: Path, *, strict: bool) -> RootSnapshot | None:
    """The stored snapshot of ``root``, or None when absent, stale or corrupt.

    Only the outer shape is checked here; rows are checked as they are used (see
    :mod:`.warm`), and a malformed row makes the whole root be scanned afresh.
    """
    real = os.path.realpath(root)
    path = _index_path(cache_dir, real)
    try:
        with open(path, "rb") as fh:
            data = marshal.loads(unseal(fh.read()))
    except (OSError, ValueError, EOFError, TypeError):
        return None
    try:
        if type(data) is not dict or data["v"] != _format_key(strict):
            return None
        if data["real"] != real or not _well_shaped(data):
            return None
        blob_path = _blob_path(path, data["blob"])
        if os.stat(blob_path).st_size != data["blob_size"]:
            return None  # gone or not the one written with this index: rebuild both
        tree = Tree(
            str(root),
            skill_mds=[],  # the rows' paths: filled by RootSnapshot.full_tree() when needed
            dirs={},  # likewise
            links=data["links"],
            diagnostics=[diagnostic_from_row(d, None) for d in data["diags"]],
            with_code=set(data["code"]),
        )
        gate, deps_only = set(data["gate"]), set(data["deps_only"])
    except (KeyError, TypeError, IndexError, ValueError, AttributeError, OSError):
        return None
    blob = SnapshotBlob(str(blob_path))
    dir_rels, dir_mtimes = data["dirs"], data["dir_mtimes"]
    return RootSnapshot(tree, data["cols"], blob, gate, dir_rels, dir_mtimes, deps_only)


def _well_shaped(data: dict[str, Any]) -> bool:
    """Whether an index's columns, folders, links and blob token are of the shape
    :func:`save_snapshot` writes (KeyError for a missing one)."""
    cols, dir_rels, dir_mtimes = data["cols"], data["dirs"], data["dir_mtimes"]
    links, token = data["links"], data["blob"]
    return (
        type(cols) is list
        and len(cols) == COLUMNS
        and all(type(col) is list and len(col) == len(cols[0]) for col in cols)
        and type(dir_rels) is list
        and type(dir_mtimes) is list
        and len(dir_rels) == len(dir_mtimes)
        and type(links) is dict
        and type(token) is str
        and token.isalnum()
    )


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
    rows, chunks, gate, deps_only = _rows_of(tree, records, racy_after)
    real = os.path.realpath(root)
    path = _index_path(cache_dir, real)
    token = os.urandom(6).hex()
    sealed_blob = seal(b"".join(chunks))
    head = {
        "v": _format_key(strict),
        "real": real,
        "dirs": list(tree.dirs),
        "dir_mtimes": [(-1 if m >= racy_after else m) for m in tree.dirs.values()],
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


def _rows_of(
    tree: Tree, records: dict[str, Record], racy_after: int
) -> tuple[list[list[Any]], list[bytes], list[str], list[str]]:
    """The rows of the tree's SKILL.md files that have a record, their blob chunks,
    and the rels gating must look at (all of them, then those with only
    ``dependencies``)."""
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
            if _only_dependencies(rec[2]):
                deps_only.append(rel)
    return rows, chunks, gate, deps_only


def _empty_columns() -> list[list[Any]]:
    return [[] for _ in range(COLUMNS)]


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


def _only_dependencies(meta: dict[str, Any] | Stored | None) -> bool:
    """Whether ``dependencies`` is the only gating field a gated record sets (decoded
    from the blob when the record is stored): written once with the snapshot, so
    a warm discovery does not decode the ~180 prompt skills of the corpus that list
    requirements only for their reader (``python -m bench discovery``, ``warm``)."""
    if isinstance(meta, Stored):
        try:
            meta, _rows = meta.blob.decode(meta.start, meta.end)
        except ValueError:  # a damaged record: gating decodes (and re-reads) it
            return False
    if type(meta) is not dict:
        return False
    others = (*GATING_FIELDS, "credentials")
    return bool(meta.get("dependencies")) and not any(meta.get(f) for f in others)


def _replace(path: Path, data: bytes) -> None:
    """Atomic (never half a file) but not durable: no fsync. After a crash a
    snapshot is at worst old or missing, which costs one re-parse — while an fsync
    costs more than a whole warm discovery."""
    atomic_write_bytes(path, data, durable=False)
