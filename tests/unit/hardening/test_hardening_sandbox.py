"""Issue 15, classes 1, 3 and 8: a prompt-injected model with a Bash tool under the
sandbox (``sandbox.mode = "required"``, skilldeck running as root in CI) tries to
reach host root through sysctls, to talk to host unix sockets, and to rewrite the
files the next run trusts. Every attack goes through the real ``BashTool``.

Host sysctls are never changed: writes use the value already there (or
``drop_caches``, which keeps no state), and the host value is checked afterwards.
"""

from __future__ import annotations

import os
import platform
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from skilldeck.config import SandboxSettings, Settings
from skilldeck.sandbox import probe_sandbox
from skilldeck.tools.base import ToolContext, ToolResult
from skilldeck.tools.bash import BashTool

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not probe_sandbox().available or probe_sandbox().missing != [],
        reason=f"full bubblewrap sandbox not usable here: {probe_sandbox()}",
    ),
]

CORE_PATTERN = Path("/proc/sys/kernel/core_pattern")


def make_ctx(ws: Path, *, network: bool = False, roots: list[Path] | None = None) -> ToolContext:
    settings = Settings(workspace=ws, sandbox=SandboxSettings(mode="required", network=network))
    extra = [r.resolve() for r in roots or []]
    return ToolContext(
        session_id="s",
        workspace=ws.resolve(),
        settings=settings,
        roots=[ws.resolve(), *extra],
    )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


async def bash(ctx: ToolContext, command: str) -> ToolResult:
    return await BashTool().call({"command": command}, ctx)


# ---- class 1: sysctls and other global knobs ---------------------------------------


async def test_sysctl_writes_fail_and_the_host_value_is_unchanged(ws: Path) -> None:
    before = CORE_PATTERN.read_text()
    ctx = make_ctx(ws)
    current = await bash(ctx, f"cat {CORE_PATTERN}")
    assert current.content.strip() == before.strip()  # readable, so the write is a real test
    # the value already there: harmless even if the write went through
    write = await bash(ctx, f'printf "%s\\n" "$(cat {CORE_PATTERN})" > {CORE_PATTERN}')
    assert write.is_error and "Read-only file system" in write.content
    drop = await bash(ctx, "echo 1 > /proc/sys/vm/drop_caches")
    assert drop.is_error and "Read-only file system" in drop.content
    assert CORE_PATTERN.read_text() == before


async def test_the_whole_new_proc_is_read_only(ws: Path) -> None:
    ctx = make_ctx(ws)
    result = await bash(
        ctx, "grep ' /proc ' /proc/self/mountinfo | tail -1; echo x > /proc/self/comm"
    )
    assert result.is_error and "Read-only file system" in result.content
    assert result.content.split()[5].startswith("ro")  # mount options of the sandbox's /proc


async def test_a_nested_user_namespace_cannot_mount_a_writable_proc(ws: Path) -> None:
    before = CORE_PATTERN.read_text()
    ctx = make_ctx(ws)
    attack = (
        "unshare --user --map-root-user --mount --pid --fork --mount-proc "
        f'sh -c \'printf "%s\\n" "$(cat {CORE_PATTERN})" > {CORE_PATTERN}\' && echo ESCAPED'
    )
    result = await bash(ctx, attack)
    assert result.is_error and "ESCAPED" not in result.content
    assert CORE_PATTERN.read_text() == before


async def test_no_capability_and_no_host_keyring(ws: Path) -> None:
    ctx = make_ctx(ws)
    caps = await bash(ctx, "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status")
    assert all(line.split()[1] == "0000000000000000" for line in caps.content.splitlines())
    keyctl = {"x86_64": 250, "aarch64": 219}.get(platform.machine(), 250)
    code = (
        "import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
        f"print(libc.syscall({keyctl}, 0, -3, 0), ctypes.get_errno())"
    )
    keys = await bash(ctx, f'python3 -c "{code}"')  # keyctl(GET_KEYRING_ID, user keyring)
    assert keys.content.split() == ["-1", "1"], keys.content  # EPERM


# ---- class 8: unix sockets ------------------------------------------------------------


@pytest.fixture
def unix_servers(ws: Path) -> Iterator[list[str]]:
    """Listening unix sockets in the workspace, outside it on the host filesystem
    (where docker's or D-Bus's would be), and in the abstract namespace."""
    outside = Path(tempfile.mkdtemp(prefix="skilldeck-sock-", dir="/var/tmp"))
    paths = [str(ws / "in.sock"), str(outside / "out.sock")]
    abstract = f"\0skilldeck-test-{os.getpid()}"
    servers = []
    for address in [*paths, abstract]:
        server = socket.socket(socket.AF_UNIX)
        server.bind(address)
        server.listen()
        servers.append(server)
    stop = threading.Event()

    def serve(server: socket.socket) -> None:
        server.settimeout(0.05)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.sendall(b"pong")

    threads = [threading.Thread(target=serve, args=(s,), daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    yield [*paths, "@" + abstract[1:]]
    stop.set()
    for thread in threads:
        thread.join(timeout=5)
    for server in servers:
        server.close()
    shutil.rmtree(outside, ignore_errors=True)


def _client(address: str) -> str:
    target = repr("\0" + address[1:]) if address.startswith("@") else repr(address)
    return (
        'python3 -c "import socket\n'
        "try:\n"
        "    s = socket.socket(socket.AF_UNIX); s.settimeout(5)\n"
        f"    s.connect({target}); print(s.recv(4).decode())\n"
        "except OSError as e:\n"
        "    print('blocked', e.errno)\""
    )


@pytest.mark.parametrize("network", [False, True])
async def test_host_unix_sockets_are_unreachable(
    ws: Path, unix_servers: list[str], network: bool
) -> None:
    for address in unix_servers:
        # the same client reaches the server outside the sandbox (the attack is real)
        plain = subprocess.run(
            ["bash", "-c", _client(address)], capture_output=True, text=True, check=False
        )
        assert plain.stdout.strip() == "pong", plain.stderr
        result = await bash(make_ctx(ws, network=network), _client(address))
        assert result.content.strip() == "blocked 1", (address, result.content)  # EPERM


async def test_ordinary_commands_and_socketpairs_still_work(ws: Path) -> None:
    ctx = make_ctx(ws)
    code = "import socket; a, b = socket.socketpair(); a.send(b'ok'); print(b.recv(2).decode())"
    result = await bash(ctx, f'echo hi > f.txt && cat f.txt && python3 -c "{code}" && ls | wc -l')
    assert not result.is_error, result.content
    assert result.content.split() == ["hi", "ok", "1"]


# ---- class 3 (sandbox half): control files -------------------------------------------


def _control_tree(root: Path) -> None:
    (root / ".skilldeck").mkdir()
    (root / ".skilldeck" / "config.toml").write_text('[sandbox]\nmode = "required"\n')
    (root / ".claude" / "skills" / "x").mkdir(parents=True)
    (root / ".agents").mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)


ATTACKS = [
    "echo '[sandbox]' > .skilldeck/config.toml",
    "printf 'mode = \"off\"\\n' >> .skilldeck/config.toml",
    "rm -rf .claude",
    "mv .skilldeck moved",
    "mkdir -p .claude/skills/evil && echo x > .claude/skills/evil/skill.py",
    "touch .agents/planted",
    "git config core.fsmonitor 'touch PWNED'",
    "echo 'touch PWNED' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
    "rm -rf .git/hooks",
    "mv .git/config .git/config.bak",
]


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>"
        for base in (".skilldeck", ".claude", ".agents", ".git/config", ".git/hooks")
        for p in [root / base, *sorted((root / base).rglob("*"))]
        if p.exists()
    }


@pytest.mark.parametrize("attack", ATTACKS)
async def test_control_files_are_read_only_in_every_writable_root(
    tmp_path: Path, ws: Path, attack: str
) -> None:
    extra = tmp_path / "extra-root"
    extra.mkdir()
    for root in (ws, extra):
        _control_tree(root)
    before = {root: _snapshot(root) for root in (ws, extra)}
    ctx = make_ctx(ws, roots=[extra])
    for root in (ws, extra):
        result = await bash(ctx, f"cd {root} && {attack}")
        assert result.is_error, (attack, result.content)
        assert _snapshot(root) == before[root], attack
    ok = await bash(ctx, "echo work > notes.txt && git add notes.txt && git status --short")
    assert not ok.is_error and "notes.txt" in ok.content  # the rest stays writable


async def test_a_nested_repository_is_protected_too(ws: Path) -> None:
    repo = ws / "project"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    before = (repo / ".git" / "config").read_bytes()
    result = await bash(make_ctx(ws), "cd project && git config core.fsmonitor 'touch PWNED'")
    assert result.is_error
    assert (repo / ".git" / "config").read_bytes() == before
