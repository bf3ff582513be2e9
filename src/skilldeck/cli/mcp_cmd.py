"""``skilldeck mcp serve``: expose the skill catalog to MCP clients (Claude Desktop, Cursor…).

Thin: discover skills, build :class:`skilldeck.mcp.server.SkillMCPServer`, run it on
stdio (what desktop clients launch) or streamable HTTP. Logs go to stderr only:
stdout belongs to the protocol.
"""

from __future__ import annotations

import logging
import os
import socket
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import anyio
import typer
from mcp.server.transport_security import TransportSecuritySettings

from skilldeck.cli.common import NoDefaultsOption, RootOption, fail
from skilldeck.cli.workspace import settings_for_roots
from skilldeck.mcp.server import build_server
from skilldeck.skills.registry import SkillRegistry
from skilldeck.web.security import is_loopback


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


def serve_cmd(
    root: RootOption = None,
    no_defaults: NoDefaultsOption = False,
    transport: Annotated[
        Transport, typer.Option("--transport", help="stdio (default) or streamable HTTP.")
    ] = Transport.stdio,
    host: Annotated[
        str, typer.Option("--host", help="HTTP bind address: this machine only (no login).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="HTTP port.")] = 8765,
    allow_scripts: Annotated[
        bool | None,
        typer.Option(
            "--allow-scripts/--no-scripts",
            help="Expose run_skill_script (default: mcp.allow_scripts in config, off).",
        ),
    ] = None,
    poll_interval: Annotated[
        float,
        typer.Option(
            "--poll-interval", min=0, help="Seconds between checks for changed skills (0: off)."
        ),
    ] = 1.0,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Log to stderr.")] = False,
) -> None:
    """Serve skills over MCP: tools list_skills, load_skill, read_skill_resource
    (and run_skill_script when allowed), skill:// resources, and prompts."""
    _check_roots(root or [], no_defaults)
    if transport is Transport.http and not is_loopback(host):
        fail(
            f"--host {host}: the MCP HTTP server has no login, so it listens on this machine "
            "only (127.0.0.1, ::1 or localhost); to serve others, put it behind a proxy "
            "that authenticates.",
            code=2,
        )
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING)
    settings = settings_for_roots(no_defaults)
    registry = SkillRegistry.discover(settings, roots=root or (), no_defaults=no_defaults)
    server = build_server(registry, allow_scripts=allow_scripts, poll_interval=poll_interval)
    if transport is Transport.http:
        _check_listenable(host, port)
        # Host and Origin checked on every loopback spelling (the SDK does it only for
        # 127.0.0.1, localhost and ::1): a web page cannot reach it by DNS rebinding
        names = dict.fromkeys([f"[{host}]" if ":" in host else host, "127.0.0.1", "localhost"])
        guard = TransportSecuritySettings(
            allowed_hosts=[*(f"{n}:*" for n in names), "[::1]:*"],
            allowed_origins=[*(f"http://{n}:*" for n in names), "http://[::1]:*"],
        )
        anyio.run(
            lambda: server.run_streamable_http_async(host=host, port=port, transport_security=guard)
        )
    else:
        anyio.run(server.run_stdio_async)


def _check_roots(roots: list[Path], no_defaults: bool) -> None:
    """A server started on a root it cannot read would serve nothing, silently, to a
    client that cannot tell why: a missing or unreadable ``--root`` is an error."""
    for root in roots:
        if not root.exists():
            fail(f"--root {root}: no such folder.", code=2)
        if not root.is_dir():
            fail(f"--root {root}: not a folder.", code=2)
        if not os.access(root, os.R_OK | os.X_OK):
            fail(f"--root {root}: cannot be read (permission denied).", code=2)
    if no_defaults and not roots:
        fail("--no-defaults needs at least one --root.", code=2)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_cmd)


def _check_listenable(host: str, port: int) -> None:
    """A host that does not resolve or a port in use is one clear line here, not
    uvicorn's bare ``[Errno 98]`` log line after the server has started up."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as e:
        fail(f"--host {host}: cannot be resolved ({getattr(e, 'strerror', None) or e}).", code=2)
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as e:
            fail(f"Cannot listen on {host}:{port}: {e.strerror or e} (try another --port).")
