"""The routing development set: hand-written requests with duplicate-aware answers.

Each line of ``devset.jsonl`` is one request::

    {"id": "q042", "query": "...", "expected": ["pdf", "PDF Processing Pro"],
     "kind": "direct" | "indirect" | "none", "lang": "en", "split": "dev" | "test"}

``expected`` is a *set* of acceptable answers, because the corpus holds many copies
and near-copies of the same skill across repositories: an entry is a skill name, or
``path:<folder relative to the corpus>`` when only one folder of that name is right.
An empty set (kind ``none``) is a request no skill covers. Parameters were tuned on
``split == "dev"`` only; ``test`` is held out and reported separately.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from skilldeck.skills.model.skill import Skill

DEVSET = Path(__file__).resolve().parent / "devset.jsonl"


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    expected: frozenset[str]
    kind: str
    lang: str
    split: str

    @property
    def has_answer(self) -> bool:
        return bool(self.expected)

    def accepts(self, skill: Skill, *, corpus: Path | None = None) -> bool:
        """Whether ``skill`` is an acceptable answer to this request."""
        if skill.name in self.expected:
            return True
        if corpus is not None:
            try:
                rel = skill.folder.relative_to(corpus).as_posix()
            except ValueError:
                return False
            return f"path:{rel}" in self.expected
        return False


def load_devset(path: Path = DEVSET) -> list[Query]:
    queries: list[Query] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            row = json.loads(line)
            queries.append(
                Query(
                    id=row["id"],
                    text=row["query"],
                    expected=frozenset(row["expected"]),
                    kind=row["kind"],
                    lang=row["lang"],
                    split=row["split"],
                )
            )
    return queries


def select(queries: Iterable[Query], split: str | None) -> list[Query]:
    """``split`` = "dev", "test" or None for all."""
    return [q for q in queries if split is None or q.split == split]
