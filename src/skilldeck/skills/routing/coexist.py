"""Before installing a skill: whom would it take requests from, and what would it
push out of the level-1 block?

:func:`coexistence` ranks every existing skill's own should-trigger evals twice, with
the catalog as it is and with the new skill added, and lists the requests a skill
took before and no longer takes (and who takes them now). It also renders the
level-1 ``<available_skills>`` block at the agent's budget both ways and counts the
skills left out and the descriptions shortened — what every session would lose.

Both sides are what an agent here sees: a skill that is not ``usable`` (the registry's
view: unavailable on this machine) still ranks but takes no request and is not in
the block; the new skill counts as usable (it is being installed to be used).

Both sides must also be *ranked* as an agent ranks them, or a skill that would steal
requests under the default ranking (words fused with embeddings) is reported as
harmless: :func:`compare_catalogs` takes the two catalogs as :class:`RankedCatalog`
(``skills eval --coexist`` builds each matcher with ``SkillMatcher.for_registry``, the
agent's own), and :func:`coexistence` builds them from skill lists, fusing in
``embedder`` when one is given.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from skilldeck.skills.execution import render_available_skills
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.routing._embeddings import Embedder
from skilldeck.skills.routing.evals import TriggerCase, Usable, router_picker
from skilldeck.skills.routing.match import SkillMatcher

__all__ = [
    "BlockFit",
    "Coexistence",
    "LostRequest",
    "RankedCatalog",
    "block_fit",
    "coexistence",
    "compare_catalogs",
]

_LEFT_OUT = re.compile(r"^(\d+) more skills? (?:is|are) not shown", re.MULTILINE)
_DESCRIPTION = re.compile(r"<description>(.*?)</description>", re.DOTALL)


@dataclass(frozen=True)
class LostRequest:
    """A request ``skill`` took before the new skill came and loses after."""

    skill: str
    query: str
    taken_by: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"skill": self.skill, "query": self.query, "taken_by": self.taken_by}


@dataclass(frozen=True)
class BlockFit:
    """How the level-1 block fits its budget: skills left out, descriptions cut."""

    skills: int
    left_out: int
    shortened: int

    def to_dict(self) -> dict[str, int]:
        return {"skills": self.skills, "left_out": self.left_out, "shortened": self.shortened}


@dataclass
class Coexistence:
    """The answer of :func:`coexistence`."""

    new_skill: str
    checked: int
    lost: list[LostRequest] = field(default_factory=list)
    before: BlockFit = BlockFit(0, 0, 0)
    after: BlockFit = BlockFit(0, 0, 0)

    @property
    def losers(self) -> list[str]:
        return sorted({r.skill for r in self.lost})

    def to_dict(self) -> dict[str, Any]:
        return {
            "new_skill": self.new_skill,
            "checked_requests": self.checked,
            "skills_losing_top1": self.losers,
            "lost": [r.to_dict() for r in self.lost],
            "level1_before": self.before.to_dict(),
            "level1_after": self.after.to_dict(),
            "newly_left_out": max(0, self.after.left_out - self.before.left_out),
            "newly_shortened": max(0, self.after.shortened - self.before.shortened),
        }


def block_fit(skills: Sequence[Skill], *, budget: int) -> BlockFit:
    """Render the level-1 block at ``budget`` and count what did not fit in full."""
    block = render_available_skills(skills, budget=budget)
    found = _LEFT_OUT.search(block)
    full = {" ".join(s.description.split()) for s in skills}
    shown = _DESCRIPTION.findall(block)
    shortened = sum(1 for d in shown if _unescape(d) not in full)
    return BlockFit(len(shown) + (int(found.group(1)) if found else 0), _count(found), shortened)


@dataclass(frozen=True)
class RankedCatalog:
    """One side of the comparison: the catalog's matcher, built as the agent builds
    it (its skills, embeddings, dictionaries), and which of its skills an agent here
    can use (None: all)."""

    matcher: SkillMatcher
    usable: Usable = None

    def can_use(self, skill: Skill) -> bool:
        return self.usable is None or self.usable(skill)


def coexistence(
    existing: Sequence[Skill],
    new: Skill,
    cases: Sequence[TriggerCase],
    *,
    threshold: float,
    budget: int,
    usable: Usable = None,
    embedder: Embedder | None = None,
) -> Coexistence:
    """What adding ``new`` to ``existing`` would cost (see the module docstring), each
    catalog indexed from its skills, ranked by words fused with ``embedder`` (None: by
    words only). ``new`` replaces an existing skill of its name. ``cases`` are the
    existing skills' evals; ``usable``: which existing skills an agent here can use."""
    kept = [s for s in existing if s.name != new.name]
    before = SkillMatcher.from_skills(existing, embedder=embedder)
    after = SkillMatcher.from_skills([*kept, new], embedder=embedder)
    return compare_catalogs(
        RankedCatalog(before, usable),
        RankedCatalog(after, usable),
        new.name,
        cases,
        threshold=threshold,
        budget=budget,
    )


def compare_catalogs(
    before: RankedCatalog,
    after: RankedCatalog,
    new_name: str,
    cases: Sequence[TriggerCase],
    *,
    threshold: float,
    budget: int,
) -> Coexistence:
    """Which of ``cases`` (should-trigger ones, of skills other than ``new_name``) a
    skill takes in ``before`` and no longer takes in ``after``, the catalog holding the
    new skill ``new_name`` (usable there whatever ``after.usable`` says: it is being
    installed to be used), and the level-1 block of each at ``budget``."""

    def usable_after(skill: Skill) -> bool:
        return skill.name == new_name or after.can_use(skill)

    took_before = router_picker(before.matcher, threshold=threshold, usable=before.usable)
    takes_after = router_picker(after.matcher, threshold=threshold, usable=usable_after)
    own = [c for c in cases if c.should_trigger and c.skill != new_name]
    report = Coexistence(new_skill=new_name, checked=len(own))
    for case in own:
        if took_before(case.query) != case.skill:
            continue  # it did not take the request anyway
        now = takes_after(case.query)
        if now != case.skill:
            report.lost.append(LostRequest(case.skill, case.query, now))
    # the agent's block: the skills it can use, in the catalog's order
    report.before = block_fit(
        [s for s in before.matcher.skills if before.can_use(s)], budget=budget
    )
    report.after = block_fit([s for s in after.matcher.skills if usable_after(s)], budget=budget)
    return report


def _count(found: re.Match[str] | None) -> int:
    return int(found.group(1)) if found else 0


def _unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
