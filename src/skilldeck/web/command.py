"""``skilldeck web``: serve the chat page and the AG-UI endpoint with uvicorn.

Loopback (127.0.0.1) by default, with no token. Binding any other address needs a
token: ``--token`` (or ``SKILLDECK_WEB_TOKEN``), else one is generated and its login
URL printed once. Registered lazily through ``cli/main.py``'s ``_ROOT_COMMANDS``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import sys
import webbrowser
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer
import uvicorn

from skilldeck.cli.common import fail, named_path
from skilldeck.errors import ModelConfigError
from skilldeck.llm.factory import parse_model_spec
from skilldeck.web.app import create_app
from skilldeck.web.security import is_loopback, new_token

__all__ = ["login_url", "register", "web"]

TOKEN_ENV = "SKILLDECK_WEB_TOKEN"
MODES = ("default", "acceptEdits", "plan", "bypassPermissions")


def register(app: typer.Typer) -> None:
    app.command("web", help="Serve the web chat (AG-UI at /agui) on 127.0.0.1:8765.")(web)


def web(
    host: Annotated[
        str, typer.Option("--host", help="Bind address (non-loopback needs a token).")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port (0: any free one).")
    ] = 8765,
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", help="provider:model for new sessions (default: config)."),
    ] = None,
    cwd: Annotated[
        Path | None,
        typer.Option("--cwd", parser=named_path, help="Working directory of new sessions."),
    ] = None,
    permission_mode: Annotated[
        str | None,
        typer.Option("--permission-mode", help="default, acceptEdits, plan or bypassPermissions."),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token", help=f"Require this token (default: ${TOKEN_ENV}; generated off loopback)."
        ),
    ] = None,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the page in a browser.")
    ] = False,
) -> None:
    """Serve the web chat: streaming Markdown, tool and sub-agent cards, approvals."""
    if permission_mode is not None and permission_mode not in MODES:
        fail(
            f"Unknown --permission-mode {permission_mode!r}: use one of {', '.join(MODES)}.", code=2
        )
    if model:  # (an empty --model is the configured one, as for `run`)
        try:  # a misspelt provider must stop here, not in every new session's first turn
            parse_model_spec(model)
        except ModelConfigError as e:
            fail(f"--model: {e}", code=2)
    folder = (cwd or Path.cwd()).resolve()
    if not folder.is_dir():
        fail(f"--cwd {folder} is not a folder.", code=2)
    token = token or os.environ.get(TOKEN_ENV) or None
    generated = token is None and not is_loopback(host)
    if generated:
        token = new_token()
    _serve(
        host,
        port,
        token,
        generated,
        open_browser,
        {
            "model": model,
            "permission_mode": permission_mode,
            "cwd": folder,
        },
    )


def login_url(host: str, port: int, token: str | None) -> str:
    """The address to open: with ``/login?token=`` when a token is required."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}"
    return f"{base}/login?token={token}" if token else f"{base}/"


def _serve(
    host: str,
    port: int,
    token: str | None,
    generated: bool,
    open_browser: bool,
    options: dict[str, Any],
) -> None:
    """Bind first (a port in use is one clear line), then serve until Ctrl+C."""
    sock = _listen(host, port)
    extra_hosts = ["*"] if host in ("0.0.0.0", "::") else [host]
    app = create_app(token=token, allowed_hosts=extra_hosts, service_options=options)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    url = login_url(host, int(sock.getsockname()[1]), token)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(functools.partial(server.serve, sockets=[sock]))
            while not server.started:
                if server.should_exit:
                    return
                await anyio.sleep(0.05)
            note = " (a new token: keep this URL private)" if generated else ""
            sys.stderr.write(f"skilldeck web: open {url}{note}\n")
            sys.stderr.flush()
            if open_browser:
                webbrowser.open(url)

    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(main)
    sock.close()


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        fail(f"Cannot listen on {host}:{port}: {e.strerror or e} (try another --port).")
    sock.set_inheritable(True)
    return sock
