"""Which candidate wins a name: the registry's precedence pass.

Candidates for a name come, highest precedence first, from skills registered in
code, then from discovery's roots in order. The first wins unless
``override_version`` picked another; the others are *shadowed*, and
:meth:`Resolution.why_hidden` says why in plain words. The pass reads skills and
writes nothing onto them: the result is the registry's own data.

One pass over thousands of skills on every discovery, so it stays flat and
allocates little: a name with one candidate (nearly all) gets no list of its own
(see :meth:`Resolution.group`), and only skills that set a gating field are
collected for gating (``python -m bench discovery``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from skilldeck.skills.model.skill import Skill

__all__ = ["Resolution", "resolve_candidates"]


@dataclass(frozen=True, slots=True)
class Resolution:
    """The outcome of one precedence pass."""

    #: the skill each name means
    winners: dict[str, Skill]
    #: every candidate, highest precedence first, for the names that have several
    groups: dict[str, list[Skill]]
    #: ``id`` of each skill registered in code (they beat discovered ones)
    registered_ids: frozenset[int]
    #: name → the version ``override_version`` chose
    overrides: Mapping[str, str]
    #: candidates that set a gating field (the only ones gating needs to look at)
    may_be_gated: list[Skill]

    def group(self, name: str) -> list[Skill]:
        """Every candidate for ``name``, highest precedence first."""
        group = self.groups.get(name)
        if group is not None:
            return group
        skill = self.winners.get(name)
        return [skill] if skill is not None else []

    def why_hidden(self, winner: Skill, hidden: Skill) -> str:
        """Why ``winner`` beats ``hidden`` (same name), for ``skills list --all``."""
        if self.overrides.get(winner.name) == winner.version and winner.version is not None:
            return f"version {winner.version} chosen with override_version"
        if id(winner) in self.registered_ids:
            if id(hidden) in self.registered_ids:
                return f"registered later than the one in {hidden.folder}"
            return "registered in code, which beats discovered skills"
        if winner.root == hidden.root:
            return f"same root {winner.root}; {winner.folder} comes first in scan order"
        return (
            f"{winner.source} root {winner.root} has precedence over "
            f"{hidden.source} root {hidden.root}"
        )


def resolve_candidates(
    registered: list[Skill],
    scanned: Iterable[Iterable[Skill]],
    *,
    removed: set[str],
    overrides: Mapping[str, str],
) -> Resolution:
    """Group the candidates by name (``registered`` first, then each root's skills
    in order), leave out ``removed`` names and pick each name's winner."""
    first: dict[str, Skill] = {}  # the first candidate of every name
    groups: dict[str, list[Skill]] = {}  # all of them, where there are several
    gated: list[Skill] = []
    for skill in itertools.chain(registered, *scanned):
        name = skill.name
        if removed and name in removed:
            continue
        head = first.get(name)
        if head is None:
            first[name] = skill
        elif name in groups:
            groups[name].append(skill)
        else:
            groups[name] = [head, skill]
        if skill.may_be_gated():
            gated.append(skill)
    winners = first
    if overrides:
        winners = dict(first)
        for name, wanted in overrides.items():
            chosen = next((s for s in groups.get(name, ()) if s.version == wanted), None)
            if chosen is not None:
                winners[name] = chosen
    return Resolution(winners, groups, frozenset(id(s) for s in registered), dict(overrides), gated)
