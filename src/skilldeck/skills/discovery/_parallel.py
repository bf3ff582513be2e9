"""Cold discovery of a large tree on several CPUs: SKILL.md files parsed while the
walk is still finding them.

A cold scan of a few thousand skills spends two thirds of its time in Python (the
YAML, every rule, the skill objects) that threads cannot share under the GIL (a
walker thread beside the parser was measured slower than none). Forked children
(:mod:`._forked`) can. The walk reports each SKILL.md it finds to a
:class:`ParseFeed`; once it has found :data:`MIN_FILES_PER_WORKER` of them the feed
forks a child (another at each further multiple, up to the CPUs available), and
from then on sends the paths, in batches, through a pipe all children read from.
The children parse while the walk goes on; when it ends, the caller takes batches
from the same pipe until it is empty, so everyone finishes at about the same time
whatever each file costs.

Each child hands back, per file, what
:func:`~skilldeck.skills.format.validate.load_for_discovery` gave it in the form the
snapshot cache stores (:mod:`.snapshot`): metadata and diagnostics already encoded.
Discovery loads those records exactly as it loads a cached file, in tree order, so
the skills, their diagnostics, their order and the snapshot written are the same as
one process gives (a test compares them on the whole corpus), and the encoding the
snapshot needs was done on another CPU.

The pipe is a work queue of fixed-size messages of ``PIPE_BUF`` bytes: on Linux a
write of at most that size is atomic, so every read of exactly that size takes one
whole message, whichever process reads it. Writes never block the walk: a batch
that does not fit (a full pipe) stays with the caller, who parses it first after the
walk. A file no child reported back (a child that failed, was killed, or sent
something malformed) is parsed by the caller: the parallelism can cost time, never
a skill.
"""

from __future__ import annotations

import contextlib
import marshal
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from skilldeck.skills.discovery._blob import SnapshotBlob, encode_stored
from skilldeck.skills.discovery._forked import ForkedCall, available_cpus, can_fork
from skilldeck.skills.discovery.snapshot import Record, Stored
from skilldeck.skills.model.skill import SkillSource

if TYPE_CHECKING:
    from skilldeck.skills.format import Discovered

__all__ = ["MIN_FILES_PER_WORKER", "ParseFeed", "worker_limit"]

#: Files found before a child is forked (and again before each further child): a
#: child costs about 2 ms (fork, copy-on-write faults, its result read back), the
#: parse of one file about 30 µs.
MIN_FILES_PER_WORKER = 400
#: More processes than this stop paying on one tree: the walk and the snapshot write
#: stay serial, and every child's result is loaded by the caller.
MAX_WORKERS = 8
#: One queue message (``PIPE_BUF`` on Linux: the most a pipe writes atomically).
MESSAGE = 4096
#: Paths a message carries (fewer when they are long).
BATCH = 32
#: Pipe capacity asked for: room for the whole list of a large tree, so the walk
#: hands on everything it finds (the kernel may give less; any size works).
_QUEUE_SIZE = 1 << 20

#: A child's item for one file: ``(mtime_ns, size)`` and the record a snapshot holds.
Loaded = tuple[tuple[int, int], Record]


def worker_limit(setting: int) -> int:
    """How many processes (the caller included) may parse, given the
    ``discovery_workers`` setting (0: one per available CPU); 1 when forking is not
    safe here."""
    wanted = setting if setting > 0 else min(available_cpus(), MAX_WORKERS)
    if wanted < 2 or not can_fork():
        return 1
    return wanted


class ParseFeed:
    """What the walk found, shared out to forked children as it is found.

    :meth:`found` is the walk's callback (one call per SKILL.md, in tree order).
    After the walk, :meth:`parse_rest` parses in the caller whatever the children
    did not take, and :meth:`collect` returns the children's records. A context
    manager: on leaving, a child still running is stopped and reaped and the pipe
    closed.
    """

    def __init__(
        self,
        root: str,
        *,
        source: SkillSource,
        root_path: Path,
        strict: bool,
        workers: int,
        parse: Callable[..., Discovered],
    ) -> None:
        """``parse`` is discovery's per-file loader (``load_for_discovery``'s
        signature), handed in so this module imports no format code of its own."""
        self._parse = parse
        self._prefix = root.rstrip(os.sep) + os.sep
        self._source, self._root, self._strict = source, root_path, strict
        self._max_children = max(workers - 1, 0)
        self._next_fork = MIN_FILES_PER_WORKER if self._max_children else -1
        #: every path found, in tree order (its index is its place in the tree)
        self.found_rels: list[str] = []
        self._sent = 0  # found_rels[:_sent] went to the queue or to _kept
        self._kept: list[int] = []  # indices the queue had no room for
        self._children: list[ForkedCall] = []
        self._read_fd = self._write_fd = -1

    def __enter__(self) -> ParseFeed:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._close_queue()
        for child in self._children:
            child.cancel()

    # ---- during the walk ---------------------------------------------------------

    def found(self, rel: str) -> None:
        """The walk found ``root/rel``: send it on in batches once children run."""
        rels = self.found_rels
        rels.append(rel)
        if len(rels) == self._next_fork:
            self._fork()
        elif self._children and len(rels) - self._sent >= BATCH:
            self._send(len(rels))

    def _fork(self) -> None:
        try:
            if self._write_fd < 0:
                self._open_queue()
            self._children.append(ForkedCall(self._work, None, keep_fds=(self._read_fd,)))
        except OSError:  # no process or pipe to spare: the caller parses the rest
            self._next_fork = -1
        else:
            more = len(self._children) < self._max_children
            self._next_fork = len(self.found_rels) + MIN_FILES_PER_WORKER if more else -1
        if self._children:
            self._send(len(self.found_rels))

    def _open_queue(self) -> None:
        read_fd, write_fd = os.pipe()
        with contextlib.suppress(AttributeError, OSError):
            import fcntl

            fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, _QUEUE_SIZE)
        os.set_blocking(write_fd, False)  # a full pipe must never stall the walk
        self._read_fd, self._write_fd = read_fd, write_fd

    def _send(self, upto: int) -> None:
        """Queue ``found_rels[_sent:upto]`` as messages; what does not fit is kept."""
        rels, start = self.found_rels, self._sent
        while start < upto:
            count = min(BATCH, upto - start)
            message = marshal.dumps([start, rels[start : start + count]])
            while len(message) > MESSAGE and count > 1:  # long paths: fewer a message
                count //= 2
                message = marshal.dumps([start, rels[start : start + count]])
            sent = len(message) <= MESSAGE and self._put(message)
            if not sent:
                self._kept.extend(range(start, start + count))
            start += count
        self._sent = upto

    def _put(self, message: bytes) -> bool:
        try:
            return os.write(self._write_fd, message.ljust(MESSAGE, b"\0")) == MESSAGE
        except (BlockingIOError, OSError):
            return False

    # ---- in a child --------------------------------------------------------------

    def _work(self, _: None) -> list[Any]:
        """A child's life: take messages until the queue is closed and empty, parse
        each path. Returns ``[index, item]`` pairs (see :meth:`_item`)."""
        # The queue ends when the caller closes its write end, so no child may hold
        # one (ForkedCall closed it with every other inherited descriptor; this is
        # for a system without /proc, where that sweep cannot list them).
        with contextlib.suppress(OSError):
            os.close(self._write_fd)
        load_for_discovery = self._parse
        prefix, source, root, strict = self._prefix, self._source, self._root, self._strict
        out: list[Any] = []
        while (message := _take(self._read_fd)) is not None:
            start, rels = marshal.loads(message)
            for index, rel in enumerate(rels, start):
                md = prefix + rel
                # the kind a skill.py gives is the walk's to say: the caller sets it
                loaded = load_for_discovery(
                    md, strict=strict, source=source, root=root, has_code=False
                )
                out.append([index, _item(md, loaded)])
        return out

    # ---- after the walk, in the caller ---------------------------------------------

    def parse_rest(self, parse: Callable[[int], Discovered]) -> dict[int, Discovered]:
        """Parse, in the caller, what no child will: the paths kept back, then
        messages from the queue until it is empty (the children take the others)."""
        own: dict[int, Discovered] = {}
        if not self._children:
            return own
        self._send(len(self.found_rels))
        os.close(self._write_fd)
        self._write_fd = -1
        for index in self._kept:
            own[index] = parse(index)
        while (message := _take(self._read_fd)) is not None:
            start, rels = marshal.loads(message)
            for index in range(start, start + len(rels)):
                own[index] = parse(index)
        return own

    def collect(self) -> dict[int, Loaded]:
        """Every file a child parsed, by its index: ``((mtime_ns, size), record)``."""
        loaded: dict[int, Loaded] = {}
        count = len(self.found_rels)
        for child in self._children:
            pairs = child.result() or []
            items = [(p[0], p[1]) for p in pairs if _pair_ok(p, count)]
            blob = SnapshotBlob.in_memory(b"".join(item[1] for _, item in items))
            start = 0
            for index, item in items:
                (mtime, size), chunk, name, gate, offset, declared = item
                end = start + len(chunk)
                stored = Stored(blob, start, end, gate)
                loaded[index] = ((mtime, size), [mtime, size, stored, offset, declared, None, name])
                start = end
        self._children = []
        self._close_queue()
        return loaded

    def _close_queue(self) -> None:
        for fd in (self._read_fd, self._write_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._read_fd = self._write_fd = -1


def _take(fd: int) -> bytes | None:
    """One whole message from the queue; None once it is closed and empty."""
    data = b""
    while len(data) < MESSAGE:
        try:
            chunk = os.read(fd, MESSAGE - len(data))
        except InterruptedError:  # pragma: no cover - retried by CPython already
            continue
        if not chunk:
            return None  # (a message cut short cannot happen: writes are atomic)
        data += chunk
    return data


def _item(md: str, loaded: Discovered) -> list[Any] | None:
    """One parsed file as a child sends it: ``[(mtime_ns, size), chunk, name, gate,
    body_offset, declared_kind]``, ``chunk`` being the encoded metadata and
    diagnostics (:func:`~skilldeck.skills.discovery._blob.encode_stored`). None for a file that
    could not be read or whose values are not plain data: the caller looks at it
    again."""
    skill, rows, declared, read_at = loaded
    if read_at is None:
        return None
    try:
        if skill is None:  # named as discovery names a skill that did not load
            name = os.path.basename(os.path.dirname(md))
            return [read_at, encode_stored(None, rows), name, False, 0, None]
        chunk = encode_stored(skill.field_values(), rows)
    except ValueError:
        return None
    return [read_at, chunk, skill.name, skill.may_be_gated(), skill.body_offset, declared]


def _pair_ok(pair: Any, count: int) -> bool:
    """Whether a child's ``[index, item]`` has the shape :func:`_item` gives."""
    if type(pair) is not list or len(pair) != 2:
        return False
    index, item = pair
    if type(index) is not int or not 0 <= index < count:
        return False
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
