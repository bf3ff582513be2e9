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

*Brands* came next: a product named by common words — "my Google Drive", "with More
Trees", "Zoho Invoice" — is not rare, yet the request names it. A product wrapper
(a wrapper word in its name or folder: ``googledrive-automation``) whose whole brand
(:func:`brand_keys`) the request spells as a name, in one to three consecutive words
(:meth:`NamedInRequest.runs`), gets :data:`BRAND_EVIDENCE`. The longest brand takes
its words; weekdays, months and articles are not names; a run stops at punctuation;
and one word is a brand only when spelled as no plain word is ("auth0", "remove.bg",
not "v0"), or when it stands alone right after a word that introduces a tool ("in
Front, assign…", "through Carbone") and qualifies nothing after it ("in Linear
algebra class" does not): elsewhere a lone capital is a person or a place as often as
a product ("Remind me that Sage is coming over"). Non-English requests, which the
English embeddings cannot read, get rare-word evidence as their whole semantic half,
and no brands: their keyword scores are so small that a brand's floor decides the
ranking, and a product named as the context wins ("OpenAIのSoraで…" ranked the OpenAI
wrapper above Sora's skill on a fresh split). On the eight splits, all burned by then
(764 answerable requests), brands took top-1 from 547 to 565 and no no-skill request
was hinted; of 144 everyday sentences with names in them, one more is hinted (a
"Stack Exchange thread"). ``skilldeck-no-brands`` in the bench is the default before
it. The eighth round's tool-word rule took the burned splits from 719 to 728 of 964
and moved nothing on two fresh catalog-shaped splits (docs/routing.md, "Fifth round"
to "Eighth round").
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
from skilldeck.skills.routing.tokenize import STOPWORDS, fold, tokenize

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
    """The product a skill wraps, as one lower-case key without separators or wrapper
    words: ``googledrive-automation`` and "Google Drive Automation" are both
    ``googledrive``, ``zoho_invoice-automation`` is ``zohoinvoice``. Only a skill
    named as a wrapper (a word of :data:`_WRAPPER_WORDS` in its name or folder) has
    one: ``data-scientist`` is a role, not a product ("she was hired as a Data
    Scientist" asks for no skill). The folder's key counts when the name's key
    starts with it (``pymc`` for ``pymc-bayesian-automation``), never alone: nested
    folders such as ``zoom-meeting-sdk/ios`` would make ``ios`` a brand."""
    name = _NON_ALNUM.split(fold(skill.name).lower())
    folder = _NON_ALNUM.split(fold(os.path.basename(skill.folder_str)).lower())
    if not _WRAPPER_WORDS.intersection(name + folder):
        return frozenset()
    named, in_folder = (
        "".join(p for p in pieces if p not in _WRAPPER_WORDS) for pieces in (name, folder)
    )
    return frozenset(k for k in (named, in_folder if named.startswith(in_folder) else "") if k)


def brand_index(skills: Sequence[Skill]) -> dict[str, tuple[int, ...]]:
    """Brand key → rows of the skills wrapping that product (:func:`brand_keys`)."""
    rows: dict[str, list[int]] = {}
    for row, skill in enumerate(skills):
        for key in brand_keys(skill):
            rows.setdefault(key, []).append(row)
    return {key: tuple(found) for key, found in rows.items()}


def rare_limit(n_docs: int) -> int:
    """How many skills may use a word for it to count as rare in this catalog."""
    return max(1, n_docs // RARE_DOCUMENT_SHARE)


def name_evidence(
    query: str,
    tokens: Sequence[str],
    n_docs: int,
    lookup: Lookup,
    name_words: Callable[[int], frozenset[str]],
    brands: Callable[[str], Sequence[int]] | None = None,
) -> dict[int, float]:
    """Row → name evidence in (0, 1] of the skills whose name holds a rare word of
    the request (``tokens``, as BM25F scores them) that the request writes as a name
    (:class:`NamedInRequest`); the ceiling is BM25F's (unseen words at the idf of a
    word seen once, never below :data:`MIN_CEILING`). With ``brands`` (a brand key's
    rows, as :func:`brand_index` maps them), a skill whose whole brand the request
    spells as a name gets at least :data:`BRAND_EVIDENCE`."""
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
        for row in _brand_rows(named, brands):
            evidence[row] = max(evidence.get(row, 0.0), BRAND_EVIDENCE)
    return evidence


def _brand_rows(named: NamedInRequest, brands: Callable[[str], Sequence[int]]) -> set[int]:
    """Rows of the skills whose whole brand (:func:`brand_keys`) the request spells as
    a name, in one to :data:`BRAND_WORDS` consecutive words: "my Google Drive", "via
    remove.bg". The longest brand takes its words: "Happy Scribe" names
    ``happy-scribe-automation``, not ``scribe`` too. One word is a brand only when it
    is spelled as no plain word is (``auth0``, ``sevDesk``, ``remove.bg``): a lone
    capitalised word is a person, a place or a title as often as a product ("Tell
    Kit I'm late", "meet at Harvest"), and those are left to the rare-word evidence,
    unless a tool word introduces it (:meth:`NamedInRequest.one_word_brand`)."""
    out: set[int] = set()
    taken: set[int] = set()  # positions of words inside a brand already found
    for run in sorted(named.runs(), key=lambda r: len(r.positions), reverse=True):
        if taken.intersection(run.positions):
            continue
        if len(run.words) == 1 and not named.one_word_brand(run):
            continue
        matched = brands(run.key)
        if matched:
            out.update(matched)
            taken.update(run.positions)
    return out


class Run(NamedTuple):
    """Consecutive words of a request spelled as names, as a brand key; ``alone``
    when no word spelled as a name stands right before or after it."""

    key: str
    positions: range
    words: tuple[str, ...]
    alone: bool


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
        self._words: list[tuple[str, bool, tuple[str, ...]]] | None = None
        #: per word, the text between it and the word before ("" for the first)
        self._gaps: list[str] = []

    def runs(self) -> list[Run]:
        """Every run of one to :data:`BRAND_WORDS` consecutive words spelled like a
        product's name — capitalised inside a sentence ("Google Drive"), or spelled
        as no plain word is (a digit, a dot, an inner capital: "auth0", "remove.bg",
        "sevDesk"); an article ("The", "A") is never one — with its key as
        :func:`brand_keys` writes a brand, so a wrapper word inside a run is skipped
        ("PDF API IO" is ``pdf-api-io-automation``'s ``pdfio``, "the Claude API"
        ``claude``; a leading one stays: "API Developer" is a job). A run never
        crosses punctuation ("Slack、Notion", "Sage, Kit"), and a number is no name
        ("in Timely 2 hours"). Decided from the spelling alone: finding runs never
        loads the English word list."""
        words = self._all_words()
        spelled = [word if _spelled_as_name(word, inside) else None for word, inside, _ in words]
        linked = [i > 0 and self._joined(i) for i in range(len(words))]
        out: list[Run] = []
        for first in range(len(spelled)):
            for last in range(first, min(first + BRAND_WORDS, len(spelled))):
                names = tuple(w for w in spelled[first : last + 1] if w is not None)
                if len(names) < last + 1 - first or (last > first and not linked[last]):
                    break  # a word not spelled as a name, or punctuation, ends it
                pieces = [_NON_ALNUM.sub("", fold(w).lower()) for w in names]
                pieces[1:] = [p for p in pieces[1:] if p not in _WRAPPER_WORDS]
                alone = (first == 0 or spelled[first - 1] is None or not linked[first]) and (
                    last + 1 == len(spelled) or spelled[last + 1] is None or not linked[last + 1]
                )
                key = "".join(pieces)
                if key and not _VERSION.fullmatch(key):
                    out.append(Run(key, range(first, last + 1), names, alone))
        return out

    def one_word_brand(self, run: Run) -> bool:
        """Whether a run of one word may name a product by itself: spelled as no plain
        word is ("auth0", "sevDesk", "remove.bg"); or standing alone right after a word
        that introduces a tool ("in Front, assign…", "through Carbone", "On
        Cloudflare, add…"). A run is never a number or a version (:meth:`runs`)."""
        word = run.words[0]
        if _IDENTIFIER.search(word):
            return True
        if not run.alone:  # "Cloudflare Workers" is a product, not Cloudflare's
            return False
        at = run.positions.start
        return (
            at > 0
            and self._joined(at)  # "Once the lights came on, Kit…" has no tool word
            and self._all_words()[at - 1][0].lower() in _TOOL_WORDS
            and not self._qualifies_next(at)
        )

    def _qualifies_next(self, at: int) -> bool:
        """Whether the word at ``at`` is a person's or a modifier: followed by 's ("in
        Kit's flat") or by a plain word it qualifies ("in Linear algebra class", "into
        Apollo house"), not by punctuation or a function word ("in Front, assign…",
        "through Carbone and…", "in Timely against…")."""
        words = self._all_words()
        if at + 1 >= len(words):
            return False
        word, gap = words[at + 1][0], self._gaps[at + 1]
        if gap in ("'", "’") and word.lower() == "s":
            return True
        return not gap.strip() and word.islower() and word not in STOPWORDS

    def _joined(self, at: int) -> bool:
        """Only spaces between the word at ``at`` and the one before: no comma, no "、",
        no full stop, so the two may belong to one name."""
        return not self._gaps[at].strip()

    def _all_words(self) -> list[tuple[str, bool, tuple[str, ...]]]:
        """``(word, capitalised inside a sentence, tokens)`` of every word, in one pass
        (a long request costs linear time)."""
        if self._words is not None:
            return self._words
        words: list[tuple[str, bool, tuple[str, ...]]] = []
        end = 0
        for m in _WORD.finditer(self._query):
            word, gap = m.group(), self._query[end : m.start()]
            starts = (not words and _LEADING.fullmatch(gap) is not None) or bool(
                _SENTENCE_END.search(gap)
            )
            inside = word[:1].isupper() and not starts and word.lower() not in _CALENDAR
            words.append((word, inside, tuple(tokenize(word))))
            self._gaps.append(gap)
            end = m.end()
        self._words = words
        return words

    def covers(self, token: str) -> bool:
        """Whether a word of the request written as a name has ``token``; only the
        words holding it are looked up."""
        return any(
            token in tokens and (inside or not _is_english(word))
            for word, inside, tokens in self._all_words()
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
#: the text between two words when the second starts a sentence; before the first word
_SENTENCE_END = re.compile(r"[.!?:;\n][\s\"'(\[]*$")
_LEADING = re.compile(r"[\s\"'(\[]*")
_VERSION = re.compile(r"[vV]?\d+(?:[._-]\d+)*")
#: articles: a title's "The" is no part of a product's name
_ARTICLES = frozenset(["a", "an", "the"])


#: words that introduce the tool a request is done in: "in Front", "through Carbone"
_TOOL_WORDS = frozenset(["in", "into", "on", "via", "through", "using"])


def _spelled_as_name(word: str, inside: bool) -> bool:
    """Capitalised inside a sentence or spelled as no plain word is; never an article
    or a bare number ("in Timely 2 hours")."""
    if word.lower() in _ARTICLES or word.isdigit():
        return False
    return inside or _IDENTIFIER.search(word) is not None


def _is_english(word: str) -> bool:
    """Every piece of ``word`` is an English word (no digits, known to simplemma)."""
    pieces = [p for p in _PIECES.split(word) if p]
    if not pieces or not all(p.isascii() and p.isalpha() for p in pieces):
        return False
    return all(_known_english(p.lower()) for p in pieces)


@lru_cache(maxsize=4096)
def _known_english(word: str) -> bool:
    import simplemma  # lazy: ~0.3 s with its English table, only for a rare name word

    return bool(simplemma.is_known(word, lang="en"))
