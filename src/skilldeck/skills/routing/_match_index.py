"""What the matcher indexes of a skill, and the on-disk cache of the index.

Kept apart from :mod:`.match` (ranking) because it is the only part that reads skill
bodies: a warm process loads the cached arrays and never calls anything here except
:func:`load_or_build`'s cache-hit path.
"""

from __future__ import annotations

import logging
import zipfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skilldeck.skills.model.skill import Skill
from skilldeck.skills.routing._basics import BM25FParams
from skilldeck.skills.routing._basics import identity as skill_identity
from skilldeck.skills.routing._bm25f import BM25FIndex
from skilldeck.skills.routing._name_words import name_tokens
from skilldeck.skills.routing.tokenize import stem, tokenize

log = logging.getLogger("skilldeck.skills.routing.match")

#: index files kept in the cache folder (older ones are deleted)
KEEP_CACHE_FILES = 4
_TAG_KEYS = ("category", "categories", "keywords")
_WHEN_KEYS = ("triggers", "trigger", "use_when", "use-when")


def skill_fields(skill: Skill, *, body_chars: int) -> dict[str, list[str]]:
    """The tokens of each indexed field of ``skill`` (reads the body)."""
    meta = skill.metadata
    extra = meta.extra
    when = [meta.when_to_use or "", *(_text(extra.get(k)) for k in _WHEN_KEYS)]
    tags = [*meta.tags, *(_text(extra.get(k)) for k in _TAG_KEYS)]
    try:
        body = skill.body[:body_chars] if body_chars > 0 else ""
    except OSError as e:
        log.warning("cannot read the body of skill %r: %s", skill.name, e)
        body = ""
    return {
        "name": name_tokens(skill),
        "description": tokenize(meta.description),
        "when_to_use": tokenize(" ".join(when)),
        "tags": tokenize(" ".join(tags)),
        "body": tokenize(body),
    }


def split_fused_names(documents: Sequence[dict[str, list[str]]]) -> None:
    """Add the two halves of fused name words: ``googlecalendar`` → google, calendar.

    Catalogs fuse product names (``googlecalendar-automation``) that users type as two
    words. A name word of 8+ letters that the descriptions and bodies never use is
    split where both halves are words they do use (in at least 3 skills).
    """
    df: Counter[str] = Counter()
    for doc in documents:
        df.update(set(doc.get("description", ())).union(doc.get("body", ())))
    known = {t for t, c in df.items() if c >= 3}
    for doc in documents:
        name = doc.get("name", [])
        extra: list[str] = []
        for token in dict.fromkeys(name):
            if len(token) >= 8 and token.isalpha() and token not in known:
                halves = _best_split(token, known)
                if halves and not all(h in name for h in halves):
                    extra.extend(halves)
        name.extend(extra)


def _best_split(word: str, known: set[str]) -> tuple[str, str] | None:
    best: tuple[str, str] | None = None
    best_len = 0
    for i in range(3, len(word) - 2):
        left, right = stem(word[:i]), stem(word[i:])
        shorter = min(i, len(word) - i)
        if shorter > best_len and left in known and right in known:
            best, best_len = (left, right), shorter
    return best


def embedding_text(skill: Skill) -> str:
    """What an embedder sees of a skill: name, description and when-to-use."""
    meta = skill.metadata
    return " ".join(
        p for p in (meta.name.replace("-", " "), meta.description, meta.when_to_use) if p
    )


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    return str(value)


def load_or_build(skills: list[Skill], params: BM25FParams, path: Path | None) -> BM25FIndex:
    """Load the cached index at ``path`` if it indexes exactly ``skills``; else build."""
    identity = skill_identity(skills)
    if path is not None and path.is_file():
        try:
            index, meta = BM25FIndex.load(path)
            if meta.get("skills") == identity and meta.get("params") == params.key():
                return index
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
            log.info("routing cache %s unusable, rebuilding: %s", path, e)
    documents = [skill_fields(s, body_chars=params.body_chars) for s in skills]
    split_fused_names(documents)
    index = BM25FIndex.build(documents, params)
    if path is not None:
        _save(index, path, {"skills": identity, "params": params.key()})
    return index


def vector_path(index_path: Path) -> Path:
    return index_path.with_name(index_path.stem + ".vectors.npy")


def _save(index: BM25FIndex, path: Path, meta: dict[str, Any]) -> None:
    """Write the cache and drop the oldest other index files (a cache, not an archive)."""
    try:
        index.save(path, meta=meta)
        old = sorted(path.parent.glob("bm25f-*.npz"), key=lambda p: p.stat().st_mtime)
        for stale in old[:-KEEP_CACHE_FILES]:
            if stale != path:
                stale.unlink(missing_ok=True)
                vector_path(stale).unlink(missing_ok=True)
    except OSError as e:  # a read-only cache dir only costs speed
        log.warning("cannot write routing cache %s: %s", path, e)
