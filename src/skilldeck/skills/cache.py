"""The discovery snapshot: one compact JSON file per root under ``settings.cache_dir``.

What a snapshot holds, and why it is enough to skip work safely:

* the mtime of every folder the walk visited — a folder's mtime changes whenever an
  entry is added, removed or renamed in it, so if none changed, the set of SKILL.md
  files is the same and the tree need not be listed again;
* the state of every symlink met (a dangling link that starts resolving changes no
  folder's mtime, so links are re-checked one by one);
* per SKILL.md: ``(mtime_ns, size)`` and the validated load result (metadata, body
  offset, kind, diagnostics). A file whose stat still matches is not read again:
  its metadata is rebuilt from the stored, already-normalised fields, so the warm
  path parses no YAML and runs none of the frontmatter rules.

Timestamps written in the last :data:`RACY_NS` before the scan started are not
trusted (the "racy git" problem: a second write within the filesystem's timestamp
granularity leaves mtime unchanged), so such entries are re-checked next time.

The file records a format key built from the snapshot format, skilldeck's version,
strict mode and the size+mtime of the ``skills`` package's modules: any change there
drops the snapshot. A missing, unreadable or corrupt file is ignored and rebuilt.
Only plain JSON is stored — never pickle — and writes are atomic (not fsynced:
see :func:`_replace`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from skilldeck.skills.diagnostics import Diagnostic, Severity
from skilldeck.skills.skill import Skill, SkillKind, SkillSource, detect_kind
from skilldeck.skills.spec import SkillMetadata
from skilldeck.skills.walk import Tree, link_state

__all__ = [
    "RACY_NS",
    "Record",
    "RootSnapshot",
    "load_snapshot",
    "record_from_load",
    "save_snapshot",
    "skill_from_record",
    "snapshot_path",
]

FORMAT = 1
#: Entries modified this recently before a scan are re-checked on the next one.
RACY_NS = 2_000_000_000
#: One SKILL.md: [mtime_ns, size, metadata-or-None, body_offset, kind, diagnostics, name]
Record = list[Any]


class RootSnapshot:
    """A root's tree plus its per-file records, as loaded from disk."""

    __slots__ = ("records", "tree")

    def __init__(self, tree: Tree, records: dict[str, Record]) -> None:
        self.tree = tree
        self.records = records

    def tree_unchanged(self) -> bool:
        """True when no visited folder and no symlink changed since the snapshot."""
        root = self.tree.root
        prefix = root.rstrip(os.sep) + os.sep
        stat = os.stat
        try:
            for rel, mtime in self.tree.dirs.items():
                if stat(prefix + rel if rel else root).st_mtime_ns != mtime:
                    return False
        except OSError:
            return False
        return all(link_state(prefix + rel) == st for rel, st in self.tree.links.items())


def _format_key(strict: bool) -> str:
    """What a snapshot's validity depends on besides the files themselves."""
    from skilldeck import __version__

    return f"{FORMAT}|{__version__}|{int(strict)}|{_code_stamp()}"


@functools.cache
def _code_stamp() -> str:
    """Size and mtime of every module of this package: an edited parser, validator or
    schema (in a development checkout) drops every snapshot. Computed once per
    process, which is right: a running process keeps the code it imported."""
    parts = []
    with contextlib.suppress(OSError), os.scandir(Path(__file__).parent) as it:
        for entry in it:
            if entry.name.endswith(".py"):
                st = entry.stat()
                parts.append(f"{entry.name}:{st.st_mtime_ns}:{st.st_size}")
    return hashlib.sha1("/".join(sorted(parts)).encode()).hexdigest()[:16]


def snapshot_path(cache_dir: Path, root: Path) -> Path:
    digest = hashlib.sha1(os.path.realpath(root).encode("utf-8", "surrogatepass"))
    return cache_dir / "discovery" / f"{digest.hexdigest()[:24]}.json"


def load_snapshot(cache_dir: Path, root: Path, *, strict: bool) -> RootSnapshot | None:
    """The stored snapshot of ``root``, or None when absent, stale or corrupt."""
    path = snapshot_path(cache_dir, root)
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    try:
        if data["v"] != _format_key(strict) or data["real"] != os.path.realpath(root):
            return None
        rows, dirs, links = data["skills"], data["dirs"], data["links"]
        if not (_well_formed(rows) and isinstance(dirs, dict) and isinstance(links, dict)):
            return None
        tree = Tree(
            str(root),
            skill_mds=[row[0] for row in rows],
            dirs=dirs,
            links=links,
            diagnostics=[_diag_from(d, None) for d in data["diags"]],
        )
        records = {row[0]: row[1:] for row in rows}
    except (KeyError, TypeError, IndexError, ValueError, AttributeError):
        return None
    return RootSnapshot(tree, records)


def _well_formed(rows: Any) -> bool:
    """The shape the warm path relies on (a damaged file must not crash it)."""
    return isinstance(rows, list) and all(
        type(row) is list
        and len(row) == 8
        and type(row[0]) is str
        and type(row[1]) is int
        and type(row[2]) is int
        for row in rows
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
    dirs = {rel: (-1 if m >= racy_after else m) for rel, m in tree.dirs.items()}
    rows = []
    for rel in tree.skill_mds:
        rec = records.get(rel)
        if rec is None:
            continue
        if rec[0] >= racy_after:
            rec = [-1, *rec[1:]]
        rows.append(_row_json(rel, rec))
    head = _dumps(
        {
            "v": _format_key(strict),
            "real": os.path.realpath(root),
            "dirs": dirs,
            "links": tree.links,
            "diags": [_diag_to(d, None) for d in tree.diagnostics],
        }
    )
    # rows are encoded one by one (see _row_json) and spliced in, not encoded twice
    data = f'{head[:-1]},"skills":[{",".join(rows)}]}}'.encode("ascii")
    with contextlib.suppress(OSError):  # a read-only or full disk only costs speed
        _replace(snapshot_path(cache_dir, root), data)


def _dumps(value: Any) -> str:
    # ASCII escapes keep undecodable file names (surrogates) round-tripping exactly
    return json.dumps(value, separators=(",", ":"))


def _row_json(rel: str, rec: Record) -> str:
    """One SKILL.md's row. A record JSON cannot hold exactly (an unexpected type in
    an unknown field, say) keeps its place in the tree with an impossible mtime, so
    that file is simply parsed again every time."""
    try:
        return _dumps([rel, *rec])
    except (TypeError, ValueError):
        return _dumps([rel, -1, rec[1], None, 0, None, [], rec[6]])


def _replace(path: Path, data: bytes) -> None:
    """Atomic (never half a file) but not durable: no fsync. After a crash a
    snapshot is at worst old or missing, which costs one re-parse — while an fsync
    costs more than a whole warm discovery."""
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
    st: os.stat_result,
    skill: Skill | None,
    diagnostics: list[Diagnostic],
    *,
    name: str,
) -> Record:
    """What to remember about one SKILL.md after :func:`load_skill` read it."""
    md = str(skill.skill_md) if skill else None
    diags = [_diag_to(d, md) for d in diagnostics]
    if skill is None:
        return [st.st_mtime_ns, st.st_size, None, 0, None, diags, name]
    meta = skill.metadata.model_dump(exclude_defaults=True)
    return [st.st_mtime_ns, st.st_size, meta, skill.body_offset, str(skill.kind), diags, name]


def skill_from_record(
    rec: Record, md: str, *, source: SkillSource, root: Path, recheck_kind: bool
) -> tuple[Skill | None, list[Diagnostic], str] | None:
    """Rebuild (skill-or-None, diagnostics, name) from a record without parsing;
    None when the record is unusable (then the file is simply parsed again)."""
    try:
        _mtime, _size, meta, offset, kind, diags, name = rec
        skill_md = Path(md)
        diagnostics = [_diag_from(d, skill_md) for d in diags]
        if meta is None:
            return None, diagnostics, name
        # Re-validating stored, normalised fields costs ~3 µs in pydantic-core;
        # model_construct is slower here, as it inspects every default factory.
        metadata = SkillMetadata.model_validate(meta)
        folder = skill_md.parent
        skill = Skill(
            metadata=metadata,
            folder=folder,
            skill_md=skill_md,
            source=source,
            root=root,
            body_offset=offset,
            kind=detect_kind(folder, metadata) if recheck_kind else _KINDS[kind],
            diagnostics=diagnostics,
        )
    except (ValueError, TypeError, KeyError):  # pydantic's ValidationError is a ValueError
        return None
    return skill, diagnostics, name


_KINDS = {str(k): k for k in SkillKind}
_SEVERITIES = {str(s): s for s in Severity}


def _diag_to(d: Diagnostic, md: str | None) -> list[Any]:
    path = None if d.path is None else ("=" if str(d.path) == md else str(d.path))
    return [d.code, d.rule, d.message, str(d.severity), d.line, path]


def _diag_from(row: list[Any], md: Path | None) -> Diagnostic:
    code, rule, message, severity, line, path = row
    where = md if path == "=" else (Path(path) if path else None)
    return Diagnostic(code, rule, message, severity=_SEVERITIES[severity], path=where, line=line)
