"""One writer per session: the lease a process holds while it runs a session.

Many processes share one sessions database (a terminal's ``skilldeck run``, ``skilldeck
resume`` in another, the session service behind ``skilldeck web``). Two of them must
never run the same session at once: both would append turns to one conversation. The
``leases`` table (migration ``m005_session_leases``) holds one row per session being
run: the process (pid, host), a label saying what it is, and a heartbeat.

The store takes and drops the lease itself, inside the transaction of each write
(:meth:`~skilldeck.agent.store.session.SessionStore.commit`):

* a write that sets a session ``running`` (a new session, a resume, a chat's next
  message) takes the lease, or refreshes it when this process holds it;
* a write that ends the run (``paused``, ``completed``, ``error``, ``cancelled``…)
  drops it;
* any write while another live process holds the lease is refused with
  :class:`~skilldeck.errors.SessionBusyError`, naming that process.

Ownership is per process: the connections and threads of one process share its
leases (keeping two runs of one session apart inside a process is the caller's job —
the session service does it). A lease is stale — taken over by the next writer — when
its process is gone (same host: the pid is dead), or, for a process on another host,
when its heartbeat is older than :data:`LEASE_TTL` (a long-lived process refreshes it
with :meth:`~skilldeck.agent.store.session.SessionStore.renew_leases`).
"""

from __future__ import annotations

import os
import socket
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from skilldeck.agent.store.files import process_alive
from skilldeck.errors import SessionBusyError

__all__ = [
    "LEASE_TTL",
    "RUN_ENDING",
    "Lease",
    "describe_process",
    "read_lease",
    "take_or_check_lease",
]

#: seconds after which another host's lease without a heartbeat is stale
LEASE_TTL = 120.0
#: statuses that end a run (and drop its lease)
RUN_ENDING = frozenset({"paused", "completed", "max_turns", "limit", "error", "cancelled"})


def describe_process() -> str:
    """What this process is, for another process's error message ("skilldeck web")."""
    if not sys.argv or not sys.argv[0]:
        return "python"
    program = Path(sys.argv[0]).name
    if program in {"main.py", "__main__.py"} and "skilldeck" in sys.argv[0]:
        program = "skilldeck"  # python -m skilldeck.cli.main
    words = [program, *sys.argv[1:2]]
    return " ".join(w for w in words if w and not w.startswith("-"))


@dataclass(frozen=True)
class Lease:
    """Who holds a session's lease."""

    session_id: str
    pid: int
    host: str
    owner: str
    acquired: float
    heartbeat: float

    def is_ours(self) -> bool:
        return self.pid == os.getpid() and self.host == socket.gethostname()

    def is_stale(self, now: float | None = None) -> bool:
        if self.host == socket.gethostname():
            return not process_alive(self.pid)
        return (now or time.time()) - self.heartbeat > LEASE_TTL

    def blocks(self) -> bool:
        """Whether this lease stops this process from writing the session."""
        return not self.is_ours() and not self.is_stale()

    def message(self) -> str:
        """The refusal a second writer gets: who runs the session, and what to do."""
        since = time.strftime("%H:%M:%S", time.localtime(self.acquired))
        where = f"pid {self.pid}" + (
            "" if self.host == socket.gethostname() else f" on {self.host}"
        )
        return (
            f"Session {self.session_id} is being run by another process ({self.owner}, "
            f"{where}, since {since}); a session has one writer at a time. Wait until it "
            "pauses or finishes, or stop it there (cancel it in `skilldeck web`, Ctrl-C in "
            "a terminal), then try again."
        )


def read_lease(db: sqlite3.Connection, session_id: str) -> Lease | None:
    row = db.execute(
        "SELECT session_id, pid, host, owner, acquired, heartbeat FROM leases WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    return None if row is None else Lease(*tuple(row))


def take_or_check_lease(
    db: sqlite3.Connection, session_id: str, status: str | None, owner: str, now: float
) -> None:
    """Inside a write transaction on ``session_id``: refuse it when another live process
    holds the lease; take or refresh the lease when ``status`` is ``running``, refresh
    it on a mid-run write, drop it when ``status`` ends the run."""
    lease = read_lease(db, session_id)
    if lease is not None and lease.blocks():
        raise SessionBusyError(lease.message(), owner=lease.owner)
    if status in RUN_ENDING:
        db.execute("DELETE FROM leases WHERE session_id = ?", (session_id,))
    elif lease is not None and lease.is_ours():  # a turn of our run: the heartbeat
        db.execute("UPDATE leases SET heartbeat = ? WHERE session_id = ?", (now, session_id))
    elif status == "running":  # free, or held by a process that is gone: ours now
        db.execute(
            "INSERT OR REPLACE INTO leases VALUES (?,?,?,?,?,?)",
            (session_id, os.getpid(), socket.gethostname(), owner, now, now),
        )
