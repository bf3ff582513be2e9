"""The plain parts of routing that need no numpy: a ranked skill, the index
parameters, and the key and path of the index cache.

Shared by the numpy ranker (:mod:`.match`) and the warm reader (:mod:`._warm`), so a
process that only reads a cached index never imports numpy.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skilldeck.skills.model.skill import Skill

__all__ = [
    "FORMAT_VERSION",
    "MIN_CEILING",
    "BM25FParams",
    "Match",
    "cache_key",
    "identity",
    "index_path",
    "routing_dir",
]

#: bump when the on-disk layout or the tokenisation changes
FORMAT_VERSION = 4
#: floor of a query's score ceiling, in idf units (about two rare words): a query of
#: one or two ordinary words cannot reach a confident normalised score
MIN_CEILING = 10.0
#: what :func:`identity` records (part of the key: an index of another form is not read)
_IDENTITY = "name+skill_md"


@dataclass(frozen=True)
class Match:
    """One ranked skill; ``score`` is normalised to [0, 1] (see :mod:`.match`)."""

    name: str
    score: float
    skill: Skill


@dataclass(frozen=True)
class BM25FParams:
    """Field weights, per-field length normalisation ``b`` and the saturation ``k1``.

    Defaults were tuned on the development split of ``bench/routing`` (see
    docs/routing.md); ``body_chars`` bounds how much of each body is indexed.
    """

    k1: float = 2.5
    weights: Mapping[str, float] = field(
        default_factory=lambda: {
            "name": 3.0,
            "description": 2.0,
            "when_to_use": 1.5,
            "tags": 1.5,
            "body": 0.6,
        }
    )
    b: Mapping[str, float] = field(
        default_factory=lambda: {
            "name": 0.3,
            "description": 0.5,
            "when_to_use": 0.5,
            "tags": 0.3,
            "body": 0.9,
        }
    )
    body_chars: int = 20_000

    def key(self) -> str:
        """A short stable hash of the parameters (part of the cache key)."""
        blob = json.dumps(
            [FORMAT_VERSION, self.k1, dict(self.weights), dict(self.b), self.body_chars],
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def cache_key(fingerprint: str, params: BM25FParams, skill_identity: Sequence[str]) -> str:
    """The name of the index of the skills with ``skill_identity`` (:func:`identity`)
    built with ``params`` for a registry whose state is ``fingerprint`` (it changes
    with any skill file's mtime or size, any registration, override or disabled
    name). Hashed from strings: a ``Path`` per skill cost tens of milliseconds."""
    h = hashlib.sha256(f"{fingerprint}\0{params.key()}\0{_IDENTITY}\0".encode())
    h.update("".join([f"{entry}\n" for entry in skill_identity]).encode(errors="surrogateescape"))
    return h.hexdigest()[:24]


def identity(skills: Sequence[Skill]) -> list[str]:
    """What an index records of the skills it indexes, in order: name and SKILL.md
    path (a string the skill holds; its folder would be computed per skill)."""
    return [f"{s.name}\0{s.skill_md_str}" for s in skills]


def routing_dir(cache_dir: Path | str) -> Path:
    """The folder of routing's caches (indexes, vectors, token cache, dictionaries)."""
    return Path(cache_dir) / "routing"


def index_path(cache_dir: Path | str, key: str) -> Path:
    """Where the index with ``key`` is cached."""
    return routing_dir(cache_dir) / f"bm25f-{key}.npz"
