"""One writer per session across processes: the lease the store takes and drops."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skilldeck.agent.events import DoneEvent
from skilldeck.agent.store import LEASE_TTL, SessionStore, TurnWrite, build_agent_for_session
from skilldeck.agent.store.lease import RUN_ENDING
from skilldeck.config import load_settings
from skilldeck.errors import SessionBusyError, SessionError

#: a child process that takes a session's lease, says so, and holds it until stdin closes
HOLDER = """
import sys
from skilldeck.agent.store import SessionStore, TurnWrite
store = SessionStore(sys.argv[1], owner="test holder")
store.commit(sys.argv[2], TurnWrite(status="running"))
print("held", flush=True)
sys.stdin.read()
"""


def dead_pid() -> int:
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(child.stdout)


def foreign_lease(store: SessionStore, sid: str, *, pid: int, host: str, beat: float) -> None:
    with store._write() as db:  # a row as another process would have written it
        db.execute(
            "INSERT OR REPLACE INTO leases VALUES (?,?,?,?,?,?)",
            (sid, pid, host, "other", beat, beat),
        )


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "s.db")


def test_a_run_holds_the_lease_until_a_status_ends_it(store: SessionStore) -> None:
    sid = store.create(model="m", agent="main", cwd=".", task="t").id
    lease = store.lease(sid)
    assert lease is not None and lease.is_ours() and lease.pid == os.getpid()
    store.commit(sid, TurnWrite())  # a mid-run turn refreshes it
    assert store.lease(sid) is not None
    store.set_status(sid, "paused")
    assert store.lease(sid) is None
    store.commit(sid, TurnWrite())  # a write to a paused session takes nothing
    assert store.lease(sid) is None
    store.commit(sid, TurnWrite(status="running"))
    assert store.lease(sid) is not None
    assert "paused" in RUN_ENDING and "running" not in RUN_ENDING


def test_another_live_process_holding_the_lease_refuses_every_write(
    store: SessionStore, tmp_path: Path
) -> None:
    sid = store.create(model="m", agent="main", cwd=".", task="t").id
    store.set_status(sid, "paused")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store.path), sid],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(
            SessionBusyError, match=rf"another process \(test holder, pid {holder.pid}"
        ) as e:
            store.commit(sid, TurnWrite(status="running"))
        assert e.value.owner == "test holder"
        with pytest.raises(SessionBusyError, match="one writer at a time"):
            store.commit(sid, TurnWrite(events=[DoneEvent(session_id=sid, status="x")]))
        assert len(store.events(sid)) == 0  # the refused write changed nothing
        record = store.get(sid)
        with pytest.raises(SessionBusyError):  # resume refuses before building anything
            build_agent_for_session(load_settings(workspace=tmp_path), record, session_store=store)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
        if holder.stdout is not None:
            holder.stdout.close()
    # the holder is gone: its lease is stale and the next run takes it over
    store.commit(sid, TurnWrite(status="running"))
    lease = store.lease(sid)
    assert lease is not None and lease.pid == os.getpid()


def test_a_dead_process_lease_on_this_host_is_taken_over(store: SessionStore) -> None:
    sid = store.create(model="m", agent="main", cwd=".", task="t").id
    foreign_lease(store, sid, pid=dead_pid(), host=socket.gethostname(), beat=time.time())
    store.commit(sid, TurnWrite(status="running"))
    lease = store.lease(sid)
    assert lease is not None and lease.is_ours()


def test_another_hosts_lease_blocks_until_its_heartbeat_is_old(store: SessionStore) -> None:
    sid = store.create(model="m", agent="main", cwd=".", task="t").id
    foreign_lease(store, sid, pid=1, host="elsewhere.example", beat=time.time())
    with pytest.raises(SessionBusyError, match=r"on elsewhere\.example"):
        store.commit(sid, TurnWrite(status="running"))
    foreign_lease(store, sid, pid=1, host="elsewhere.example", beat=time.time() - LEASE_TTL - 5)
    store.commit(sid, TurnWrite(status="running"))
    assert store.lease(sid) is not None and store.lease(sid).is_ours()  # type: ignore[union-attr]


def test_renew_refreshes_only_our_leases(store: SessionStore) -> None:
    ours = store.create(model="m", agent="main", cwd=".", task="t").id
    theirs = store.create(model="m", agent="main", cwd=".", task="t").id
    foreign_lease(store, theirs, pid=1, host="elsewhere.example", beat=100.0)
    before = store.lease(ours)
    assert before is not None
    time.sleep(0.01)
    store.renew_leases([ours, theirs])
    after = store.lease(ours)
    assert after is not None and after.heartbeat > before.heartbeat
    assert store.lease(theirs).heartbeat == 100.0  # type: ignore[union-attr]


def test_deleting_a_session_drops_its_lease(store: SessionStore) -> None:
    sid = store.create(model="m", agent="main", cwd=".", task="t").id
    store.delete(sid)
    assert store.lease(sid) is None
    with pytest.raises(SessionError):
        store.get(sid)


def test_opening_another_connection_never_reopens_the_database_file(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closing any descriptor of a SQLite file drops all of this process's POSIX locks
    on it; a service opens a connection per run while others work, so the store must
    not open and close the existing file (it did, and a second process then damaged
    the database: tests/integration/test_session_service.py)."""
    opened: list[str] = []
    real_open = os.open

    def spy(path: str | os.PathLike[str], *args: object, **kwargs: object) -> int:
        opened.append(os.fspath(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", spy)
    os.chmod(store.path, 0o644)
    SessionStore(store.path).close()
    assert str(store.path) not in opened
    assert os.stat(store.path).st_mode & 0o777 == 0o600  # still repaired to 0600


def test_a_symlinked_database_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.db"
    target.write_bytes(b"")
    link = tmp_path / "s.db"
    link.symlink_to(target)
    with pytest.raises(SessionError, match="symlink"):
        SessionStore(link)
