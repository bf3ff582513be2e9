"""Downloads over HTTPS with httpx2: capped, timed out, and errors that say why.

Plain ``http://`` is refused except on the loopback interface (a skill is code and
instructions: fetching one over an unauthenticated channel lets anyone on the path
rewrite it); a digest from an index fetched over plain http would prove nothing.
The transport is injectable (:class:`~skilldeck.skills.sources.spec.FetchOptions`),
which is how tests run offline. Redirects are followed, at most five, each checked.
"""

from __future__ import annotations

import hashlib
import ipaddress
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx2

from skilldeck.errors import DigestMismatchError, SourceError, SourceUnreachableError
from skilldeck.skills.sources.spec import FetchOptions

__all__ = ["check_digest", "download", "open_client"]

#: a download larger than this is refused (the same cap as an unpacked package)
MAX_DOWNLOAD = 100 * 1024 * 1024
_LOOPBACK_NAMES = ("localhost",)
_MAX_REDIRECTS = 5


def open_client(options: FetchOptions) -> httpx2.Client:
    return httpx2.Client(
        transport=options.transport,
        timeout=options.http_timeout,
        follow_redirects=False,  # followed by download(), checking each hop
        headers={"User-Agent": "skilldeck (skills install)"},
    )


def check_scheme(url: str) -> None:
    """https anywhere; plain http only to this machine."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return
    if parts.scheme == "http" and _is_loopback(parts.hostname or ""):
        return
    raise SourceError(
        f"{url}: skills are downloaded over https only (plain http is allowed for "
        "localhost alone); use the https:// address."
    )


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def download(
    client: httpx2.Client, url: str, options: FetchOptions, *, cap: int = MAX_DOWNLOAD
) -> bytes:
    """The body at ``url``, or a SourceError saying what went wrong and where.

    Redirects are followed here, hop by hop, so each new address is checked before
    it is asked (an https page must not send the download to plain http)."""
    check_scheme(url)
    options.reporter.step(f"downloading {url}")
    try:
        for _ in range(_MAX_REDIRECTS + 1):
            with client.stream("GET", url) as response:
                if response.is_redirect and "location" in response.headers:
                    url = urljoin(url, response.headers["location"])
                    check_scheme(url)
                    continue
                return _body(response, url, cap)
    except httpx2.TimeoutException as e:
        raise SourceUnreachableError(
            f"{url} did not answer within {options.http_timeout:g}s; check the network."
        ) from e
    except httpx2.HTTPError as e:
        raise SourceUnreachableError(f"Cannot reach {url}: {e}") from e
    raise SourceUnreachableError(f"{url}: more than {_MAX_REDIRECTS} redirects; refused.")


def _body(response: httpx2.Response, url: str, cap: int) -> bytes:
    if response.status_code >= 400:
        hint = ": no such file; check the address." if response.status_code == 404 else "."
        raise SourceUnreachableError(f"{url} answered HTTP {response.status_code}{hint}")
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > cap:
            raise SourceError(f"{url} is larger than {cap:,} bytes; refused.")
    return bytes(body)


def check_digest(data: bytes, expected: str, *, what: str) -> str:
    """``data``'s sha256 (hex) when it is ``expected``: ``sha256:<hex>`` (the
    discovery RFC's form) or bare hex; DigestMismatchError when it is not."""
    want = expected.lower().removeprefix("sha256:")
    have = hashlib.sha256(data).hexdigest()
    if have != want:
        raise DigestMismatchError(
            f"{what} does not match its sha256 digest (expected {want[:16]}…, got "
            f"{have[:16]}…): the file changed or was tampered with; refused."
        )
    return have


def save(data: bytes, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("xb") as fh:
        fh.write(data)
    return path
