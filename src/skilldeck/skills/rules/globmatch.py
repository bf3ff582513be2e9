"""A glob matcher that cannot backtrack catastrophically.

Globs used to be translated to Python regexes, and ``**/**/**/**/*`` or ``*a*a*a*a*b``
became nested ``(?:.*/)?`` / ``[^/]*`` groups whose backtracking is exponential on a
deep or long path: one Glob call (or one path rule from a skill's ``allowed-tools``)
could pin a CPU for hours. This matcher splits the pattern into ``/`` segments and runs
a set-of-states walk over the path's segments (``**`` segments consume any number of
path segments), matching each segment with the classic single-backtrack wildcard
algorithm. The cost is O(path segments × pattern segments × segment length²) at
worst, whatever the pattern.

Syntax: ``*`` and ``?`` within one segment, ``**`` as a whole segment spans segments
(also zero; inside a segment it counts as ``*``), ``[abc]`` / ``[!abc]`` / ``[a-z]``
classes and ``{a,b}`` alternatives (nesting allowed, at most
:data:`MAX_ALTERNATIVES` expansions) — both optional, so gitignore-style rules can
keep ``[`` and ``{`` literal.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

__all__ = ["MAX_ALTERNATIVES", "GlobMatcher", "compile_matcher"]

#: a pattern whose braces expand to more alternatives than this is refused
MAX_ALTERNATIVES = 256

_STAR = "*"
_DOUBLE = "**"


@dataclass(frozen=True)
class _Class:
    ranges: tuple[tuple[str, str], ...]
    negate: bool

    def hit(self, ch: str) -> bool:
        inside = any(lo <= ch <= hi for lo, hi in self.ranges)
        return inside != self.negate


_Token = str | _Class  # a literal char, "?", "*" or a class
_Segment = tuple[_Token, ...] | str  # tokens, or the multi-segment "**"


class GlobMatcher:
    """A compiled glob; :meth:`match` the whole path, :meth:`match_prefix` any of its
    leading-segment prefixes (a directory rule covers what lies below it)."""

    def __init__(self, alternatives: list[tuple[_Segment, ...]]) -> None:
        self._alternatives = alternatives

    def match(self, path: str) -> bool:
        parts = [p for p in path.split("/") if p]
        return any(_walk(alt, parts, prefix=False) for alt in self._alternatives)

    def match_prefix(self, path: str) -> bool:
        parts = [p for p in path.split("/") if p]
        return any(_walk(alt, parts, prefix=True) for alt in self._alternatives)


@lru_cache(maxsize=512)
def compile_matcher(pattern: str, *, classes: bool = True, braces: bool = True) -> GlobMatcher:
    """Compile ``pattern``; raises ValueError when its braces expand too far."""
    texts = _expand_braces(pattern) if braces else [pattern]
    alternatives = [_segments(text, classes=classes) for text in texts]
    return GlobMatcher(alternatives)


def _segments(text: str, *, classes: bool) -> tuple[_Segment, ...]:
    out: list[_Segment] = []
    for part in (p for p in text.split("/") if p):
        if len(part) > 1 and set(part) == {"*"}:
            if not (out and out[-1] == _DOUBLE):  # `**/**` is `**`
                out.append(_DOUBLE)
            continue
        out.append(_tokens(part, classes=classes))
    return tuple(out)


def _tokens(part: str, *, classes: bool) -> tuple[_Token, ...]:
    tokens: list[_Token] = []
    i = 0
    while i < len(part):
        ch = part[i]
        if ch == "*":
            if not (tokens and tokens[-1] == _STAR):
                tokens.append(_STAR)
        elif ch == "[" and classes and (parsed := _parse_class(part, i)) is not None:
            cls, i = parsed
            tokens.append(cls)
        else:
            tokens.append(ch)  # "?" stays "?" (any one char)
        i += 1
    return tuple(tokens)


def _parse_class(part: str, start: int) -> tuple[_Class, int] | None:
    i = start + 1
    negate = i < len(part) and part[i] in "!^"
    i += negate
    end = part.find("]", i + 1)
    if end < 0:
        return None
    body = part[i:end]
    ranges: list[tuple[str, str]] = []
    j = 0
    while j < len(body):
        if j + 2 < len(body) and body[j + 1] == "-":
            ranges.append((body[j], body[j + 2]))
            j += 3
        else:
            ranges.append((body[j], body[j]))
            j += 1
    return _Class(tuple(ranges), negate), end


def _one(token: _Token, ch: str) -> bool:
    if isinstance(token, _Class):
        return token.hit(ch)
    return token == "?" or token == ch


def _segment_match(tokens: tuple[_Token, ...], text: str) -> bool:
    """Wildcard match with one backtrack point (the last ``*``): O(len × tokens)."""
    ti = si = 0
    star_t, star_s = -1, 0
    while si < len(text):
        if ti < len(tokens) and tokens[ti] == _STAR:
            star_t, star_s = ti, si
            ti += 1
        elif ti < len(tokens) and _one(tokens[ti], text[si]):
            ti += 1
            si += 1
        elif star_t >= 0:
            ti, star_s = star_t + 1, star_s + 1
            si = star_s
        else:
            return False
    while ti < len(tokens) and tokens[ti] == _STAR:
        ti += 1
    return ti == len(tokens)


def _closure(states: set[int], pattern: tuple[_Segment, ...]) -> set[int]:
    """Add the states reachable by letting ``**`` match zero segments."""
    out = set(states)
    todo = list(states)
    while todo:
        p = todo.pop()
        if p < len(pattern) and pattern[p] == _DOUBLE and p + 1 not in out:
            out.add(p + 1)
            todo.append(p + 1)
    return out


def _walk(pattern: tuple[_Segment, ...], parts: list[str], *, prefix: bool) -> bool:
    end = len(pattern)
    states = _closure({0}, pattern)
    if prefix and end in states and parts:
        return True
    for part in parts:
        nxt: set[int] = set()
        for p in states:
            if p >= end:
                continue
            seg = pattern[p]
            if seg == _DOUBLE:
                nxt.add(p)
            elif not isinstance(seg, str) and _segment_match(seg, part):
                nxt.add(p + 1)
        states = _closure(nxt, pattern)
        if not states:
            return False
        if prefix and end in states:
            return True
    return end in states


def _expand_braces(pattern: str) -> list[str]:
    """``a{b,c{d,e}}`` → ``[ab, acd, ace]``; unmatched braces stay literal."""
    results = [""]
    i = 0
    while i < len(pattern):
        close = _matching_brace(pattern, i) if pattern[i] == "{" else -1
        if close < 0:
            results = [r + pattern[i] for r in results]
            i += 1
            continue
        options: list[str] = []
        for option in _split_top(pattern[i + 1 : close]):
            options.extend(_expand_braces(option))
        results = [r + o for r in results for o in options]
        if len(results) > MAX_ALTERNATIVES:
            raise ValueError(
                f"the pattern's {{…}} alternatives expand to more than {MAX_ALTERNATIVES} "
                "patterns; split it into several simpler patterns"
            )
        i = close + 1
    return results


def _matching_brace(text: str, start: int) -> int:
    depth = 0
    for j in range(start, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return -1


def _split_top(body: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in body:
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += (ch == "{") - (ch == "}")
        current.append(ch)
    parts.append("".join(current))
    return parts
