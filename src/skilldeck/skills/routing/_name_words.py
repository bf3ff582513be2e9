"""Rare words of a skill's name that a request spells out count as semantic evidence.

A quarter of a real catalog is thin wrappers named after a product — ``docmosis-
automation``: "Automate Docmosis tasks via Rube MCP" — and users name the product
("render our Docmosis contract template into a PDF"). The lexical side finds the
name, but the static embeddings have no vector for "Docmosis": the wrapper's cosine
is low and a generic PDF skill's is high, so fusion used to push the named skill
down (held-out 3: 0.62 top-1 fused against 0.64 lexical alone).

So, when embeddings are fused, a skill's semantic score is the larger of its cosine
and its *name evidence*: the share of the request's idf mass (the BM25F ceiling)
carried by rare words that are also words of the skill's name, times
:data:`NAME_EVIDENCE_SCALE`, capped at 1. A word is rare when at most one skill in
:data:`RARE_DOCUMENT_SHARE` uses it anywhere (at least one skill): product and tool
names, not "data" or "pdf". And the request must write it *as a name*
(:class:`NamedInRequest`): a word English does not have, or a capitalised word
inside a sentence — "I felt tired" does not name ``felt-automation``. Ordinary
words are left to BM25F and the cosine.

Chosen on the four burned splits (264 requests) and the old dev set, then frozen
and measured once on ``heldout4``, written blind afterwards (docs/routing.md).
``python -m bench routing --splits-only`` runs ``skilldeck`` against
``skilldeck-no-names`` (this turned off) in the same run; on the burned splits
top-1 went 0.682 → 0.746 and top-3 0.784 → 0.826 pooled, no split worse, indirect
and non-English requests unchanged, no no-skill request hinted, and the figure was
flat over scales 4–10 and rarity cut-offs from 1 skill in 250 to 1 in 1,300. The
"as a name" condition came after both fresh splits were measured (a QA pass saw
"I felt tired" hinted); it changes no outcome on them, and one on ``heldout2`` (+1). Both
rankers call :func:`name_evidence` (the matcher with numpy's arrays, the warm path
with the cached file's views), so they rank alike.

*Brands* came next (stop 26): a product named by common words — "my Google Drive",
"with More Trees", "On Cloudflare" — is not rare, yet the request names it. A skill
whose whole brand (:func:`brand_keys`) the request spells as a name, in one to three
consecutive words (:meth:`NamedInRequest.runs`), gets :data:`BRAND_EVIDENCE`; the
longest brand takes its words, weekdays and months are not names, and one English
word is no brand ("Remind me that Sage is coming over" names no ``sage-automation``).
Non-English requests, which the English embeddings cannot read, get rare-word
evidence as their whole semantic half (brands of common words are no signal there:
every word is "not English"). On all six burned splits (464 answerable requests)
top-1 went 0.735 → 0.761 and top-3 0.810 → 0.825 (12 gained, none lost), no
no-skill request hinted;
``skilldeck-no-brands`` in the bench is the default before it (docs/routing.md,
"Fifth round").
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import NamedTuple

from skilldeck.skills.model.skill import Skill
from skilldeck.skills.routing._basics import MIN_CEILING
from skilldeck.skills.routing.tokenize import fold, stem, tokenize

__all__ = [
    "BRAND_EVIDENCE",
    "NAME_EVIDENCE_SCALE",
    "RARE_DOCUMENT_SHARE",
    "brand_keys",
    "name_evidence",
    "name_tokens",
    "rare_limit",
]

#: a word used by at most one skill in this many (at least one skill) is rare
RARE_DOCUMENT_SHARE = 450
#: name evidence = scale × (rare name words' share of the request's idf mass), ≤ 1
NAME_EVIDENCE_SCALE = 4.0

#: name evidence of a skill whose whole brand the request writes as a name
BRAND_EVIDENCE = 0.6
#: the longest run of words a request may write a brand with ("Simple Analytics")
BRAND_WORDS = 3
#: words that say what kind of skill wraps a product, not which product
_WRAPPER_WORDS = frozenset(
    ["automation", "integration", "integrations", "api", "mcp", "sdk", "cli", "connector"]
)

#: ``token → (idf, rows of the skills using it)``, None for a word no skill uses
Lookup = Callable[[str], tuple[float, Iterable[int]] | None]


def name_tokens(skill: Skill) -> list[str]:
    """The words of a skill's name field: its ``name`` and its folder's name (read
    without the frontmatter: a warm ranking never parses it)."""
    return tokenize(f"{skill.name} {os.path.basename(skill.folder_str)}")


def brand_keys(skill: Skill) -> frozenset[str]:
    """The product a skill's name names, as one lower-case key without separators or
    wrapper words: ``googledrive-automation`` and "Google Drive Automation" are both
    ``googledrive``, ``zoho_invoice-automation`` is ``zohoinvoice``."""
    keys = set()
    for name in (skill.name, os.path.basename(skill.folder_str)):
        pieces = _NON_ALNUM.split(fold(name).lower())
        key = "".join(p for p in pieces if p and p not in _WRAPPER_WORDS)
        if key:
            keys.add(key)
    return frozenset(keys)


def rare_limit(n_docs: int) -> int:
    """How many skills may use a word for it to count as rare in this catalog."""
    return max(1, n_docs // RARE_DOCUMENT_SHARE)


def name_evidence(
    query: str,
    tokens: Sequence[str],
    n_docs: int,
    lookup: Lookup,
    name_words: Callable[[int], frozenset[str]],
    brands: Callable[[int], frozenset[str]] | None = None,
) -> dict[int, float]:
    """Row → name evidence in (0, 1] of the skills whose name holds a rare word of
    the request (``tokens``, as BM25F scores them) that the request writes as a name
    (:class:`NamedInRequest`); the ceiling is BM25F's (unseen words at the idf of a
    word seen once, never below :data:`MIN_CEILING`). With ``brands`` (a row's
    :func:`brand_keys`), a skill whose whole brand the request writes as a name gets
    at least :data:`BRAND_EVIDENCE`."""
    unseen_idf = math.log1p((n_docs - 0.5) / 1.5) if n_docs else 1.0
    limit = rare_limit(n_docs)
    named = NamedInRequest(query)
    ceiling = 0.0
    mass: dict[int, float] = {}
    for token in dict.fromkeys(tokens):
        found = lookup(token)
        if found is None:
            ceiling += unseen_idf
            continue
        idf, rows = found
        ceiling += idf
        rows = list(rows)
        if len(rows) > limit:
            continue
        for row in rows:
            if token in name_words(row) and named.covers(token):
                mass[row] = mass.get(row, 0.0) + idf
    divisor = max(ceiling, MIN_CEILING)
    evidence = {row: min(1.0, NAME_EVIDENCE_SCALE * m / divisor) for row, m in mass.items()}
    if brands is not None:
        for row in _brand_rows(named, lookup, brands):
            evidence[row] = max(evidence.get(row, 0.0), BRAND_EVIDENCE)
    return evidence


def _brand_rows(
    named: NamedInRequest, lookup: Lookup, brands: Callable[[int], frozenset[str]]
) -> set[int]:
    """Rows of the skills whose whole brand (:func:`brand_keys`) the request writes as
    a name, in one to :data:`BRAND_WORDS` consecutive words: "in Timely", "my Google
    Drive", "via remove.bg". The longest brand wins its words: "Happy Scribe" names
    ``happy-scribe-automation``, not ``scribe`` too. Candidates are the skills using
    every word of the run (or its joined form), so only a handful of names are read."""
    out: set[int] = set()
    taken: set[int] = set()  # positions of words inside a brand already found
    for run in sorted(named.runs(), key=lambda r: len(r.positions), reverse=True):
        if taken.intersection(run.positions):
            continue
        candidates: set[int] | None = None
        for token in run.tokens:
            found = lookup(token)
            rows = set(found[1]) if found is not None else set()
            candidates = rows if candidates is None else candidates & rows
        joined = lookup(stem(run.key))
        if joined is not None:
            candidates = (candidates or set()) | set(joined[1])
        matched = {row for row in candidates or () if run.key in brands(row)}
        if matched and len(run.words) == 1 and _is_english(run.words[0]):
            continue  # "Tell Kit I'm late", "meet at Harvest": people and places too
        if matched:
            out |= matched
            taken.update(run.positions)
    return out


class Run(NamedTuple):
    """Consecutive words of a request written as names, as a brand key."""

    key: str
    tokens: tuple[str, ...]
    positions: range
    words: tuple[str, ...]


class NamedInRequest:
    """Which words of a request it writes as a *name*: a word English does not have
    ("Docmosis", "baserow", "2chat", "remove.bg"), or a capitalised word inside a
    sentence ("log two hours in Harvest"). "I felt tired" names no skill, even though
    ``felt-automation`` has a rare name word: ordinary words are the embeddings' job.

    English is simplemma's English lemma table (a dependency); it is loaded only when
    a rare name word is found, so a request naming nothing never pays for it.
    """

    def __init__(self, query: str) -> None:
        self._query = query
        self._words: list[tuple[str, int, tuple[str, ...]]] | None = None

    def runs(self) -> list[Run]:
        """Every run of one to :data:`BRAND_WORDS` consecutive words written like a
        product's name — capitalised inside a sentence ("Google Drive"), or spelled
        as no plain word is (a digit, a dot, an inner capital: "auth0", "remove.bg",
        "sevDesk") — with its key as :func:`brand_keys` writes a brand. Decided from
        the spelling alone: ranking a request never loads the English word list."""
        spelled = [
            (word, tokens) if self._spelled_as_name(word, start) else None
            for word, start, tokens in self._all_words()
        ]
        out: list[Run] = []
        for first in range(len(spelled)):
            for last in range(first, min(first + BRAND_WORDS, len(spelled))):
                run = spelled[first : last + 1]
                if any(w is None for w in run):
                    break
                words = [w for w in run if w is not None]
                key = "".join(_NON_ALNUM.sub("", fold(w).lower()) for w, _ in words)
                tokens = tuple(t for _, ts in words for t in ts[:1])
                out.append(Run(key, tokens, range(first, last + 1), tuple(w for w, _ in words)))
        return out

    def _spelled_as_name(self, word: str, start: int) -> bool:
        return _capitalised_inside(self._query, start, word) or _IDENTIFIER.search(word) is not None

    def _named(self, word: str, start: int) -> bool:
        return _capitalised_inside(self._query, start, word) or not _is_english(word)

    def _all_words(self) -> list[tuple[str, int, tuple[str, ...]]]:
        if self._words is None:
            self._words = [
                (m.group(), m.start(), tuple(tokenize(m.group())))
                for m in _WORD.finditer(self._query)
            ]
        return self._words

    def covers(self, token: str) -> bool:
        """Whether a word of the request written as a name has ``token``; only the
        words holding it are looked up."""
        return any(
            token in tokens and self._named(word, start)
            for word, start, tokens in self._all_words()
        )


_WORD = re.compile(r"[^\W_]+(?:[-_.][^\W_]+)*")
_PIECES = re.compile(r"[-_.]")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
#: spelled as no plain word is: a digit, a dot or dash inside, a capital after a letter
_IDENTIFIER = re.compile(r"\d|[^\W\d_][-_.][^\W_]|[a-z][A-Z]")
#: capitalised by English grammar, not because they name something
_CALENDAR = frozenset(
    [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)
_SENTENCE_END = re.compile(r"(?:^|[.!?:;\n])[\s\"'(\[]*$")


def _is_english(word: str) -> bool:
    """Every piece of ``word`` is an English word (no digits, known to simplemma)."""
    pieces = [p for p in _PIECES.split(word) if p]
    if not pieces or not all(p.isascii() and p.isalpha() for p in pieces):
        return False
    return all(_known_english(p.lower()) for p in pieces)


def _capitalised_inside(query: str, start: int, word: str) -> bool:
    """``word`` starts with a capital and does not start a sentence."""
    return (
        word[:1].isupper()
        and word.lower() not in _CALENDAR
        and not _SENTENCE_END.search(query[:start])
    )


@lru_cache(maxsize=4096)
def _known_english(word: str) -> bool:
    import simplemma  # lazy: ~0.3 s with its English table, only for a rare name word

    return bool(simplemma.is_known(word, lang="en"))
