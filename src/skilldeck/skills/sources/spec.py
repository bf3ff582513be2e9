"""What a ``skills install SOURCE`` string means, and how the network may be reached.

:func:`parse_source` turns the user's text into a :class:`SourceSpec`:

* an existing path (folder, ``.skill``, ``.zip``) → ``local``;
* ``https://host/.well-known/agent-skills/index.json`` (any URL ending in
  ``index.json``) → ``index`` (the agentskills.io discovery RFC, v0.2);
* an ``http(s)`` URL ending in ``.skill``, ``.zip`` or ``SKILL.md`` → ``url``;
* any other URL (``https://``, ``ssh://``, ``git://``, ``file://``, ``git@host:``)
  → ``git``, with ``@ref`` after the path and ``repo.git/sub/path`` for a folder;
* ``owner/repo[/path][@ref]`` → ``git`` on ``<github_url>/owner/repo.git``
  (``[skills] github_url``, default ``https://github.com``; tests point it at a
  local ``file://`` folder).

A path that looks like one (``./x``, ``/x``, ``~/x``, ``x.skill``) stays local even
when missing, so a typo is reported as a missing file, not fetched from GitHub.

:class:`FetchOptions` carries what every network step needs: timeouts, the HTTP
transport (injectable: tests pass ``httpx2.MockTransport`` or talk to a local
server) and a :class:`Reporter` for progress, which the CLI renders on stderr.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol
from urllib.parse import urlsplit

from skilldeck.errors import SourceError

if TYPE_CHECKING:
    import httpx2

__all__ = ["FetchOptions", "Reporter", "SourceSpec", "check_argument", "parse_source"]

Kind = Literal["local", "git", "url", "index"]
DEFAULT_GITHUB_URL = "https://github.com"
_SHORTHAND = re.compile(
    r"^(?P<owner>[A-Za-z0-9][\w.-]*)/(?P<repo>[\w.-]+)(?P<path>(?:/[^@\s]+)?)(?:@(?P<ref>\S+))?$"
)
_GIT_SCHEMES = ("https://", "http://", "ssh://", "git://", "file://", "git+ssh://")
_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")
_DOWNLOADS = (".skill", ".zip", "/skill.md")
_REF = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/+-]*$")


class Reporter(Protocol):
    """Told what a long network step is doing (the CLI shows it on stderr)."""

    def step(self, message: str) -> None: ...


class _Silent:
    def step(self, message: str) -> None:
        return None


#: the reporter of library callers that gave none: stateless, so shared
SILENT: Reporter = _Silent()


@dataclass(frozen=True)
class FetchOptions:
    """How sources reach the network. Every step has a timeout; nothing retries."""

    #: seconds for one HTTP request (connect + each read)
    http_timeout: float = 30.0
    #: seconds for one git command (a clone of a large repository can be slow)
    git_timeout: float = 300.0
    #: an ``httpx2`` transport (tests: ``MockTransport``); None: the real network
    transport: httpx2.BaseTransport | None = None
    #: where ``owner/repo`` shorthand points
    github_url: str = DEFAULT_GITHUB_URL
    reporter: Reporter = SILENT


@dataclass(frozen=True)
class SourceSpec:
    kind: Kind
    #: a path (local), a clone URL (git), a download or index URL
    location: str
    ref: str | None = None
    #: the folder inside a git repository ("" or None: search it all)
    subpath: str | None = None


def parse_source(text: str, *, github_url: str = DEFAULT_GITHUB_URL) -> SourceSpec:
    """The :class:`SourceSpec` of a ``skills install`` argument (see the module doc)."""
    text = text.strip()
    if not text:
        raise SourceError("An empty source was given; pass a path, a URL or owner/repo.")
    if Path(text).expanduser().exists() or _looks_local(text):
        return SourceSpec("local", str(Path(text).expanduser()))
    lowered = text.lower()
    if lowered.startswith(("https://", "http://")):
        path = urlsplit(text).path.lower()
        if path.endswith("index.json"):
            return SourceSpec("index", text)
        if path.endswith(_DOWNLOADS) or path == "skill.md":
            return SourceSpec("url", text)
    if lowered.startswith(_GIT_SCHEMES) or _SCP_LIKE.match(text):
        return _git_url(text)
    match = _SHORTHAND.match(text)
    if match is None:
        raise SourceError(
            f"Cannot tell what {text!r} is: pass an existing folder or .skill file, "
            "owner/repo[/path][@ref], a git URL, an https URL of a .skill, .zip or "
            "SKILL.md, or a skills index URL (…/.well-known/agent-skills/index.json)."
        )
    repo = match["repo"].removesuffix(".git")
    url = f"{github_url.rstrip('/')}/{match['owner']}/{repo}.git"
    check_argument(url, match["ref"])
    return SourceSpec("git", url, match["ref"] or None, match["path"].strip("/") or None)


def check_argument(url: str, ref: str | None) -> None:
    """Refuse a URL or ref git could read as an option (``-u<cmd>`` is ``--upload-pack``:
    a command) or that no ref name can hold."""
    if url.startswith("-"):
        raise SourceError(f"{url!r} is not a repository address (it starts with '-').")
    if ref is not None and (not _REF.match(ref) or ".." in ref or ref.endswith((".", "/"))):
        raise SourceError(
            f"{ref!r} is not a tag, branch or commit name (letters, digits and ._/+- only; "
            "it may not start with '-')."
        )


def _looks_local(text: str) -> bool:
    if text.startswith(("./", "../", "/", "~", ".\\")) or text in (".", ".."):
        return True
    return text.lower().endswith((".skill", ".zip")) and "://" not in text


def _git_url(text: str) -> SourceSpec:
    """``URL[.git/sub/path][@ref]`` → clone URL, subpath, ref."""
    head = ""
    rest = text
    if "://" in text:
        scheme, _, after = text.partition("://")
        authority, slash, path = after.partition("/")
        head, rest = f"{scheme}://{authority}{slash}", path
    elif _SCP_LIKE.match(text):
        host, _, path = text.partition(":")
        head, rest = f"{host}:", path
    ref: str | None = None
    if "@" in rest:
        rest, _, ref = rest.rpartition("@")
    subpath: str | None = None
    if ".git/" in rest:
        rest, _, subpath = rest.partition(".git/")
        rest += ".git"
    if not rest.strip("/"):
        raise SourceError(f"{text!r} names no repository; add its path.")
    spec = SourceSpec("git", head + rest, ref or None, (subpath or "").strip("/") or None)
    check_argument(spec.location, spec.ref)
    return spec
