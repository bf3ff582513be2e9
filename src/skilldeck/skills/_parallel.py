"""Cold discovery of a large tree on several CPUs: SKILL.md files parsed in slices.

A cold scan of a few thousand skills spends two thirds of its time in Python (the
YAML, every rule, the skill objects) that one thread cannot speed up. Here the
tree's SKILL.md list is cut into contiguous slices: the calling process parses the
first while forked children (:mod:`._forked`) parse the others, each handing back,
per file, what :func:`~skilldeck.skills.validate.load_for_discovery` gave it in
the form the snapshot cache stores (:mod:`.cache`): the metadata and diagnostics
already encoded. Discovery loads those records exactly as it loads a cached file,
so the skills, their diagnostics, their order and the snapshot written are the
same either way (a test compares them on the whole corpus), and the encoding the
snapshot needs was done on the other CPU.

It only forks when it pays: enough files for every worker to have
:data:`MIN_FILES_PER_WORKER` of them, more than one CPU available, and a process
that is safe to fork (:func:`._forked.can_fork`). A child that fails, or an item it
could not send, is simply parsed by the caller.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from skilldeck.skills._forked import ForkedCall, available_cpus, can_fork
from skilldeck.skills.cache import Record, Stored
from skilldeck.skills.skill import SkillSource, SnapshotBlob, encode_stored

__all__ = ["MIN_FILES_PER_WORKER", "ParsedInChildren", "worker_count"]

#: Below this many files a worker costs more (fork, copy-on-write faults, sending the
#: result back) than it saves: about 30 µs of parsing a file against ~5 ms a worker.
MIN_FILES_PER_WORKER = 600
#: More workers than this stop paying on one tree: the walk and the snapshot write
#: stay serial, and every child's result is rebuilt by the parent.
MAX_WORKERS = 8


def worker_count(files: int, setting: int) -> int:
    """How many processes (the caller included) to parse ``files`` SKILL.md files
    with, given the ``discovery_workers`` setting (0: one per available CPU)."""
    wanted = setting if setting > 0 else min(available_cpus(), MAX_WORKERS)
    workers = min(wanted, files // MIN_FILES_PER_WORKER)
    if workers < 2 or not can_fork():
        return 1
    return workers


class ParsedInChildren:
    """Slices 2.. of ``rels`` parsed in forked children while the caller parses
    ``own`` (slice 1). :meth:`results` hands back each child's slice, in order, as
    ``(stamp, record)`` pairs: the file's ``(mtime_ns, size)`` when it was read and
    the :data:`~skilldeck.skills.cache.Record` a snapshot would hold for it, whose
    metadata and diagnostics stay encoded (in one in-memory blob per child) until a
    caller asks. None marks a file to parse again. A context manager: on leaving, a
    child still running is stopped and reaped."""

    def __init__(
        self,
        rels: list[str],
        prefix: str,
        with_code: set[str],
        *,
        source: SkillSource,
        root: Path,
        strict: bool,
        workers: int,
    ) -> None:
        self._prefix, self._with_code = prefix, with_code
        self._source, self._root, self._strict = source, root, strict
        parts = _slices(rels, worker_count(len(rels), workers))
        self.own: list[str] = parts[0]
        self._children: list[tuple[list[str], ForkedCall | None]] = []
        for part in parts[1:]:
            try:
                child: ForkedCall | None = ForkedCall(self._parse_part, part)
            except OSError:  # no process to spare: this slice is parsed by the caller
                child = None
            self._children.append((part, child))

    def __enter__(self) -> ParsedInChildren:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for _, child in self._children:
            if child is not None:
                child.cancel()

    def results(self) -> Iterator[tuple[list[str], list[tuple[tuple[int, int], Record] | None]]]:
        """Each child's slice and what it parsed, in tree order."""
        for part, child in self._children:
            items = child.result() if child is not None else None
            if items is None or len(items) != len(part):
                yield part, [None] * len(part)
            else:
                yield part, _records(items)

    def _parse_part(self, part: list[str]) -> list[list[Any] | None]:
        """In the child: one slice, parsed. Per file ``[(mtime_ns, size), chunk, name,
        gate, body_offset, declared_kind]``, where ``chunk`` is the file's encoded
        metadata and diagnostics (:func:`~skilldeck.skills.skill.encode_stored`);
        None for a file that could not be read (the caller looks at it again)."""
        from skilldeck.skills.validate import load_for_discovery

        prefix, with_code = self._prefix, self._with_code
        out: list[list[Any] | None] = []
        source, root, strict = self._source, self._root, self._strict
        for rel in part:
            md = prefix + rel
            skill, rows, declared, read_at = load_for_discovery(
                md, strict=strict, source=source, root=root, has_code=rel in with_code
            )
            if read_at is None:
                out.append(None)
            elif skill is None:  # named as discovery names a skill that did not load
                name = os.path.basename(os.path.dirname(md))
                out.append([read_at, encode_stored(None, rows), name, False, 0, None])
            else:
                try:
                    chunk = encode_stored(skill.field_values(), rows)
                except ValueError:  # not plain data: the caller loads this one itself
                    out.append(None)
                    continue
                out.append(
                    [read_at, chunk, skill.name, skill.may_be_gated(), skill.body_offset, declared]
                )
        return out


def _records(items: list[Any]) -> list[tuple[tuple[int, int], Record] | None]:
    """A child's items as ``(stamp, record)`` pairs over one in-memory blob of their
    chunks; an item of the wrong shape becomes None (that file is parsed again)."""
    chunks = [item[1] if _well_formed(item) else b"" for item in items]
    blob = SnapshotBlob.in_memory(b"".join(chunks))
    out: list[tuple[tuple[int, int], Record] | None] = []
    start = 0
    for item, chunk in zip(items, chunks, strict=True):
        if not chunk:
            out.append(None)
            continue
        end = start + len(chunk)
        (mtime, size), _, name, gate, offset, declared = item
        out.append(((mtime, size), [mtime, size, Stored(blob, start, end, gate), offset,
                                    declared, None, name]))  # fmt: skip
        start = end
    return out


def _well_formed(item: Any) -> bool:
    if type(item) is not list or len(item) != 6:
        return False
    stamp, chunk, name, gate, offset, declared = item
    return (
        type(stamp) is tuple
        and len(stamp) == 2
        and all(type(v) is int for v in stamp)
        and type(chunk) is bytes
        and len(chunk) > 0
        and type(name) is str
        and type(gate) is bool
        and type(offset) is int
        and (declared is None or type(declared) is str)
    )


def _slices(rels: list[str], count: int) -> list[list[str]]:
    """``rels`` cut into ``count`` contiguous slices of (nearly) equal length."""
    size, extra = divmod(len(rels), count)
    parts, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        parts.append(rels[start:end])
        start = end
    return parts
