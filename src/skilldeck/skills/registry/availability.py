"""The registry's view of which skills can be used, kept by the registry itself.

Three facts decide it, in two scopes (issue 16):

* *enabled* — the name is not in ``skills.disabled`` (config);
* *machine-level* — the skill's ``requires-bins``, ``requires-env``, credentials,
  environment and ``compatibility`` hold on this machine, and the content scanner
  did not quarantine it (an untrusted root). The same for every agent, so it is
  computed once per refresh (:meth:`Availability.compute`);
* *per agent* — ``requires-tools`` against one agent's tool set, computed on each
  call (:meth:`Availability.why_unavailable` with ``tools``).

None of it is written onto a ``Skill``: the registry and its skills are shared by a
parent and its sub-agents (and, in a server, by many sessions), so a skill holds
facts only and this view is asked instead.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from skilldeck.skills.execution import machine_gating, unavailable_for
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.scanning import quarantined

if TYPE_CHECKING:
    from skilldeck.config import Settings
    from skilldeck.skills.discovery import RootScan

__all__ = ["Availability"]

#: what :meth:`Availability.why_unavailable` says of a disabled skill
DISABLED = "disabled in config"


class Availability:
    """Disabled names and machine-level reasons as of one refresh; per-agent
    reasons per call."""

    __slots__ = ("_disabled", "_machine")

    def __init__(self, disabled: Collection[str] = (), machine: dict[Skill, str] | None = None):
        self._disabled = frozenset(disabled)
        self._machine = machine or {}

    @classmethod
    def compute(
        cls,
        disabled: Collection[str],
        may_be_gated: Sequence[Skill],
        scans: Sequence[RootScan],
        settings: Settings,
    ) -> Availability:
        """Gate ``may_be_gated`` (the candidates that set a gating field) on this
        machine, then quarantine what untrusted ``scans`` hold: a skill with both
        reasons shows the gating one."""
        machine = machine_gating(may_be_gated)
        for skill, reason in quarantined(scans, settings).items():
            machine.setdefault(skill, reason)
        return cls(disabled, machine)

    @property
    def disabled(self) -> frozenset[str]:
        """The disabled names."""
        return self._disabled

    def is_enabled(self, skill: Skill) -> bool:
        """Whether ``skill``'s name is not in ``skills.disabled``."""
        return skill.name not in self._disabled

    def machine_reason(self, skill: Skill) -> str | None:
        """Why this machine cannot serve ``skill`` (None when it can)."""
        return self._machine.get(skill)

    def why_unavailable(
        self, skill: Skill, tools: set[str] | frozenset[str] | None = None
    ) -> str | None:
        """Why an agent holding ``tools`` (None: not known) cannot use ``skill``:
        disabled, then its missing tools, then the machine-level reason."""
        if skill.name in self._disabled:
            return DISABLED
        return unavailable_for(skill, tools, self._machine.get(skill))
