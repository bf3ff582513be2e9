"""Per-turn skill hints: remind the model of a relevant skill when it matters.

Models forget the ``<available_skills>`` block thousands of tokens into a session, and
a catalog of hundreds of skills is easy to skim past. Before each user message the
agent asks :func:`skill_hint` whether some skills clearly match the message; if any
score at least the threshold, it adds one short, clearly delimited line naming them::

    <skill-hint>Skills that may help with this request: pdf (Extract text and tables
    from PDF files…), markitdown (Convert files…). Load one with the Skill tool before
    starting if it fits.</skill-hint>

Nothing is added when nothing passes the threshold, so ordinary chat stays clean.
Scores are the matcher's normalised scores in [0, 1] (see ``skills/routing/match.py``);
config: ``[skills.hints] enabled, k, threshold``.

Routing is paid only when it is used: :func:`registry_hinter`,
:func:`registry_ranking` and :func:`registry_matches` import the matcher (numpy, the
BM25F index, code skills' ``can_handle``) on the first message that needs a ranking,
and a message is not ranked at all when the registry holds no skill a hint could
name. This module is the one place that import happens, so the Skill tool's search
and the MCP catalog rank through it too and import nothing heavy themselves.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from skilldeck.skills.model.skill import Skill

if TYPE_CHECKING:
    from skilldeck.config import Settings
    from skilldeck.skills.routing.match import Match, RegistryLike

__all__ = [
    "HINT_CLOSE",
    "HINT_OPEN",
    "hint_from_settings",
    "registry_hinter",
    "registry_matches",
    "registry_ranking",
    "skill_hint",
]

HINT_OPEN = "<skill-hint>"
HINT_CLOSE = "</skill-hint>"
_DESCRIPTION_CHARS = 80
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_ANGLE = str.maketrans({"<": "‹", ">": "›"})


class Ranker(Protocol):
    """What a hint needs: :class:`~skilldeck.skills.routing.match.SkillMatcher`'s ``rank``."""

    def rank(self, query: str, *, k: int = 10) -> Sequence[Match]: ...


def skill_hint(
    matcher: Ranker,
    message: str,
    *,
    k: int,
    threshold: float,
    usable: Callable[[Skill], bool] | None = None,
) -> tuple[str, list[str]] | None:
    """``(hint text, skill names)`` for the top ``k`` skills scoring ≥ ``threshold``.

    Skills the model may not invoke (``disable-model-invocation``) or that are
    unavailable here (``usable`` says no: the registry's view, e.g.
    ``SkillRegistry.is_available``) are never hinted. None when nothing passes.
    """
    if k <= 0 or not message.strip():
        return None
    picked = [
        m
        for m in matcher.rank(message, k=k * 3)
        if m.score >= threshold and hintable(m.skill, usable)
    ][:k]
    if not picked:
        return None
    listed = ", ".join(f"{m.name} ({_short(m.skill.description)})" for m in picked)
    text = (
        f"{HINT_OPEN}Skills that may help with this request: {listed}. "
        f"Load one with the Skill tool before starting if it fits.{HINT_CLOSE}"
    )
    return text, [m.name for m in picked]


def hint_from_settings(
    matcher: Ranker, message: str, settings: Settings
) -> tuple[str, list[str]] | None:
    """:func:`skill_hint` with ``settings.skills.hints``; None when hints are off."""
    hints = settings.skills.hints
    if not hints.enabled:
        return None
    return skill_hint(matcher, message, k=hints.k, threshold=hints.threshold)


def hintable(skill: Skill, usable: Callable[[Skill], bool] | None = None) -> bool:
    """Whether a hint may name ``skill``: usable here (``usable``, the registry's
    view; None: every skill is) and invocable by the model."""
    if skill.metadata.disable_model_invocation:
        return False
    return usable is None or usable(skill)


def registry_hinter(
    registry: RegistryLike,
    *,
    k: int,
    threshold: float,
    usable: Callable[[Skill], bool] | None = None,
) -> Callable[[str], tuple[str, list[str]] | None]:
    """A per-message hinter over ``registry`` (``usable``: its view of which skills
    can be used): it ranks nothing (and builds no index) for an empty message or
    while no skill is hintable."""

    def hint(message: str) -> tuple[str, list[str]] | None:
        if k <= 0 or not message.strip():
            return None
        if not any(hintable(s, usable) for s in registry.list()):
            return None
        matcher = _matcher(registry)
        return skill_hint(matcher, message, k=k, threshold=threshold, usable=usable)

    return hint


def registry_ranking(registry: RegistryLike, task: str, *, k: int) -> list[str]:
    """Skill names most relevant to ``task`` first (for a level-1 block that must be
    shortened); nothing is ranked for an empty task."""
    if not task.strip():
        return []
    return [m.name for m in _matcher(registry).rank(task, k=k)]  # rank_for_disclosure


def registry_matches(registry: RegistryLike, query: str, *, k: int) -> list[Match]:
    """The ``k`` best skills of ``registry`` for ``query``, best first (skills scoring 0
    left out); the matcher is imported on this first call. Raises ImportError when the
    matcher cannot be imported (callers fall back to plain word overlap)."""
    return list(_matcher(registry).rank(query, k=k))


def _matcher(registry: RegistryLike) -> Ranker:
    """The registry's matcher; numpy and the BM25F index (~50 ms of imports) are paid
    only by a run that hints or ranks."""
    from skilldeck.skills.routing.match import SkillMatcher  # lazy: numpy, BM25F index

    return SkillMatcher.for_registry(registry)


def _short(description: str) -> str:
    """The first sentence, at most ~80 characters, without angle brackets (the hint
    is a pseudo-tag, a description must not be able to close it)."""
    text = " ".join(description.split()).translate(_ANGLE)
    first = _SENTENCE_END.split(text, maxsplit=1)[0].rstrip(".")
    if len(first) <= _DESCRIPTION_CHARS:
        return first
    cut = first[: _DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return f"{cut}…"
