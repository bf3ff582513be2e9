"""Tokenisation for skill routing: identifiers, accents, plurals and CJK, fast.

Skill names are identifiers (``gh-fix-ci``, ``pdf_tools``, ``PostgreSQL``) and users
type them every which way ("fix the CI on GitHub", "postgres", "pdf tools"), so a
compound is split into its parts *and* kept joined: ``next.js`` → ``next``, ``js``,
``nextjs``. Accents are folded (NFKD) so ``análisis`` meets ``analisis``; a light
suffix stripper conflates ``tests/testing/tested`` → ``test`` without the surprises
of a full stemmer; Chinese/Japanese/Korean runs become character bigrams (the usual
trick when there are no spaces); Cyrillic, Greek and other scripts stay words.

Document and query go through the same :func:`tokenize`;
:func:`skilldeck.skills.routing.multilingual.tokenize_query` additionally adds English
equivalents of common non-English words, because almost every skill is written in
English (the lexicon builds on this module, never the other way round).

Every compound's tokens are memoised, so indexing 20 MB of SKILL.md bodies costs a
regex pass plus a dictionary lookup per word. The pattern with the CJK ranges costs
~15 ms to compile, a tenth of a warm ``skilldeck skills match`` (``python -m bench
startup``), so it is compiled on first non-ASCII text; ASCII text, which it would
match exactly as :data:`_ASCII_TOKEN_RE` does, goes through that one (tests compare).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = [
    "CJK_COMPATIBILITY_RANGE",
    "CJK_RANGES",
    "HIRAGANA_RANGES",
    "STOPWORDS",
    "fold",
    "stem",
    "tokenize",
]

#: Scripts written without spaces — kana, CJK ideographs (Extension A and Unified),
#: Hangul syllables — as regex class ranges. The one definition: the lexicon's and the
#: dictionary's non-English checks (:mod:`skilldeck.skills.routing.multilingual`) use it.
CJK_RANGES = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
#: CJK Compatibility Ideographs. :func:`fold` (NFKD) maps all but twelve of them
#: (U+FA0E, U+FA0F, U+FA11…, unified ideographs themselves) onto :data:`CJK_RANGES`.
#: Only the tokeniser counts those twelve as CJK (bigrams); the multilingual checks
#: read them as the letters of a word (non-English as any script past Latin is, but
#: looked up whole). Kept apart, by name, because the two answers differ (tests pin both).
CJK_COMPATIBILITY_RANGE = r"\uf900-\ufaff"
#: Hiragana and the prolonged sound mark (ー): a CJK piece made only of these is
#: Japanese grammar (particles, endings), never a dictionary headword worth looking up.
HIRAGANA_RANGES = r"\u3040-\u309f\u30fc"
_CJK = CJK_RANGES + CJK_COMPATIBILITY_RANGE
#: Chinese function characters dropped before bigramming (they glue every phrase).
_CJK_FUNCTION = "的了是在和与及或我你您他她它们这那个把被吗呢吧啊也都就请帮要一下里中对用从给"
_TOKEN_PATTERN = rf"(?P<cjk>[{_CJK}]+)|(?P<word>[^\W_{_CJK}]+(?:[-_.][^\W_{_CJK}]+)*)"
#: :data:`_TOKEN_PATTERN` for ASCII text: no CJK run can match, and ``[^\W_]`` is
#: ``[A-Za-z0-9]``; the empty ``cjk`` group keeps ``findall``'s pairs
_ASCII_TOKEN_RE = re.compile(r"(?P<cjk>(?!x)x)|(?P<word>[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*)")
_COMBINING_RE = re.compile(r"[\u0300-\u036f]")
#: ``A/B``, ``CI/CD``, ``I/O``: short pieces around a slash form one compound
_SLASH_RE = re.compile(r"(?<![\w/])([^\W_]{1,3})/(?=[^\W_]{1,3}(?![\w/]))")
_SEPARATOR_RE = re.compile(r"[-_.]")
_CAMEL_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_CJK_FUNCTION_RE = re.compile(f"[{_CJK_FUNCTION}]+")
_VOWELS = frozenset("aeiouy")
_NO_UNDOUBLE = frozenset("lsz")

_STOPWORDS_TEXT = """
a about above after again against all also am an and any are as at be because been
before being below between both but by can could did do does doing done down during each
etc few for from further had has have having he her here hers herself him himself his how
i if in into is it its itself just let lets me might more most must my myself no nor not
now of off on once only or other our ours ourselves out over own per please same shall she
should so some such than that the their theirs them themselves then there these they this
those through to too under until up upon us very via was we were what whatever when where
whether which while who whom whose why will with within without would you your yours
yourself yourselves don doesn didn isn aren wasn weren won wouldn shouldn couldn ve ll re
s t l d j m n qu
hi hello hey thanks thank ok okay pls need needs want wants like get got make sure something
anything someone somebody thing things stuff lot really quite bit kind sort maybe
el la los las un una unos unas de del al y o u en con por para que qué como cómo es son
está están ser estar mi mis tu tus su sus lo le les se me te nos este esta estos estas ese
esa eso esto hay muy más pero sin sobre entre cuando donde quiero necesito puedes podrías
ayuda ayúdame favor hacer
o os as um uma uns umas do da dos das no na nos nas em com pelo pela pelos pelas que é são
meu minha meus minhas seu sua seus suas isso isto este esta esse essa quero preciso pode
estao estamos esta estou ele ela eles elas nao sim
você voce ajuda ajude por favor fazer
le la les un une des du de d l et ou en dans avec pour par sur que qui quoi est sont être
mon ma mes ton ta tes son sa ses ce cet cette ces il elle ils elles nous vous je j moi
veux voudrais besoin aide aider peux pouvez faire s'il plait plaît
der die das den dem des ein eine einen einem einer und oder in im mit für von zu zum zur
ist sind sein mein meine meinen ich du er sie es wir ihr mir mich dich bitte kannst können
möchte will brauche hilf hilfe machen auf aus bei nach über wie was wer
"""
#: function words of English, Spanish, Portuguese, French and German, plus request
#: filler ("please", "I need"), all accent-folded; they carry no routing signal.
STOPWORDS: frozenset[str] = frozenset(
    _COMBINING_RE.sub("", unicodedata.normalize("NFKD", w)) for w in _STOPWORDS_TEXT.lower().split()
)


def fold(text: str) -> str:
    """Compatibility-decompose and drop combining accents: ``Ａnálisis`` → ``Analisis``."""
    if text.isascii():
        return text
    return _COMBINING_RE.sub("", unicodedata.normalize("NFKD", text))


def stem(word: str) -> str:
    """Light English suffix stripping: plurals, ``-ing``, ``-ed``, a final ``e``.

    Deliberately weaker than Porter: it only conflates inflections
    (``queries``→``query``, ``images``/``image``→``imag``, ``running``→``run``) and
    leaves derivations alone, so ``creation`` and ``create`` stay apart. The result
    is an index key, not a word. Non-ASCII words and short words pass unchanged.
    """
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    word = _strip_plural(word)
    word = _strip_verb_suffix(word)
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def _strip_plural(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith(("ches", "shes", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _strip_verb_suffix(word: str) -> str:
    for suffix, min_len in (("ing", 6), ("ied", 5), ("ed", 5)):
        if word.endswith(suffix) and len(word) >= min_len:
            base = word[: -len(suffix)]
            if suffix == "ied":
                return base + "y"
            if not _VOWELS.intersection(base):
                return word
            if len(base) > 2 and base[-1] == base[-2] and base[-1] not in _VOWELS | _NO_UNDOUBLE:
                base = base[:-1]
            return base
    return word


def _split_parts(compound: str) -> list[str]:
    """``gh-fix-ci`` → gh fix ci; ``parseHTTPResponse`` → parse HTTP Response."""
    parts: list[str] = []
    for piece in _SEPARATOR_RE.split(compound):
        if not piece:
            continue
        if piece.isascii() and not piece.islower() and not piece.isupper():
            parts.extend(_CAMEL_RE.findall(piece) or [piece])
        elif piece.isascii() and any(c.isdigit() for c in piece) and not piece.isdigit():
            parts.extend(_CAMEL_RE.findall(piece.lower()) or [piece])
        else:
            parts.append(piece)
    return parts


def _whole_pieces(compound: str, part_count: int) -> list[str]:
    """The pieces between separators that were split further, kept whole too:
    ``-2chat-automation`` → ``2chat``, ``Auth0-admin`` → ``auth0``; a product name
    a request spells alone ("through 2chat") must meet the skill's name."""
    pieces = [p for p in _SEPARATOR_RE.split(compound) if p]
    if len(pieces) < 2 or len(pieces) == part_count:
        return []
    whole = [p.lower() for p in pieces if len(_split_parts(p)) > 1]
    return [stem(w) for w in whole if w not in STOPWORDS]


@lru_cache(maxsize=1 << 18)
def _word_tokens(compound: str) -> tuple[str, ...]:
    """Tokens of one identifier-like word (already accent-folded, original case)."""
    if compound.lower() in STOPWORDS:
        return ()
    parts = _split_parts(compound)
    lowered = [p.lower() for p in parts]
    out: list[str] = []
    if len(lowered) == 1:
        word = lowered[0]
        if word not in STOPWORDS:
            out.append(stem(word))
        return tuple(out)
    for part in lowered:
        if len(part) > 1 and part not in STOPWORDS:
            out.append(stem(part))
    out.extend(_whole_pieces(compound, len(parts)))
    joined = "".join(lowered)
    if joined not in STOPWORDS:
        out.append(stem(joined))
    return tuple(out)


@lru_cache(maxsize=1 << 16)
def _cjk_tokens(run: str) -> tuple[str, ...]:
    """Character bigrams of each run between function characters (unigram if alone)."""
    out: list[str] = []
    for chunk in _CJK_FUNCTION_RE.split(run):
        if len(chunk) == 1:
            out.append(chunk)
        else:
            out.extend(chunk[i : i + 2] for i in range(len(chunk) - 1))
    return tuple(out)


@lru_cache(maxsize=1)
def _token_re() -> re.Pattern[str]:
    return re.compile(_TOKEN_PATTERN)


def tokenize(text: str) -> list[str]:
    """Index/query tokens of ``text``; the same function serves both sides."""
    tokens: list[str] = []
    extend = tokens.extend
    text = fold(text)
    if "/" in text:
        text = _SLASH_RE.sub(r"\1-", text)
    pattern = _ASCII_TOKEN_RE if text.isascii() else _token_re()
    for cjk, word in pattern.findall(text):
        extend(_word_tokens(word) if word else _cjk_tokens(cjk))
    return tokens
