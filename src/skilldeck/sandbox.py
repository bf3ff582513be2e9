"""Run skill scripts and shell commands under bubblewrap when it is there.

The sandbox is a prefix to an argv, not a process manager: :func:`wrap_argv` turns
``[python, script.py, args]`` into ``[bwrap, …options…, --, python, script.py, args]``
(behind a tiny launcher that hands bwrap the seccomp filter on a pipe) and whoever
spawns the process (the script runner, the ``Bash`` tool) keeps its own timeout,
output caps and process-group handling. Inside:

* the whole filesystem is mounted read-only (``--ro-bind / /``), with a fresh
  ``/tmp`` (``--tmpfs /tmp``), a minimal ``/dev`` and a new ``/proc`` that is itself
  **read-only** (``--remount-ro /proc``): ``/proc/sys`` (``core_pattern``,
  ``drop_caches``…), ``/proc/sysrq-trigger`` and the other global knobs are checked
  on the host uid, so a root sandbox could otherwise reconfigure the host;
* the workspace and a per-run scratch directory are the only writable places
  (``--bind``), mounted *after* ``/tmp`` so a workspace under ``/tmp`` still works;
  their control files (``.skilldeck/``, ``.claude/``, ``.agents/``, ``.git/config``,
  ``.git/hooks/``…, see :mod:`skilldeck._sandbox_protect`) are re-bound read-only;
* a user namespace (``--unshare-user``) with nested user namespaces disabled
  (``--disable-userns``): no capability the sandbox holds counts on the host, and it
  cannot build a namespace of its own to mount things in;
* a seccomp filter (:mod:`skilldeck._seccomp`): no ``AF_UNIX`` sockets (host
  sockets such as docker's or D-Bus are reachable through a read-only mount
  otherwise), no io_uring, no kernel keyrings, no foreign syscall ABI;
* no network (``--unshare-net``) unless the caller allows it;
* a new PID namespace and session, and ``--die-with-parent``: nothing the script
  starts can outlive the run or inject keystrokes into the terminal;
* every capability dropped (``--cap-drop ALL``), so even when skilldeck runs as
  root the script cannot remount ``/`` read-write.

bubblewrap keeps the caller's uid: run as root, the sandboxed process is still uid 0
to the kernel (mapping it to another uid would make the root-owned workspace
unwritable). The read-only mounts, the dropped capabilities, the seccomp filter and
the disabled nested namespaces are what stop it, not the uid.

``settings.sandbox.mode``: ``off`` never wraps; ``auto`` wraps when bubblewrap works
and otherwise runs unwrapped with **one** warning per session (returned, never
printed: the caller decides how to show it) — and when bubblewrap works but the
user namespace or the seccomp filter does not, it wraps with what works and the one
warning names what is missing; ``required`` raises
:class:`~skilldeck.errors.SandboxError` unless every guarantee above holds.

"Installed" is not "works": in a container without user namespaces ``bwrap`` exists
but fails at once. So availability is *probed* by running a trivial command through
the real option set (then with parts left out, to name what is missing), and the
probe is cached per ``bwrap`` path for the process.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from skilldeck._sandbox_protect import protected_paths, skilldeck_home
from skilldeck._seccomp import filter_program, launcher_argv
from skilldeck.config import SandboxSettings, Settings
from skilldeck.errors import SandboxError

__all__ = [
    "Probe",
    "ProbeResult",
    "Sandbox",
    "WrappedCommand",
    "bwrap_argv",
    "probe_sandbox",
    "wrap_argv",
]

_PROBE_TIMEOUT = 15.0
_USERNS_FLAGS = ("--unshare-user", "--disable-userns")


@dataclass(frozen=True)
class ProbeResult:
    """Whether the sandbox can be used here; ``reason`` says why not (or what works).

    ``userns`` and ``seccomp`` say whether those parts work too; a result built
    without them (a test double, an old caller) claims neither, so the sandbox
    reports them as missing rather than assuming them.
    """

    available: bool
    reason: str
    bwrap: str | None = None
    userns: bool = False
    seccomp: bool = False

    @property
    def missing(self) -> list[str]:
        """The guarantees this machine cannot give, in words for a warning."""
        gaps = []
        if not self.userns:
            gaps.append(
                "a user namespace (`bwrap --unshare-user --disable-userns` does not work "
                "here), so the sandboxed process keeps your uid's identity without one and "
                "nested namespaces are not disabled"
            )
        if not self.seccomp:
            gaps.append(
                "the seccomp filter (unsupported architecture, or `bwrap --seccomp` does "
                "not work here), so unix sockets on the host (docker, D-Bus, ssh-agent) "
                "stay reachable"
            )
        return gaps


Probe = Callable[[], ProbeResult]


@dataclass(frozen=True)
class WrappedCommand:
    """An argv ready to spawn, whether it is sandboxed, and a warning to show once."""

    argv: list[str]
    sandboxed: bool
    warning: str | None = None


def bwrap_argv(
    bwrap: str,
    argv: Sequence[str],
    *,
    workspace: Path | None,
    scratch: Path | None,
    network: bool,
    cwd: Path | None = None,
    readonly: Sequence[Path] = (),
    writable: Sequence[Path] = (),
    userns: bool = False,
) -> list[str]:
    """The bubblewrap command line for ``argv`` (no probing; looks only at which
    control paths exist under the writable roots).

    ``readonly`` paths (the skill folder, typically) are mounted again after the
    fresh ``/tmp``, so a skill living under ``/tmp`` stays visible; the writable
    binds (workspace, scratch, then ``writable`` — e.g. extra workspace roots) come
    next, so a skill folder inside the workspace stays writable; the control paths
    of the workspace and the extra roots come last, read-only. ``userns`` adds a
    user namespace with nested ones disabled (only when the probe found it works).
    """
    out = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    # the new /proc is writable by default, and sysctls check the host uid: root in
    # the sandbox could set kernel.core_pattern and have the host run a command
    out += ["--remount-ro", "/proc", "--tmpfs", "/tmp"]
    for extra in dict.fromkeys(str(Path(p).resolve()) for p in [*_interpreter_dirs(), *readonly]):
        out += ["--ro-bind", extra, extra]
    binds = [p for p in (workspace, scratch, *writable) if p is not None]
    for bind in dict.fromkeys(str(Path(p).resolve()) for p in binds):
        out += ["--bind", bind, bind]
    guarded = [p for p in (workspace, *writable) if p is not None]
    for path in protected_paths(guarded):
        out += ["--ro-bind-try", path, path]
    out += _hide_secrets()
    if userns:
        out += list(_USERNS_FLAGS)
    if not network:
        out.append("--unshare-net")
    out += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--new-session"]
    # without this, a script run by root keeps CAP_SYS_ADMIN and can simply remount
    # the read-only root filesystem read-write
    out += ["--cap-drop", "ALL", "--die-with-parent"]
    if cwd is not None:
        out += ["--chdir", str(Path(cwd).resolve())]
    out.append("--")
    out.extend(argv)
    return out


def _hide_secrets() -> list[str]:
    """An empty tmpfs over ``<skilldeck home>/secrets`` (the 0600 file store of the
    credentials skills declare, ``skills/execution/secrets.py``): a sandboxed process
    gets the credentials its skill declared in its environment, never the store."""
    folder = Path(os.path.realpath(skilldeck_home() / "secrets"))
    return ["--tmpfs", str(folder)] if folder.is_dir() else []


def _with_seccomp(command: list[str]) -> list[str]:
    """``command`` (a bwrap argv) behind the launcher that passes the filter; the
    probe only reports ``seccomp`` when :func:`filter_program` knows this machine."""
    program = filter_program()
    if program is None or not sys.executable:
        raise SandboxError(
            "The seccomp filter is not available on this machine "
            f'({os.uname().machine}); set sandbox.mode = "auto" to run without it.'
        )
    return launcher_argv(sys.executable, program, command)


def _interpreter_dirs() -> list[Path]:
    """The running Python's installation (and its venv) when the fresh ``/tmp`` would
    hide it: scripts run with ``sys.executable``, and a virtual environment created
    under ``/tmp`` (CI checkouts often are) must stay visible inside the sandbox."""
    tmp = Path("/tmp").resolve()
    found = []
    for place in (sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))):
        path = Path(place).resolve()
        if path == tmp or tmp in path.parents:
            found.append(path)
    return found


def probe_sandbox() -> ProbeResult:
    """Find ``bwrap`` on ``PATH`` and check that it really runs a command here."""
    if not sys.platform.startswith("linux"):
        return ProbeResult(False, f"bubblewrap is Linux-only (this is {sys.platform})")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return ProbeResult(False, "bubblewrap (`bwrap`) is not installed or not on PATH")
    return _probe_binary(bwrap)


def _try(argv: list[str]) -> str | None:
    """Run a probe command; None when it worked, else the last line it complained."""
    try:
        proc = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"could not be started ({e})"
    if proc.returncode == 0:
        return None
    detail = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
    return detail[-1] if detail else f"exit code {proc.returncode}"


@functools.lru_cache(maxsize=8)
def _probe_binary(bwrap: str) -> ProbeResult:
    """Run ``true`` through the exact options commands get; cached per binary path.
    The full set first (one run when everything works), then without the user
    namespace and the seccomp filter, to tell which part is missing."""
    true = shutil.which("true") or "/bin/true"

    def argv(userns: bool) -> list[str]:
        return bwrap_argv(bwrap, [true], workspace=None, scratch=None, network=False, userns=userns)

    can_filter = filter_program() is not None and bool(sys.executable)
    if can_filter and _try(_with_seccomp(argv(True))) is None:
        return ProbeResult(True, f"bubblewrap works ({bwrap})", bwrap, userns=True, seccomp=True)
    why = _try(argv(False))
    if why is not None:
        return ProbeResult(
            False,
            f"`{bwrap}` is installed but cannot create a sandbox here ({why}); "
            "user namespaces are probably disabled",
            bwrap,
        )
    userns = _try(argv(True)) is None
    seccomp = can_filter and _try(_with_seccomp(argv(False))) is None
    return ProbeResult(True, f"bubblewrap works ({bwrap})", bwrap, userns=userns, seccomp=seccomp)


def _sandbox_settings(settings: Settings | SandboxSettings) -> SandboxSettings:
    return settings.sandbox if isinstance(settings, Settings) else settings


class Sandbox:
    """The sandbox decision for one session: mode, probe, and the one-time warning.

    Keep one instance per session (the script runner and the ``Bash`` tool share it
    through ``ToolContext.state``, see :meth:`for_state`) so the ``auto`` fallback
    warning is given once, not on every command.
    """

    STATE_KEY = "sandbox"

    def __init__(self, settings: Settings | SandboxSettings, *, probe: Probe | None = None) -> None:
        self.settings = _sandbox_settings(settings)
        self._probe = probe or probe_sandbox
        self._result: ProbeResult | None = None
        self._warned = False

    @classmethod
    def for_state(cls, state: dict[str, object], settings: Settings | SandboxSettings) -> Sandbox:
        """The session's Sandbox, kept in a per-session state mapping."""
        existing = state.get(cls.STATE_KEY)
        if isinstance(existing, Sandbox):
            return existing
        created = cls(settings)
        state[cls.STATE_KEY] = created
        return created

    @property
    def mode(self) -> str:
        return self.settings.mode

    def probe(self) -> ProbeResult:
        if self._result is None:
            self._result = self._probe()
        return self._result

    @property
    def active(self) -> bool:
        """Whether commands will actually be wrapped (mode allows and bwrap works)."""
        return self.mode != "off" and self.probe().available

    def wrap(
        self,
        argv: Sequence[str],
        *,
        workspace: Path | None,
        scratch: Path | None,
        network: bool | None = None,
        cwd: Path | None = None,
        readonly: Sequence[Path] = (),
        writable: Sequence[Path] = (),
    ) -> WrappedCommand:
        """Wrap ``argv`` according to the mode; raise SandboxError when ``required``
        cannot be met. ``network=None`` takes ``settings.sandbox.network``; ``cwd`` is
        also mounted (read-only) so it exists inside."""
        if self.mode == "off":
            return WrappedCommand(list(argv), sandboxed=False)
        result = self.probe()
        if not result.available:
            if self.mode == "required":
                raise SandboxError(
                    f'The sandbox is required (sandbox.mode = "required") but {result.reason}. '
                    "Install bubblewrap (e.g. `apt-get install bubblewrap`) or set "
                    'sandbox.mode = "auto".'
                )
            return WrappedCommand(list(argv), sandboxed=False, warning=self._warning_once(result))
        if result.missing and self.mode == "required":
            raise SandboxError(
                'The sandbox is required (sandbox.mode = "required") but it cannot give '
                f"every guarantee here: missing {'; and '.join(result.missing)}. Use a kernel "
                "and bubblewrap (>= 0.8) with unprivileged user namespaces and seccomp, or set "
                'sandbox.mode = "auto" to run with what works.'
            )
        allow_net = self.settings.network if network is None else network
        wrapped = bwrap_argv(
            result.bwrap or "bwrap",
            argv,
            workspace=workspace,
            scratch=scratch,
            network=allow_net,
            cwd=cwd,
            readonly=[*readonly, *([cwd] if cwd is not None else [])],
            writable=writable,
            userns=result.userns,
        )
        if result.seccomp:
            wrapped = _with_seccomp(wrapped)
        warning = self._warning_once(result) if result.missing else None
        return WrappedCommand(wrapped, sandboxed=True, warning=warning)

    def _warning_once(self, result: ProbeResult) -> str | None:
        if self._warned:
            return None
        self._warned = True
        if result.available:
            gaps = "; and without ".join(result.missing)
            return (
                f"The sandbox is partial here: it runs without {gaps}. "
                'Set sandbox.mode = "required" to refuse to run commands instead.'
            )
        return (
            f"Running without a sandbox: {result.reason}. Scripts and shell commands have "
            "the same access as skilldeck itself. Install bubblewrap to isolate them, or set "
            'sandbox.mode = "off" to silence this warning.'
        )


def wrap_argv(
    argv: Sequence[str],
    *,
    workspace: Path | None,
    scratch: Path | None,
    network: bool | None,
    settings: Settings | SandboxSettings,
    probe: Probe | None = None,
    cwd: Path | None = None,
    writable: Sequence[Path] = (),
) -> list[str]:
    """Stateless form of :meth:`Sandbox.wrap` returning only the argv — the ``Bash``
    tool's seam: ``wrap_argv(_build_argv(cmd, ctx), workspace=ctx.workspace,
    scratch=None, network=None, settings=ctx.settings, cwd=cwd, writable=ctx.roots)``.

    Use a :class:`Sandbox` (``Sandbox.for_state(ctx.state, settings)``) instead when
    the ``auto`` fallback warning must be shown once per session.
    """
    box = Sandbox(settings, probe=probe)
    wrapped = box.wrap(
        argv, workspace=workspace, scratch=scratch, network=network, cwd=cwd, writable=writable
    )
    return wrapped.argv
