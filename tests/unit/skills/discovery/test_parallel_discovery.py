"""Cold discovery on several CPUs (``skills/_parallel.py``, ``skills/_forked.py``):
the same skills, diagnostics, order and snapshot as one process, and nothing lost
when a child fails, dies or cannot be started.

The trees here are small, so the per-worker minimum is lowered for each test. A
test process may hold idle threads other tests left (an anyio worker, say), which
makes discovery stay serial; these tests fork anyway (their children only parse), so
the parallel path is what they check, whatever ran before them.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import skilldeck.skills.discovery.discover as discover_mod
from skilldeck.config import load_settings
from skilldeck.skills.discovery import Root, RootScan, _forked, _parallel, cache, scan_root
from skilldeck.skills.discovery._blob import SnapshotBlob
from skilldeck.skills.format import validate
from skilldeck.skills.model.skill import SkillKind, SkillSource

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="forking workers needs Linux"
)

FILES = 90


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_parallel, "MIN_FILES_PER_WORKER", 10)
    monkeypatch.setattr(_parallel, "BATCH", 4)
    monkeypatch.setattr(_parallel, "available_cpus", lambda: 4)
    monkeypatch.setattr(_parallel, "can_fork", lambda: True)  # see the module docs


@pytest.fixture
def child_pids(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pid of every worker forked while the test runs."""
    pids: list[int] = []
    real_init = _forked.ForkedCall.__init__

    def recording(self: _forked.ForkedCall, fn: Any, arg: Any, **kwargs: Any) -> None:
        real_init(self, fn, arg, **kwargs)
        pids.append(self._pid or 0)

    monkeypatch.setattr(_forked.ForkedCall, "__init__", recording)
    return pids


def make_tree(root: Path) -> Path:
    """FILES skill folders of every sort discovery tells apart: valid, warned,
    invalid (bad YAML, no description), code skills, script skills, gated skills,
    nested skills."""
    for i in range(FILES):
        folder = root / f"group-{i % 3}" / f"skill-{i:03d}"
        folder.mkdir(parents=True)
        kind = i % 9
        head = f"name: skill-{i:03d}\ndescription: Skill number {i} for tests.\n"
        if kind == 1:
            head += "colour: blue\n"  # unknown field: a warning
        elif kind == 2:
            head = f"name: skill-{i:03d}\ndescription: [unclosed\n"  # YAML error
        elif kind == 3:
            head = f"name: skill-{i:03d}\n"  # no description
        elif kind == 4:
            (folder / "skill.py").write_text("def run(ctx):\n    return None\n")
        elif kind == 5:
            head += "entrypoint: scripts/run.py\n"
        elif kind == 6:
            head += "requires-tools: [Bash]\nversion: 1.0\n"
        elif kind == 7:
            head += "released: 2024-01-31\nlicense: MIT\n"  # a YAML date, normalised
        elif kind == 8:
            nested = folder / "inner"
            nested.mkdir()
            (nested / "SKILL.md").write_text(
                "---\nname: inner\ndescription: Nested skill.\n---\nInner body\n"
            )
        (folder / "SKILL.md").write_text(f"---\n{head}---\n\n# Skill {i}\n\nBody {i}.\n")
    past = time.time() - 3600
    for path in [root, *root.rglob("*")]:
        os.utime(path, (past, past))
    return root


def describe(scan: RootScan) -> dict[str, Any]:
    """Everything a caller can see of a scan, as plain data."""
    return {
        "skills": [
            (
                s.name,
                s.skill_md_str,
                s.kind,
                s.body_offset,
                s.may_be_gated(),
                s.description,
                s.field_values(),
                [(d.code, d.message, d.line, str(d.path)) for d in s.diagnostics],
                s.metadata.model_dump(),
            )
            for s in scan.skills
        ],
        "invalid": [
            (i.name, str(i.skill_md), [(d.code, d.message, d.line) for d in i.diagnostics])
            for i in scan.invalid
        ],
        "files": scan.files,
        "parsed": scan.parsed,
        "diagnostics": [(d.code, d.message) for d in scan.diagnostics],
    }


def stored(cache_dir: Path, root: Path) -> dict[str, Any]:
    """The snapshot on disk, with its random blob name left out."""
    snap = cache.load_snapshot(cache_dir, root, strict=False)
    assert snap is not None
    rows = [row[:3] + row[4:6] + row[7:] for row in snap.rows]  # no blob offsets
    chunks = [snap.blob.decode(row[3], row[6]) for row in snap.rows]
    return {"rows": rows, "chunks": chunks, "gate": snap.gate, "dirs": snap.dir_rels}


def cold(root: Path, cache_dir: Path, *, workers: int, strict: bool = False) -> RootScan:
    return scan_root(
        Root(root, SkillSource.ROOT, explicit=True), cache_dir=cache_dir, strict=strict,
        workers=workers,
    )  # fmt: skip


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("workers", [2, 3, 5])
def test_parallel_cold_scan_equals_the_serial_one(
    tmp_path: Path, workers: int, strict: bool
) -> None:
    root = make_tree(tmp_path / "skills")
    serial = cold(root, tmp_path / "c1", workers=1, strict=strict)
    parallel = cold(root, tmp_path / "c2", workers=workers, strict=strict)
    assert describe(parallel) == describe(serial)
    assert parallel.parsed == FILES + FILES // 9  # nested skills included
    assert parallel.invalid  # the broken ones are reported the same way
    if not strict:  # (strict rejects the non-spec fields the script and gated skills use)
        assert stored(tmp_path / "c2", root) == stored(tmp_path / "c1", root)
        kinds = {s.kind for s in parallel.skills}
        assert {SkillKind.CODE, SkillKind.SCRIPT, SkillKind.PROMPT} <= kinds
        assert any(s.may_be_gated() for s in parallel.skills)


def test_the_work_really_is_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, child_pids: list[int]
) -> None:
    root = make_tree(tmp_path / "skills")
    from_children: list[int] = []
    real_collect = _parallel.ParseFeed.collect

    def counting_collect(self: _parallel.ParseFeed) -> Any:
        got = real_collect(self)
        from_children.append(len(got))
        return got

    here: list[str] = []
    real_parse = validate.load_for_discovery

    def counting_parse(md: str, **kwargs: Any) -> Any:
        here.append(md)
        return real_parse(md, **kwargs)

    monkeypatch.setattr(_parallel.ParseFeed, "collect", counting_collect)
    monkeypatch.setattr(validate, "load_for_discovery", counting_parse)
    scan = cold(root, tmp_path / "c", workers=4)
    assert len(child_pids) == 3 and os.getpid() not in child_pids  # forked at 10, 20 and 30 found
    total = FILES + FILES // 9
    assert scan.parsed == total
    assert from_children[0] > 0 and from_children[0] + len(here) == total  # none twice
    assert len(set(here)) == len(here)


def test_a_small_tree_is_parsed_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_parallel, "MIN_FILES_PER_WORKER", 1000)
    forks: list[int] = []
    monkeypatch.setattr(_forked.ForkedCall, "__init__", lambda *a: forks.append(1))
    root = make_tree(tmp_path / "skills")
    assert describe(cold(root, tmp_path / "c", workers=4))["parsed"] == FILES + FILES // 9
    assert forks == []


def test_a_warm_scan_after_a_parallel_cold_one_parses_nothing(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "skills")
    first = cold(root, tmp_path / "c", workers=2)
    warm = scan_root(Root(root, SkillSource.ROOT, explicit=True), cache_dir=tmp_path / "c")
    assert warm.tree_from_cache and warm.parsed == 0
    assert describe(warm)["skills"] == describe(first)["skills"]
    assert describe(warm)["invalid"] == describe(first)["invalid"]


def test_an_item_marshal_cannot_carry_is_loaded_by_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(tmp_path / "skills")
    serial = describe(cold(root, tmp_path / "c1", workers=1))
    real = _parallel.encode_stored

    def odd_for_some(meta: Any, rows: Any) -> bytes:
        if meta is not None and meta["name"].endswith("7"):
            return real({**meta, "extra": {"odd": object()}}, rows)  # ValueError
        return real(meta, rows)

    monkeypatch.setattr(_parallel, "encode_stored", odd_for_some)
    got = cold(root, tmp_path / "c2", workers=2)
    assert describe(got) == serial


def test_a_full_queue_leaves_the_rest_to_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_parallel, "_QUEUE_SIZE", 4096)  # one message of room
    root = make_tree(tmp_path / "skills")
    serial = describe(cold(root, tmp_path / "c1", workers=1))
    assert describe(cold(root, tmp_path / "c2", workers=3)) == serial


def test_long_paths_travel_fewer_to_a_message_and_the_longest_stay_behind() -> None:
    feed = _parallel.ParseFeed(
        "/r",
        source=SkillSource.ROOT,
        root_path=Path("/r"),
        strict=False,
        workers=2,
        parse=validate.load_for_discovery,
    )
    sent: list[bytes] = []
    feed._put = lambda message: sent.append(message) is None  # type: ignore[method-assign]
    feed.found_rels = ["a" * 1500, "b" * 1500, "c" * 1500, "d" * 5000, "e", "f"]
    feed._send(len(feed.found_rels))
    batches = [marshal.loads(m) for m in sent]
    assert all(len(m) <= _parallel.MESSAGE for m in sent)
    assert [start for start, _ in batches] == [0, 2, 4]
    assert [len(rels) for _, rels in batches] == [2, 1, 2]
    assert feed._kept == [3]  # too long for any message: the caller parses it


def raising(self: Any, _: None) -> list[Any]:
    raise RuntimeError("worker bug")


def killed(self: Any, _: None) -> list[Any]:
    os.kill(os.getpid(), signal.SIGKILL)
    return []


def eats_then_dies(self: Any, _: None) -> list[Any]:
    while _parallel._take(self._read_fd) is not None:
        pass  # every batch it takes is lost with it
    os._exit(3)


def misshapen(self: Any, _: None) -> list[Any]:
    taken = []
    while (message := _parallel._take(self._read_fd)) is not None:
        taken.append(marshal.loads(message)[0])
    odd: list[Any] = [[0, ["odd"]], [1, [(1, "2"), b"x", "x", False, 0, "prompt"]], [10**6, []]]
    return odd + [[start, 7] for start in taken] + [["x", None]]


@pytest.mark.parametrize("failure", [raising, killed, eats_then_dies, misshapen])
def test_a_failing_child_costs_time_never_a_skill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: Any
) -> None:
    root = make_tree(tmp_path / "skills")
    serial = describe(cold(root, tmp_path / "c1", workers=1))
    monkeypatch.setattr(_parallel.ParseFeed, "_work", failure)
    got = cold(root, tmp_path / "c2", workers=3)
    assert describe(got) == serial


def test_no_process_to_spare_means_serial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_tree(tmp_path / "skills")
    serial = describe(cold(root, tmp_path / "c1", workers=1))

    def no_fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    assert describe(cold(root, tmp_path / "c2", workers=4)) == serial


def test_an_error_in_the_caller_stops_and_reaps_the_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, child_pids: list[int]
) -> None:
    root = make_tree(tmp_path / "skills")

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(_parallel.ParseFeed, "parse_rest", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cold(root, tmp_path / "c", workers=3)
    assert len(child_pids) == 2
    for pid in child_pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # already reaped: no zombie left behind


def test_how_many_processes_the_setting_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _parallel.worker_limit(0) == 4  # one per CPU
    assert _parallel.worker_limit(2) == 2
    assert _parallel.worker_limit(1) == 1  # never fork
    monkeypatch.setattr(_parallel, "available_cpus", lambda: 64)
    assert _parallel.worker_limit(0) == _parallel.MAX_WORKERS
    monkeypatch.setattr(_parallel, "available_cpus", lambda: 1)
    assert _parallel.worker_limit(0) == 1


def test_a_second_thread_keeps_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_parallel, "can_fork", _forked.can_fork)  # the real check
    before = len(os.listdir("/proc/self/task"))
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not _forked.can_fork()  # a fork would copy only this thread
        assert _parallel.worker_limit(0) == 1
    finally:
        stop.set()
        thread.join()
    if before == 1:  # nothing else left a thread in this test process
        deadline = time.monotonic() + 10  # the kernel lists a joined thread a moment longer
        while not _forked.can_fork() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _forked.can_fork()
        assert _parallel.worker_limit(0) == 4


def test_discover_takes_the_workers_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(tmp_path / "skills")
    seen: list[int] = []
    real = _parallel.worker_limit

    def spy(setting: int) -> int:
        seen.append(setting)
        return real(setting)

    monkeypatch.setattr(_parallel, "worker_limit", spy)
    for setting in (3, 1):
        home = tmp_path / f"home{setting}"
        home.mkdir()
        (home / "config.toml").write_text(f"[skills]\ndiscovery_workers = {setting}\n")
        settings = load_settings(home=home, workspace=home)
        assert settings.skills.discovery_workers == setting
        discover_mod.discover(settings, roots=[root], no_defaults=True)
    assert seen == [3]  # 1 never gets as far as asking


# ---- ForkedCall on its own ------------------------------------------------------------


def test_forked_call_returns_the_childs_list() -> None:
    with _forked.ForkedCall(lambda n: [os.getpid(), n * 2, {"k": [b"x", None]}], 21) as call:
        pid, doubled, data = call.result() or [0, 0, {}]
    assert pid != os.getpid() and doubled == 42 and data == {"k": [b"x", None]}


def test_forked_call_drops_only_the_items_marshal_cannot_carry() -> None:
    with _forked.ForkedCall(lambda _: [1, object(), "three"], None) as call:
        assert call.result() == [1, None, "three"]


@pytest.mark.parametrize("fn", [lambda _: 1 / 0, lambda _: os._exit(0), lambda _: "not a list"])
def test_forked_call_failures_are_none(fn: Any) -> None:
    with _forked.ForkedCall(fn, None) as call:
        assert call.result() is None


def test_forked_call_cancel_stops_a_running_child() -> None:
    call = _forked.ForkedCall(lambda _: [time.sleep(60)], None)
    started = time.monotonic()
    call.cancel()
    assert time.monotonic() - started < 30
    assert call.result() is None


def test_in_memory_blob_survives_copies_and_pickles() -> None:
    import copy
    import pickle

    from skilldeck.skills.discovery._blob import encode_stored

    chunk = encode_stored({"name": "a", "description": "b"}, [])
    blob = SnapshotBlob.in_memory(chunk)
    for other in (copy.deepcopy(blob), pickle.loads(pickle.dumps(blob))):
        assert other.decode(0, len(chunk)) == ({"name": "a", "description": "b"}, [])


def test_the_hosts_signal_handlers_do_not_run_in_a_child(tmp_path: Path) -> None:
    ran = tmp_path / "handler-ran"

    def host_handler(signum: int, frame: Any) -> None:
        ran.write_text("yes")

    def child(_: None) -> list[Any]:
        os.kill(os.getpid(), signal.SIGUSR1)  # default action here: the child ends
        time.sleep(1)
        return ["survived"]

    previous = signal.signal(signal.SIGUSR1, host_handler)
    try:
        with _forked.ForkedCall(child, None) as call:
            assert call.result() is None
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert not ran.exists()


def test_a_host_that_reaps_children_itself_still_gets_the_result() -> None:
    def reaper(signum: int, frame: Any) -> None:
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass

    previous = signal.signal(signal.SIGCHLD, reaper)
    try:
        call = _forked.ForkedCall(lambda _: ["done", 42], None)
        time.sleep(0.3)  # the child exits and the host's handler reaps it
        assert call.result() == ["done", 42]
    finally:
        signal.signal(signal.SIGCHLD, previous)


def test_a_child_keeps_none_of_the_hosts_descriptors() -> None:
    host_read, host_write = os.pipe()  # e.g. the host's pipe to a subprocess
    try:
        with _forked.ForkedCall(lambda _: sorted(map(int, os.listdir("/proc/self/fd"))), None) as c:
            open_in_child = c.result() or []
        assert host_read not in open_in_child and host_write not in open_in_child
        os.close(host_write)
        assert os.read(host_read, 1) == b""  # end-of-file at once: no copy held elsewhere
    finally:
        os.close(host_read)
        with contextlib.suppress(OSError):
            os.close(host_write)
