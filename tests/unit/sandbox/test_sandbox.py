"""The bubblewrap sandbox: argv shape, modes, probing, and real isolation when it works."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from skilldeck.config import SandboxSettings, Settings
from skilldeck.errors import SandboxError
from skilldeck.sandbox import ProbeResult, Sandbox, bwrap_argv, probe_sandbox, wrap_argv

UNAVAILABLE = ProbeResult(False, "bubblewrap (`bwrap`) is not installed or not on PATH")
AVAILABLE = ProbeResult(True, "works", "/usr/bin/bwrap")
REAL = probe_sandbox()
needs_bwrap = pytest.mark.skipif(
    not REAL.available, reason=f"bubblewrap sandbox not usable here: {REAL.reason}"
)


def settings(mode: str, *, network: bool = False) -> SandboxSettings:
    return SandboxSettings(mode=mode, network=network)  # type: ignore[arg-type]


def test_bwrap_argv_mounts_tmp_before_the_writable_binds(tmp_path: Path) -> None:
    ws, scratch = tmp_path / "ws", tmp_path / "scratch"
    argv = bwrap_argv("bwrap", ["python", "x.py"], workspace=ws, scratch=scratch, network=False)
    assert argv[:5] == ["bwrap", "--ro-bind", "/", "/", "--dev"]
    tmpfs = argv.index("--tmpfs")
    binds = [i for i, a in enumerate(argv) if a == "--bind"]
    assert len(binds) == 2 and all(i > tmpfs for i in binds)
    assert argv[binds[0] + 1] == argv[binds[0] + 2] == str(ws.resolve())
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv[-3:] == ["--", "python", "x.py"]


def test_bwrap_argv_keeps_network_when_allowed() -> None:
    argv = bwrap_argv("bwrap", ["true"], workspace=None, scratch=None, network=True)
    assert "--unshare-net" not in argv and "--bind" not in argv


def test_off_never_wraps_and_never_probes() -> None:
    def explode() -> ProbeResult:
        raise AssertionError("probe must not run in mode off")

    box = Sandbox(settings("off"), probe=explode)
    wrapped = box.wrap(["echo", "hi"], workspace=None, scratch=None)
    assert wrapped.argv == ["echo", "hi"] and not wrapped.sandboxed and wrapped.warning is None


def test_auto_without_bwrap_falls_back_with_one_warning() -> None:
    box = Sandbox(settings("auto"), probe=lambda: UNAVAILABLE)
    first = box.wrap(["echo"], workspace=None, scratch=None)
    second = box.wrap(["echo"], workspace=None, scratch=None)
    assert first.argv == ["echo"] and not first.sandboxed
    assert first.warning is not None and "not installed" in first.warning
    assert second.warning is None


def test_required_without_bwrap_refuses() -> None:
    box = Sandbox(settings("required"), probe=lambda: UNAVAILABLE)
    with pytest.raises(SandboxError, match="required"):
        box.wrap(["echo"], workspace=None, scratch=None)


def test_required_refuses_when_bwrap_is_not_on_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no bwrap
    assert not probe_sandbox().available
    with pytest.raises(SandboxError, match="not installed"):
        wrap_argv(
            ["true"], workspace=None, scratch=None, network=None, settings=settings("required")
        )


def test_auto_wraps_with_available_probe_and_respects_network_setting(tmp_path: Path) -> None:
    box = Sandbox(settings("auto", network=True), probe=lambda: AVAILABLE)
    wrapped = box.wrap(["echo"], workspace=tmp_path, scratch=None)
    assert wrapped.sandboxed and wrapped.argv[0] == "/usr/bin/bwrap"
    assert "--unshare-net" not in wrapped.argv
    assert "--unshare-net" in box.wrap(["echo"], workspace=None, scratch=None, network=False).argv


def test_probe_runs_once_per_sandbox() -> None:
    calls: list[int] = []

    def probe() -> ProbeResult:
        calls.append(1)
        return AVAILABLE

    box = Sandbox(settings("auto"), probe=probe)
    for _ in range(3):
        box.wrap(["x"], workspace=None, scratch=None)
    assert calls == [1]


def test_for_state_shares_one_sandbox_per_session() -> None:
    state: dict[str, object] = {}
    a = Sandbox.for_state(state, Settings())
    assert Sandbox.for_state(state, Settings()) is a


def test_probe_reports_a_broken_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    result = probe_sandbox()
    assert not result.available
    assert "cannot create a sandbox" in result.reason and "namespace" in result.reason


# ---- real isolation (needs a working bubblewrap) ---------------------------------------


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


@needs_bwrap
def test_script_cannot_write_outside_workspace(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    code = (
        "import pathlib, sys\n"
        f"pathlib.Path({str(ws / 'ok.txt')!r}).write_text('in')\n"
        "try:\n"
        f"    pathlib.Path({str(outside / 'bad.txt')!r}).write_text('out')\n"
        "except OSError as e:\n"
        "    print('refused', e.errno)\n"
        "pathlib.Path('/tmp/private.txt').write_text('tmp')\n"
    )
    argv = wrap_argv(
        [sys.executable, "-c", code],
        workspace=ws,
        scratch=None,
        network=False,
        settings=settings("required"),
    )
    proc = _run(argv)
    assert proc.returncode == 0, proc.stderr
    assert "refused" in proc.stdout
    assert (ws / "ok.txt").read_text() == "in"
    assert not (outside / "bad.txt").exists()
    assert not Path("/tmp/private.txt").exists()  # /tmp inside was a fresh tmpfs


@needs_bwrap
def test_root_cannot_remount_the_filesystem_writable(tmp_path: Path) -> None:
    target = tmp_path / "remounted.txt"
    script = f"mount -o remount,rw / 2>/dev/null; echo x > {target} 2>/dev/null; true"
    argv = wrap_argv(
        ["bash", "-c", script],
        workspace=None,
        scratch=None,
        network=False,
        settings=settings("required"),
    )
    _run(argv)
    assert not target.exists()


@pytest.fixture
def loopback_server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that answers b"pong" (the network guard allows loopback)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.05)
    port = server.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.sendall(b"pong")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield port
    stop.set()
    thread.join(timeout=5)
    server.close()


def _client(port: int) -> list[str]:
    code = (
        "import socket\n"
        "s = socket.socket(); s.settimeout(5)\n"
        "try:\n"
        f"    s.connect(('127.0.0.1', {port})); print(s.recv(4).decode())\n"
        "except OSError as e:\n"
        "    print('blocked', type(e).__name__)\n"
    )
    return [sys.executable, "-c", code]


@needs_bwrap
def test_script_cannot_reach_the_network(loopback_server: int) -> None:
    argv = wrap_argv(
        _client(loopback_server),
        workspace=None,
        scratch=None,
        network=False,
        settings=settings("required"),
    )
    proc = _run(argv)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("blocked")


@needs_bwrap
def test_network_allowed_reaches_the_host(loopback_server: int) -> None:
    argv = wrap_argv(
        _client(loopback_server),
        workspace=None,
        scratch=None,
        network=True,
        settings=settings("required"),
    )
    proc = _run(argv)
    assert proc.stdout.strip() == "pong", proc.stderr


def test_readonly_paths_are_mounted_after_tmp_and_before_writable(tmp_path: Path) -> None:
    skill_dir = tmp_path / "skill"
    argv = bwrap_argv(
        "bwrap", ["x"], workspace=tmp_path, scratch=None, network=False, readonly=[skill_dir]
    )
    ro = argv.index(str(skill_dir.resolve()))
    assert argv[ro - 1] == "--ro-bind"
    assert argv.index("--tmpfs") < ro < argv.index("--bind")


def test_wrap_mounts_the_working_directory(tmp_path: Path) -> None:
    box = Sandbox(settings("auto"), probe=lambda: AVAILABLE)
    argv = box.wrap(["x"], workspace=None, scratch=None, cwd=tmp_path).argv
    assert argv[argv.index("--chdir") + 1] == str(tmp_path.resolve())
    assert ["--ro-bind", str(tmp_path.resolve()), str(tmp_path.resolve())] == argv[
        argv.index(str(tmp_path.resolve())) - 1 : argv.index(str(tmp_path.resolve())) + 2
    ]


def test_extra_writable_roots_are_bound(tmp_path: Path) -> None:
    extra = tmp_path / "second-root"
    argv = bwrap_argv(
        "bwrap", ["x"], workspace=tmp_path, scratch=None, network=False, writable=[extra, tmp_path]
    )
    bound = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    assert bound == [str(tmp_path.resolve()), str(extra.resolve())]  # deduplicated, in order


@needs_bwrap
def test_bash_style_wrap_runs_in_its_cwd_and_writes_extra_roots(tmp_path: Path) -> None:
    ws, other = tmp_path / "ws", tmp_path / "other"
    (ws / "sub").mkdir(parents=True)
    other.mkdir()
    argv = wrap_argv(
        ["bash", "-c", f"pwd; echo hi > {other}/note.txt"],
        workspace=ws,
        scratch=None,
        network=None,
        settings=settings("required"),
        cwd=ws / "sub",
        writable=[other],
    )
    proc = _run(argv)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str((ws / "sub").resolve())
    assert (other / "note.txt").read_text() == "hi\n"


def test_interpreter_under_tmp_stays_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    """A venv created under /tmp (as CI checkouts often are) is re-mounted after the
    fresh /tmp, or scripts could not even start their interpreter."""
    monkeypatch.setattr(sys, "prefix", "/tmp/ci/.venv")
    argv = bwrap_argv("bwrap", ["python"], workspace=None, scratch=None, network=False)
    tmpfs = argv.index("/tmp", argv.index("--tmpfs"))
    rebind = argv.index("/tmp/ci/.venv")
    assert argv[rebind - 1] == "--ro-bind" and rebind > tmpfs
