"""What the sandbox promises and says: ``auto`` names a missing guarantee (user
namespace, seccomp) once and still wraps; ``required`` refuses; the probe finds the
parts that work; the seccomp program is well formed for the architectures it knows
and refuses to guess for the others; control paths are re-bound read-only."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from skilldeck import _seccomp, sandbox
from skilldeck._sandbox_protect import protected_paths
from skilldeck._seccomp import filter_program
from skilldeck.config import SandboxSettings
from skilldeck.errors import SandboxError
from skilldeck.sandbox import ProbeResult, Sandbox, bwrap_argv, probe_sandbox

FULL = ProbeResult(True, "works", "/usr/bin/bwrap", userns=True, seccomp=True)
NO_USERNS = ProbeResult(True, "works", "/usr/bin/bwrap", userns=False, seccomp=True)
NO_SECCOMP = ProbeResult(True, "works", "/usr/bin/bwrap", userns=True, seccomp=False)
REAL = probe_sandbox()


def box(mode: str, probe: ProbeResult) -> Sandbox:
    return Sandbox(SandboxSettings(mode=mode), probe=lambda: probe)  # type: ignore[arg-type]


def test_full_guarantees_wrap_with_userns_and_the_seccomp_launcher() -> None:
    wrapped = box("required", FULL).wrap(["true"], workspace=None, scratch=None)
    assert wrapped.sandboxed and wrapped.warning is None
    assert wrapped.argv[:3] == [sys.executable, "-I", "-S"]
    bwrap_at = wrapped.argv.index("/usr/bin/bwrap")
    options = wrapped.argv[bwrap_at:]
    assert "--unshare-user" in options and "--disable-userns" in options
    assert options[options.index("--remount-ro") + 1] == "/proc"


@pytest.mark.parametrize(
    ("probe", "named"), [(NO_USERNS, "user namespace"), (NO_SECCOMP, "seccomp")]
)
def test_auto_names_what_is_missing_once_and_required_refuses(
    probe: ProbeResult, named: str
) -> None:
    auto = box("auto", probe)
    first = auto.wrap(["true"], workspace=None, scratch=None)
    assert first.sandboxed and first.warning is not None and named in first.warning
    assert auto.wrap(["true"], workspace=None, scratch=None).warning is None
    with pytest.raises(SandboxError, match=named):
        box("required", probe).wrap(["true"], workspace=None, scratch=None)


def test_a_probe_without_feature_flags_claims_nothing() -> None:
    legacy = ProbeResult(True, "works", "/usr/bin/bwrap")
    assert len(legacy.missing) == 2
    with pytest.raises(SandboxError, match="every guarantee"):
        box("required", legacy).wrap(["true"], workspace=None, scratch=None)


def test_an_unknown_architecture_has_no_filter_and_the_probe_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert filter_program("riscv64") is None and filter_program("i686") is None
    if not REAL.available:
        pytest.skip(f"bubblewrap not usable here: {REAL.reason}")
    monkeypatch.setattr(_seccomp.platform, "machine", lambda: "riscv64")
    sandbox._probe_binary.cache_clear()
    try:
        result = probe_sandbox()
        assert result.available and not result.seccomp
        assert any("seccomp" in gap for gap in result.missing)
    finally:
        sandbox._probe_binary.cache_clear()


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_is_well_formed(machine: str) -> None:
    program = filter_program(machine)
    assert program is not None and len(program) % 8 == 0
    insns = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    assert insns[0] == (0x20, 0, 0, 4)  # load the architecture first
    assert insns[-1][3] == 0x80000000  # the foreign-arch path kills
    for pc, (code, jt, jf, _k) in enumerate(insns):
        if code & 0x07 == 0x05:  # a jump stays inside the program
            assert pc + 1 + max(jt, jf) < len(insns)


@pytest.mark.skipif(not REAL.available or not REAL.seccomp, reason="seccomp sandbox not usable")
def test_the_real_probe_finds_every_part_here() -> None:
    assert REAL.userns and REAL.seccomp and REAL.missing == []


@pytest.mark.skipif(not REAL.available or not REAL.seccomp, reason="seccomp sandbox not usable")
def test_a_sandboxed_script_cannot_open_a_unix_socket(tmp_path: Path) -> None:
    code = (
        "import socket\ntry:\n    socket.socket(socket.AF_UNIX)\n    print('open')\n"
        "except PermissionError:\n    print('refused')\n"
    )
    argv = box("required", REAL).wrap(
        [sys.executable, "-c", code], workspace=tmp_path, scratch=None
    )
    proc = subprocess.run(argv.argv, capture_output=True, text=True, timeout=60, check=False)
    assert proc.stdout.strip() == "refused", proc.stderr


def test_control_paths_are_rebound_read_only_after_the_writable_binds(tmp_path: Path) -> None:
    ws, extra = tmp_path / "ws", tmp_path / "extra"
    for root in (ws, extra):
        (root / ".skilldeck").mkdir(parents=True)
        (root / ".git" / "hooks").mkdir(parents=True)
        (root / ".git" / "config").write_text("")
    (ws / "repo" / ".git").mkdir(parents=True)
    (ws / "repo" / ".git" / "config").write_text("")
    (ws / "wt").mkdir()
    (ws / "wt" / ".git").write_text("gitdir: /elsewhere\n")  # a worktree's pointer file
    argv = bwrap_argv("bwrap", ["x"], workspace=ws, scratch=None, network=False, writable=[extra])
    last_bind = max(i for i, a in enumerate(argv) if a == "--bind")
    guarded = [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind-try"]
    assert all(i > last_bind for i, a in enumerate(argv) if a == "--ro-bind-try")
    for root in (ws.resolve(), extra.resolve()):
        for name in (".skilldeck", ".git/config", ".git/hooks"):
            assert str(root / name) in guarded
    assert str(ws.resolve() / "repo/.git/config") in guarded
    assert str(ws.resolve() / "wt/.git") in guarded
    assert str(ws.resolve() / ".claude") not in guarded  # missing: nothing created on the host
    assert not (ws / ".claude").exists()


def test_a_home_inside_a_writable_root_keeps_its_dotfiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".bashrc").write_text("")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SKILLDECK_HOME", raising=False)
    guarded = protected_paths([tmp_path])
    assert str(home.resolve() / ".ssh") in guarded and str(home.resolve() / ".bashrc") in guarded
