"""Hosts for ``WebFetch(domain:…)`` rules: one canonical spelling per host.

A host has many spellings that all reach the same machine: ``127.1``,
``2130706433``, ``0x7f000001`` and ``0177.0.0.1`` are ``127.0.0.1`` to
``inet_aton`` (which curl and the C library's resolver use); ``[::ffff:127.0.0.1]``
is the same address again; ``Example.COM.`` is ``example.com``; ``bücher.de`` is
``xn--bcher-kva.de``. A rule compared with the text the model wrote is bypassed by
any of them, so rules and the ``WebFetch`` tool both go through
:func:`canonical_host`, and the tool fetches the URL :func:`canonical_url` rebuilds
— the host that was checked is the host that is fetched.

Anything this cannot read unambiguously (userinfo, backslashes, percent-escapes,
control characters, an empty label) is ``None``: a deny rule treats it as a hit
and an allow rule as a miss, and ``WebFetch`` refuses the URL.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from urllib.parse import urlsplit, urlunsplit

__all__ = ["canonical_host", "canonical_url", "domain_rule_matches", "url_host"]

#: a label WHATWG's URL parser reads as a number: decimal, octal (leading 0) or hex
_NUMERIC_LABEL = re.compile(r"(?:0[xX][0-9a-fA-F]*|[0-9]+)\Z")
_DNS_HOST = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*\Z")
#: characters no URL we fetch may contain: parsers disagree about every one of them
_AMBIGUOUS = re.compile(r"[\\\s\x00-\x1f\x7f]")


def canonical_host(raw: str) -> str | None:
    """The one spelling of ``raw`` (a host, brackets allowed for IPv6), or None."""
    host = raw.strip()
    if not host or _AMBIGUOUS.search(host) or "%" in host or "@" in host:
        return None
    if host.startswith("[") or ":" in host:
        return _ipv6(host.removeprefix("[").removesuffix("]"))
    if host.endswith("."):
        host = host[:-1]
    labels = host.split(".")
    if not host or any(not label for label in labels):
        return None
    if _NUMERIC_LABEL.match(labels[-1]):
        return _ipv4(host)
    try:
        ascii_host = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return None
    return ascii_host if _DNS_HOST.match(ascii_host) else None


def _ipv4(host: str) -> str | None:
    """Every legacy IPv4 form ``inet_aton`` accepts (``127.1``, hex, octal, one number)."""
    if not all(_NUMERIC_LABEL.match(label) for label in host.split(".")):
        return None  # ``1.2.3.4x``: neither a name nor an address
    try:
        return socket.inet_ntoa(socket.inet_aton(host))
    except OSError:
        return None


def _ipv6(host: str) -> str | None:
    try:
        address = ipaddress.IPv6Address(host)
    except ValueError:
        return None
    if address.scope_id:
        return None
    mapped = address.ipv4_mapped
    return str(mapped) if mapped is not None else address.compressed


def url_host(url: str) -> str | None:
    """The canonical host of ``url``, or None when the URL is not plainly readable."""
    rebuilt = canonical_url(url)
    return None if rebuilt is None else urlsplit(rebuilt).hostname


def canonical_url(url: str) -> str | None:
    """``url`` with its host in canonical form, or None when it has userinfo,
    backslashes, whitespace or control characters, no host, or an unreadable one."""
    text = url.strip()
    if _AMBIGUOUS.search(text):
        return None
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    netloc = parts.netloc
    if "@" in netloc or not parts.hostname:
        return None
    if netloc.startswith("["):
        raw_host = netloc[: netloc.find("]") + 1]
    else:
        raw_host = netloc.rsplit(":", 1)[0] if ":" in netloc else netloc
    host = canonical_host(raw_host)
    if host is None:
        return None
    shown = f"[{host}]" if ":" in host else host
    if port is not None:
        shown += f":{port}"
    return urlunsplit((parts.scheme.lower(), shown, parts.path, parts.query, parts.fragment))


def domain_rule_matches(domain: str, url: str, *, deny: bool) -> bool:
    """Does ``WebFetch(domain:<domain>)`` cover ``url``? The host and the rule's domain
    are both canonical; an IP matches only itself, a name also its subdomains. An
    unreadable URL is a hit for a deny rule and a miss for an allow rule."""
    host = url_host(url)
    wanted = canonical_host(domain.strip().removeprefix("*."))
    if host is None or wanted is None:
        return deny
    if host == wanted:
        return True
    return not _is_ip(wanted) and host.endswith("." + wanted)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
