"""Run skill scripts and shell commands under bubblewrap when it is there.

The sandbox is a prefix to an argv, not a process manager: :func:`wrap_argv` turns
``[python, script.py, args]`` into ``[bwrap, …options…, --, python, script.py, args]``
and whoever spawns the process (the script runner, the ``Bash`` tool) keeps its own
timeout, output caps and process-group handling. Inside:

* the whole filesystem is mounted read-only (``--ro-bind / /``), with a fresh
  ``/tmp`` (``--tmpfs /tmp``), a minimal ``/dev`` and a new ``/proc``;
* the workspace and a per-run scratch directory are the only writable places
  (``--bind``), mounted *after* ``/tmp`` so a workspace under ``/tmp`` still works;
* no network (``--unshare-net``) unless the caller allows it;
* a new PID namespace and session, and ``--die-with-parent``: nothing the script
  starts can outlive the run or inject keystrokes into the terminal;
* every capability dropped (``--cap-drop ALL``), so even when skilldeck runs as
  root the script cannot remount ``/`` read-write.

``settings.sandbox.mode``: ``off`` never wraps; ``auto`` wraps when bubblewrap works
and otherwise runs unwrapped with **one** warning per session (returned, never
printed: the caller decides how to show it); ``required`` raises
:class:`~skilldeck.errors.SandboxError` when bubblewrap cannot be used.

"Installed" is not "works": in a container without user namespaces ``bwrap`` exists
but fails at once. So availability is *probed* by running a trivial command through
the real option set, and the probe is cached per ``bwrap`` path for the process.
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


@dataclass(frozen=True)
class ProbeResult:
    """Whether the sandbox can be used here; ``reason`` says why not (or what works)."""

    available: bool
    reason: str
    bwrap: str | None = None


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
) -> list[str]:
    """The bubblewrap command line for ``argv`` (pure; no probing, no checks).

    ``readonly`` paths (the skill folder, typically) are mounted again after the
    fresh ``/tmp``, so a skill living under ``/tmp`` stays visible; the writable
    binds (workspace, scratch, then ``writable`` — e.g. extra workspace roots) come
    last, so a skill folder inside the workspace stays writable.
    """
    out = [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
    ]
    for extra in dict.fromkeys(str(Path(p).resolve()) for p in [*_interpreter_dirs(), *readonly]):
        out += ["--ro-bind", extra, extra]
    binds = [p for p in (workspace, scratch, *writable) if p is not None]
    for bind in dict.fromkeys(str(Path(p).resolve()) for p in binds):
        out += ["--bind", bind, bind]
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


@functools.lru_cache(maxsize=8)
def _probe_binary(bwrap: str) -> ProbeResult:
    """Run ``true`` through the exact options scripts get; cached per binary path."""
    true = shutil.which("true") or "/bin/true"
    argv = bwrap_argv(bwrap, [true], workspace=None, scratch=None, network=False)
    try:
        proc = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return ProbeResult(False, f"`{bwrap}` could not be started ({e})", bwrap)
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()
        why = detail[-1] if detail else f"exit code {proc.returncode}"
        return ProbeResult(
            False,
            f"`{bwrap}` is installed but cannot create a sandbox here ({why}); "
            "user namespaces are probably disabled",
            bwrap,
        )
    return ProbeResult(True, f"bubblewrap works ({bwrap})", bwrap)


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
        )
        return WrappedCommand(wrapped, sandboxed=True)

    def _warning_once(self, result: ProbeResult) -> str | None:
        if self._warned:
            return None
        self._warned = True
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
