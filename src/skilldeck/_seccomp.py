"""The seccomp filter the sandbox hands to bubblewrap (``bwrap --seccomp FD``).

Namespaces do not cover everything: a unix socket on the host filesystem (docker,
D-Bus, ssh-agent) is reachable from inside ``bwrap`` even with ``--unshare-net``,
because ``connect()`` on a socket file ignores read-only mounts. So, as Claude Code's
sandbox runtime does, sandboxed processes may not *create* ``AF_UNIX`` sockets at all
(``socketpair`` stays allowed: it connects nothing outside). The filter also refuses:

* ``io_uring`` — its ``IORING_OP_SOCKET`` creates sockets without the ``socket``
  syscall, out of seccomp's sight;
* ``keyctl``/``add_key``/``request_key`` — the kernel keyrings are per host uid, so
  a sandbox running as root would otherwise see root's keys;
* new user namespaces (``unshare``/``clone`` with ``CLONE_NEWUSER``; ``clone3``,
  whose flags seccomp cannot read, answers ``ENOSYS`` and libc falls back to
  ``clone``) — a nested user namespace is where privileged mounts would start;
* any syscall of another ABI (x32 on x86-64, or a foreign ``AUDIT_ARCH`` such as
  i386's ``int 0x80`` with its ``socketcall`` multiplexer): the process is killed.

The program is classic BPF, packed here by hand (no libseccomp needed). Only the
architectures listed in :data:`_ARCHES` are supported; elsewhere
:func:`filter_program` returns ``None`` and the sandbox reports the guarantee as
missing rather than pretending.
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

__all__ = ["filter_program", "launcher_argv"]

# classic BPF opcodes (linux/filter.h)
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

# seccomp return actions (linux/seccomp.h)
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_RET_ALLOW = 0x7FFF0000

# offsets in struct seccomp_data: int nr; u32 arch; u64 ip; u64 args[6]
_OFF_NR = 0
_OFF_ARCH = 4
_OFF_ARG0_LOW = 16  # little-endian: the low 32 bits of args[0]

_AF_UNIX = 1
_CLONE_NEWUSER = 0x10000000
_X32_SYSCALL_BIT = 0x40000000


_Insn = tuple[int, int, str | None, str | None]
_Row = _Insn | str


@dataclass(frozen=True)
class _Arch:
    audit: int
    socket: int
    clone: int
    unshare: int
    errno_calls: tuple[int, ...]  # io_uring_setup/enter/register, add_key, request_key, keyctl
    clone3: int = 435
    x32: bool = False


_ARCHES = {
    "x86_64": _Arch(0xC000003E, 41, 56, 272, (425, 426, 427, 248, 249, 250), x32=True),
    "amd64": _Arch(0xC000003E, 41, 56, 272, (425, 426, 427, 248, 249, 250), x32=True),
    "aarch64": _Arch(0xC00000B7, 198, 220, 97, (425, 426, 427, 217, 218, 219)),
    "arm64": _Arch(0xC00000B7, 198, 220, 97, (425, 426, 427, 217, 218, 219)),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _program(arch: _Arch) -> list[_Row]:
    """The filter as (opcode, k, jump-if-true label, jump-if-false label) rows and
    label strings; labels are resolved to relative offsets by :func:`_assemble`."""
    eperm = _RET_ERRNO | errno.EPERM
    rows: list[_Row] = [
        (_LD_W_ABS, _OFF_ARCH, None, None),
        (_JEQ_K, arch.audit, None, "kill"),
        (_LD_W_ABS, _OFF_NR, None, None),
    ]
    if arch.x32:
        rows.append((_JGE_K, _X32_SYSCALL_BIT, "kill", None))
    rows += [
        (_JEQ_K, arch.socket, "socket", None),
        (_JEQ_K, arch.clone, "newuser", None),
        (_JEQ_K, arch.unshare, "newuser", None),
        (_JEQ_K, arch.clone3, "enosys", None),
    ]
    rows += [(_JEQ_K, nr, "eperm", None) for nr in arch.errno_calls]
    rows += [
        (_RET_K, _RET_ALLOW, None, None),
        "socket",
        (_LD_W_ABS, _OFF_ARG0_LOW, None, None),
        (_JEQ_K, _AF_UNIX, "eperm", "allow"),
        "newuser",
        (_LD_W_ABS, _OFF_ARG0_LOW, None, None),
        (_JSET_K, _CLONE_NEWUSER, "eperm", "allow"),
        "eperm",
        (_RET_K, eperm, None, None),
        "enosys",
        (_RET_K, _RET_ERRNO | errno.ENOSYS, None, None),
        "allow",
        (_RET_K, _RET_ALLOW, None, None),
        "kill",
        (_RET_K, _RET_KILL_PROCESS, None, None),
    ]
    return rows


def _assemble(rows: list[_Row]) -> bytes:
    """Pack rows into ``struct sock_filter``s; a string row is a label naming the
    next instruction."""
    labels: dict[str, int] = {}
    code: list[_Insn] = []
    for row in rows:
        if isinstance(row, str):
            labels[row] = len(code)
        else:
            code.append(row)
    out = bytearray()
    for pc, (op, k, jt, jf) in enumerate(code):
        t = labels[jt] - pc - 1 if jt else 0
        f = labels[jf] - pc - 1 if jf else 0
        if not (0 <= t <= 255 and 0 <= f <= 255):
            raise ValueError(f"seccomp jump out of range at instruction {pc}")
        out += _insn(op, k, t, f)
    return bytes(out)


def filter_program(machine: str | None = None) -> bytes | None:
    """The packed filter for ``machine`` (default: this one), or None when the
    architecture is not one the filter knows (the caller reports the gap)."""
    arch = _ARCHES.get((machine or platform.machine()).lower())
    return None if arch is None else _assemble(_program(arch))


# Runs outside the sandbox, just before bwrap: hands the filter over on a pipe, the
# only way bwrap accepts one (``--seccomp FD``), while callers keep spawning a plain argv.
_LAUNCHER = (
    "import os,sys\n"
    "r,w=os.pipe()\n"
    "os.write(w,bytes.fromhex(sys.argv[1]))\n"
    "os.close(w)\n"
    "os.set_inheritable(r,True)\n"
    "os.execv(sys.argv[2],[sys.argv[2],'--seccomp',str(r)]+sys.argv[3:])\n"
)


def launcher_argv(python: str, program: bytes, bwrap_command: list[str]) -> list[str]:
    """``bwrap_command`` (``[bwrap, options…]``) prefixed by a tiny isolated Python
    (``-I -S``: no environment, no site) that passes ``program`` to it as
    ``--seccomp FD``. The pipe holds the whole filter (far below the pipe buffer)."""
    return [python, "-I", "-S", "-c", _LAUNCHER, program.hex(), *bwrap_command]
