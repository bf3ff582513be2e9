"""Run a pure function over a slice of work in a forked child process.

A cold discovery of a large tree is CPU-bound Python (YAML, rules) around cheap
system calls, and threads cannot share that work under the GIL (a walker thread
beside the parser was measured slower than none). A ``fork()``-ed child can: it
starts with everything already imported, does its slice, and hands back plain
data as one :mod:`marshal` message through a pipe. The parent carries on with its
own slice meanwhile and reads the result when it gets there.

Forking is only done where it is safe and cheap, and never needed: on Linux, from a
process with a single thread (a fork copies only the calling thread, so a lock
another thread held would stay held in the child; CPython 3.12+ warns about it),
when more than one CPU is available. Anything that goes wrong in a child (an
exception, a signal, a value marshal cannot carry, a short message) turns into
``None`` from :meth:`ForkedCall.result`, and the caller does that slice itself: the
parallelism can cost time, never a result.

The child never returns into the caller's code: it leaves with ``os._exit``, so no
``atexit`` handler, ``finally`` block or buffered output of the parent runs twice,
and nothing it allocated is freed one object at a time.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["ForkedCall", "available_cpus", "can_fork"]

#: Pipe capacity asked for (Linux ``F_SETPIPE_SZ``): fewer wake-ups for a result of
#: a few MB. The kernel may give less; any size works.
_PIPE_SIZE = 1 << 20
_READ_SIZE = 1 << 20


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask, which containers narrow)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def can_fork() -> bool:
    """Whether forking a worker is safe here: Linux, and this process runs one thread.

    Threads are counted by the kernel (``/proc/self/task``), not by :mod:`threading`,
    so a thread started by a C extension counts too."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


class ForkedCall:
    """``fn(arg)`` evaluated in a forked child; :meth:`result` collects it.

    ``fn`` returns a list of plain data (what :mod:`marshal` can write); an item
    marshal cannot write arrives as None, so one odd value costs the caller one item,
    not the whole slice. ``arg`` is never sent anywhere (the child has its own copy of
    the parent's memory). Use as a context manager, or call :meth:`result` or
    :meth:`cancel` exactly once: either one reaps the child.
    """

    __slots__ = ("_fd", "_pid")

    def __init__(
        self, fn: Callable[[Any], list[Any]], arg: Any, *, keep_fds: tuple[int, ...] = ()
    ) -> None:
        read_fd, write_fd = os.pipe()
        with contextlib.suppress(AttributeError, OSError):
            import fcntl

            fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            raise
        if pid == 0:  # the child: never returns
            _child(fn, arg, write_fd, keep_fds)
        os.close(write_fd)
        self._pid: int | None = pid
        self._fd = read_fd

    def __enter__(self) -> ForkedCall:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()

    def result(self) -> list[Any] | None:
        """What ``fn`` returned, or None when the child did not deliver it whole."""
        if self._pid is None:
            return None
        chunks: list[bytes] = []
        try:
            while chunk := os.read(self._fd, _READ_SIZE):
                chunks.append(chunk)
        except OSError:
            chunks = []
        finally:
            exit_code = self._reap()
        if exit_code not in (0, None) or not chunks:
            return None
        try:
            items = marshal.loads(b"".join(chunks))
        except (EOFError, ValueError, TypeError):
            return None
        return items if type(items) is list else None

    def cancel(self) -> None:
        """Stop the child (if still running) and reap it; its result is dropped."""
        if self._pid is not None:
            with contextlib.suppress(OSError):
                os.kill(self._pid, signal.SIGKILL)
            self._reap()

    def _reap(self) -> int | None:
        """The child's exit code; None when it is not known (a SIGCHLD handler of
        the host reaped the child first: then a whole message is trusted as is)."""
        pid, self._pid = self._pid, None
        with contextlib.suppress(OSError):
            os.close(self._fd)
        if pid is None:
            return -1
        while True:
            try:
                _, status = os.waitpid(pid, 0)
            except InterruptedError:  # pragma: no cover - retried by CPython already
                continue
            except ChildProcessError:
                return None
            return os.waitstatus_to_exitcode(status)


def _child(
    fn: Callable[[Any], list[Any]], arg: Any, write_fd: int, keep_fds: tuple[int, ...]
) -> None:
    """The child's whole life: compute, write one marshal message, ``_exit``."""
    code = 1
    try:
        _close_fds_but(write_fd, *keep_fds)
        _default_signals()
        view = memoryview(_encode(fn(arg)))
        while view:
            view = view[os.write(write_fd, view) :]
        code = 0
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _close_fds_but(*keep: int) -> None:
    """Close every inherited descriptor but stdio and ``keep``: the host's sockets,
    pipes and locks are not the child's, and a pipe end held here would keep the
    host's reader from seeing end-of-file for as long as the child runs."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except (OSError, ValueError):
        return
    for fd in fds:
        if fd > 2 and fd not in keep:
            with contextlib.suppress(OSError):  # (the listing's own, already closed)
                os.close(fd)


def _default_signals() -> None:
    """The host's Python signal handlers are not the child's to run (a SIGTERM
    handler that saves state would run twice, once here): they go back to the
    default. Ctrl-C reaches the whole process group; the parent handles it (and
    stops this child), so here it is ignored rather than printed as a traceback."""
    for number in signal.valid_signals():
        with contextlib.suppress(OSError, ValueError, TypeError):
            if callable(signal.getsignal(number)):
                signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _encode(items: list[Any]) -> bytes:
    """``items`` as one marshal message; items marshal cannot write become None."""
    try:
        return marshal.dumps(items)
    except ValueError:  # an unmarshallable value somewhere: find it item by item
        return marshal.dumps([item if _marshallable(item) else None for item in items])


def _marshallable(item: Any) -> bool:
    try:
        marshal.dumps(item)
    except ValueError:
        return False
    return True
