"""The web interface's guard: who may talk to the agent, from which page, how much.

One pure ASGI middleware in front of every route (streaming responses pass through
unbuffered). In order, for every HTTP request:

1. ``Host`` must be one of the server's names (loopback names, the bound address,
   any extra ``allowed_hosts``): a DNS-rebinding page, whose requests carry its own
   host name, is refused even on 127.0.0.1.
2. The token, when one is set: ``Authorization: Bearer <token>``, an
   ``X-Skilldeck-Token`` header, or the ``skilldeck_token`` cookie that
   ``GET /login?token=…`` sets before redirecting to the page (HttpOnly,
   SameSite=Lax: a login link opened from another app still lands signed in; writes
   from another site are refused by the origin check).
   Compared in constant time.
3. ``Origin``, when the browser sends one, must be the server's own origin, and a
   request the browser marks ``Sec-Fetch-Site: cross-site`` / ``same-site`` is
   refused, except a top-level navigation to the page or the login URL: another site
   can neither drive the agent nor read its sessions.
4. Request bodies are capped (``Content-Length`` checked first, then the bytes as
   they arrive): 413 beyond the limit.

Every response gets a Content-Security-Policy without inline script, styles only
from the server, images only from it (a model's Markdown image cannot call home),
``frame-ancestors 'none'``, ``nosniff`` and ``no-referrer``.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "COOKIE",
    "CSP",
    "DEFAULT_MAX_BODY",
    "Guard",
    "GuardOptions",
    "is_loopback",
    "new_token",
]

COOKIE = "skilldeck_token"
TOKEN_HEADER = b"x-skilldeck-token"
DEFAULT_MAX_BODY = 1024 * 1024
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
#: paths a top-level navigation from another site may open (a bookmarked or pasted link)
NAVIGABLE = frozenset({"/", "/login"})


def new_token() -> str:
    """A fresh random token (32 bytes, URL-safe)."""
    return secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps a server on this machine: ``localhost`` or a
    loopback address (127.0.0.0/8, ::1) — decided by the address, so a name such as
    ``127.example.com`` (which DNS may point anywhere) is not loopback."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


#: a Host header as a browser sends it: a name, an IPv4 or a bracketed IPv6, a port
_HOST_HEADER = re.compile(r"(?P<name>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::[0-9]{1,5})?")


@dataclass(frozen=True)
class GuardOptions:
    """What the guard enforces. ``token`` None: no token (loopback only, the command
    makes sure). ``allowed_hosts``: host names (no port) besides the loopback names;
    ``"*"`` accepts any (for tests behind a proxy that rewrites Host)."""

    token: str | None = None
    allowed_hosts: frozenset[str] = field(default_factory=frozenset)
    max_body: int = DEFAULT_MAX_BODY
    #: a ``Secure`` cookie (when served over https behind a proxy)
    secure_cookie: bool = False

    @classmethod
    def make(
        cls,
        *,
        token: str | None = None,
        allowed_hosts: Iterable[str] = (),
        max_body: int = DEFAULT_MAX_BODY,
        secure_cookie: bool = False,
    ) -> GuardOptions:
        hosts = frozenset(h.lower().strip("[]") for h in allowed_hosts)
        return cls(token or None, hosts, max_body, secure_cookie)


class _TooLarge(Exception):
    pass


class Guard:
    """The ASGI middleware described in the module docstring."""

    def __init__(self, app: ASGIApp, options: GuardOptions) -> None:
        self.app = app
        self.options = options

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # the app serves none: never let one through
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await _plain(send, *refusal)
            return
        if _route_path(scope) == "/login" and self.options.token:
            await self._login(scope, send)
            return
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.options.max_body:
            await _plain(send, 413, "The request body is too large.")
            return
        await self._forward(scope, receive, send)

    # ---- the checks -----------------------------------------------------------------

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        host = headers.get("host", "")
        if not self._host_allowed(host):
            return 421, "Unknown host name: open the address skilldeck web printed."
        if not self._origin_allowed(scope, headers, host):
            return 403, "Cross-site request refused."
        if self.options.token and not self._token_ok(scope, headers):
            return 401, "Missing or wrong token: open the login URL skilldeck web printed."
        return None

    def _host_allowed(self, host: str) -> bool:
        allowed = self.options.allowed_hosts
        if "*" in allowed:
            return True
        match = _HOST_HEADER.fullmatch(host)  # name[:port] only: no userinfo, no second port
        name = (match.group("name") or "").strip("[]").lower() if match else ""
        return bool(name) and (name in LOOPBACK_NAMES or name in allowed)

    def _origin_allowed(self, scope: Scope, headers: dict[str, str], host: str) -> bool:
        site = headers.get("sec-fetch-site", "")
        navigation = headers.get("sec-fetch-mode", "") == "navigate"
        if site in ("cross-site", "same-site"):
            return navigation and scope["method"] == "GET" and _route_path(scope) in NAVIGABLE
        origin = headers.get("origin")
        if origin is None:
            return True  # not a browser's cross-origin request (curl, a same-origin GET)
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower()

    def _token_ok(self, scope: Scope, headers: dict[str, str]) -> bool:
        token = self.options.token or ""
        offered: list[str] = []
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            offered.append(auth[7:].strip())
        if TOKEN_HEADER.decode() in headers:
            offered.append(headers[TOKEN_HEADER.decode()])
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed cookie header is no token
            cookie = SimpleCookie()
        if COOKIE in cookie:
            offered.append(cookie[COOKIE].value)
        if _route_path(scope) == "/login":
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            offered += query.get("token", [])
        return any(hmac.compare_digest(o.encode(), token.encode()) for o in offered)

    # ---- responses ----------------------------------------------------------------------

    async def _login(self, scope: Scope, send: Send) -> None:
        """The token was right (checked above): set the cookie, go to the page."""
        root = scope.get("root_path", "") or ""
        attrs = f"Path={root or '/'}; HttpOnly; SameSite=Lax"
        if self.options.secure_cookie:
            attrs += "; Secure"
        cookie = f"{COOKIE}={self.options.token}; {attrs}"
        headers = [
            (b"location", f"{root}/".encode()),
            (b"set-cookie", cookie.encode()),
            (b"cache-control", b"no-store"),
            *SECURITY_HEADERS,
        ]
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    async def _forward(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = self.options.max_body
        received = 0
        started = False

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise _TooLarge
            return message

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        try:
            await self.app(scope, counted_receive, send_with_headers)
        except _TooLarge:
            if not started:
                await _plain(send, 413, "The request body is too large.")
        except ClientDisconnect:  # the client left mid-body: nobody to answer, no traceback
            return


def _route_path(scope: Scope) -> str:
    """The path inside this app (a mounted app's prefix, ``root_path``, removed)."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "") or ""
    return path[len(root) :] or "/" if root and path.startswith(root) else path


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode()
    headers: list[Any] = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        *SECURITY_HEADERS,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
