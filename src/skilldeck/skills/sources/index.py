"""Skills from a discovery index: ``https://host/.well-known/agent-skills/index.json``.

The shape is the Agent Skills Discovery RFC v0.2.0 (github.com/cloudflare/
agent-skills-discovery-rfc): ``{"version": "0.2.0", "skills": [{"name",
"description", "digest", "files": [{"path", "digest"}], "package"?}]}``. Every
digest is ``sha256:<hex>``; a skill's digest is the sha256 of its sorted
``path\\0hex\\n`` lines — the same content hash skilldeck's lock records.

Files are fetched one by one from ``<index folder>/<name>/<path>`` (the RFC lets a
client prefer files over the optional ``package``), each checked against its digest
before it is written, then the skill digest is recomputed over them. A mismatch at
either level refuses the skill. A v0.1 index (plain path strings, no digests) and
an unknown major version are refused: nothing unverified is installed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from skilldeck.errors import (
    DigestMismatchError,
    NotASkillSourceError,
    PackageError,
    SourceError,
)
from skilldeck.skills.model.spec import unsafe_name_reason
from skilldeck.skills.packaging.lockfile import tree_digest
from skilldeck.skills.packaging.unpack import safe_entry_name
from skilldeck.skills.sources.httpsource import check_digest, download, save
from skilldeck.skills.sources.spec import FetchOptions

__all__ = ["IndexEntry", "fetch_skill", "read_index"]

MAX_INDEX = 5 * 1024 * 1024
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_PATH_CHARS = re.compile(r"^[\x20-\x7e]+$")
_BAD_PATH_CHARS = set("\\?#[]")


@dataclass(frozen=True)
class IndexEntry:
    name: str
    description: str
    digest: str
    #: relative path → ``sha256:<hex>``
    files: dict[str, str]


def read_index(client: httpx2.Client, url: str, options: FetchOptions) -> list[IndexEntry]:
    """The skills an index lists, each checked for shape (not yet for content)."""
    raw = download(client, url, options, cap=MAX_INDEX)
    try:
        doc = json.loads(raw)
    except ValueError as e:
        raise NotASkillSourceError(f"{url} is not JSON ({e}); not a skills index.") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("skills"), list):
        raise NotASkillSourceError(f'{url} has no "skills" list; not a skills index.')
    version = str(doc.get("version", "0.1.0"))
    if not _readable_version(version):
        raise SourceError(
            f"{url} is a skills index version {version}; skilldeck reads 0.2.x (with "
            "sha256 digests) and refuses older or unknown versions."
        )
    return [_entry(item, url) for item in doc["skills"]]


def _readable_version(version: str) -> bool:
    """0.2.x and later 0.x minors (they only add fields); not 0.1 (no digests) nor 1.x."""
    match = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", version)
    return match is not None and int(match[1]) == 0 and int(match[2]) >= 2


def _entry(item: Any, url: str) -> IndexEntry:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        raise NotASkillSourceError(f"{url}: a skill entry has no name; the index is malformed.")
    name = item["name"]
    if (reason := unsafe_name_reason(name)) is not None:
        raise SourceError(f"{url}: skill name {name!r} cannot be a folder name ({reason}).")
    digest = str(item.get("digest", ""))
    files = item.get("files")
    if not _DIGEST.match(digest) or not isinstance(files, list) or not files:
        raise NotASkillSourceError(
            f"{url}: skill {name!r} lacks a sha256 digest or a files list; refused."
        )
    listed: dict[str, str] = {}
    for file in files:
        if not isinstance(file, dict) or not _DIGEST.match(str(file.get("digest", ""))):
            raise NotASkillSourceError(f"{url}: skill {name!r} lists a file without a digest.")
        listed[_safe_path(str(file.get("path", "")), name)] = str(file["digest"])
    if "SKILL.md" not in listed:
        raise NotASkillSourceError(f"{url}: skill {name!r} lists no SKILL.md; refused.")
    return IndexEntry(name, str(item.get("description", "")), digest, listed)


def _safe_path(path: str, name: str) -> str:
    if not path or not _PATH_CHARS.match(path) or _BAD_PATH_CHARS & set(path):
        raise SourceError(f"Index skill {name!r} lists the unsafe file path {path!r}; refused.")
    try:
        return "/".join(safe_entry_name(path))
    except PackageError as e:
        raise SourceError(f"Index skill {name!r} lists the unsafe file path {path!r}: {e}") from e


def fetch_skill(
    client: httpx2.Client, index_url: str, entry: IndexEntry, dest: Path, options: FetchOptions
) -> Path:
    """Download ``entry``'s files into ``dest/<name>/``, verifying every digest."""
    base = index_url.rsplit("/", 1)[0]
    folder = dest / entry.name
    hashes: dict[str, str] = {}
    for rel, digest in sorted(entry.files.items()):
        data = download(client, f"{base}/{entry.name}/{rel}", options)
        hashes[rel] = check_digest(data, digest, what=f"{entry.name}/{rel} from {index_url}")
        save(data, folder / rel)
    if f"sha256:{tree_digest(hashes)}" != entry.digest:
        raise DigestMismatchError(
            f"Skill {entry.name!r} from {index_url}: its files do not add up to the "
            f"skill digest the index lists ({entry.digest[:23]}…); refused."
        )
    return folder
