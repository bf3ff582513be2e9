"""``SkillRegistry``: the one place that decides which skill a name means.

Candidates for a name come, highest precedence first, from skills registered in
code, then from discovery's roots in order (:mod:`.discover`). The first candidate
wins unless ``override_version`` picked another; the others are *shadowed* and stay
visible through :meth:`SkillRegistry.entries` and :meth:`SkillRegistry.shadowing`, so
"why is my skill not used?" always has an answer (the precedence pass is
:mod:`.precedence`). Disabled names (``skills.disabled`` in config) keep their
winner, which the registry's view calls disabled; :meth:`SkillRegistry.list` leaves
those out. Whether a skill can be used (enabled, machine-level gating, per-agent
tools) is that view (:mod:`.availability`), never written onto a ``Skill``. Skills
that failed to load are kept as ``invalid`` entries with their diagnostics; one
broken skill never stops the others.
"""

from __future__ import annotations

import builtins
import logging
from typing import TYPE_CHECKING, Any

from skilldeck import settings as settings_pkg
from skilldeck.errors import SkillInvalidError, SkillNotFoundError, SkillUnavailableError
from skilldeck.skills.discovery.discover import discover, gc_paused
from skilldeck.skills.discovery.results import DiscoveryResult, InvalidSkill
from skilldeck.skills.discovery.roots import Root, RootPaths, resolve_roots, root_paths
from skilldeck.skills.discovery.walk import ROOT_NOT_FOUND
from skilldeck.skills.model.diagnostics import Diagnostic
from skilldeck.skills.model.skill import Skill, SkillSource
from skilldeck.skills.registry.availability import Availability
from skilldeck.skills.registry.entries import (
    RefreshResult,
    Shadowing,
    SkillEntry,
    active_row,
    candidate_entry,
    invalid_entry,
)
from skilldeck.skills.registry.precedence import resolve_candidates

if TYPE_CHECKING:
    from skilldeck.config import Settings
    from skilldeck.settings import Written

__all__ = ["SkillRegistry"]

log = logging.getLogger(__name__)
_MISSING_ROOT = (
    "Skill root %s is not a folder: no skills were found there. A relative root is "
    "resolved against the workspace (%s); pass an existing folder or an absolute path."
)


class SkillRegistry:
    """Skills by name, with precedence, versions, enable/disable and diagnostics."""

    def __init__(self, settings: Settings | None = None) -> None:
        if settings is None:
            from skilldeck.config import load_settings  # lazy: pydantic settings

            settings = load_settings()
        self.settings = settings
        self._discovery = DiscoveryResult([])
        self._scan_args: dict[str, Any] | None = None
        self._registered: list[Skill] = []
        self._removed: set[str] = set()
        self._overrides: dict[str, str] = {}
        self._fingerprint: str | None = None
        self._resolve()

    @classmethod
    def discover(
        cls,
        settings: Settings,
        *,
        roots: RootPaths = (),
        no_defaults: bool = False,
        use_cache: bool = True,
    ) -> SkillRegistry:
        """A registry filled from the discovery roots (see :mod:`.discover`).

        ``roots`` are scanned first: ``str`` or ``os.PathLike`` paths, in a list or one
        alone; a relative one is resolved against ``settings.workspace``. One that is
        not a folder finds nothing: an SD204 diagnostic and a logged warning."""
        registry = cls(settings)
        registry._scan_args = {
            "roots": root_paths(roots),
            "no_defaults": no_defaults,
            "use_cache": use_cache,
        }
        with gc_paused():
            registry._discovery = discover(settings, **registry._scan_args)
            registry._resolve()
        registry._warn_missing_roots()
        return registry

    def _warn_missing_roots(self) -> None:
        """Log each ``roots=`` folder that is missing (configured and default roots may
        legitimately be absent: those stay diagnostics)."""
        for scan in self._discovery.roots:
            codes = {d.code for d in scan.diagnostics}
            if scan.root.source is SkillSource.ROOT and ROOT_NOT_FOUND[0] in codes:
                log.warning(_MISSING_ROOT, scan.root.path, self.settings.workspace)

    # ---- registration ------------------------------------------------------------

    def register(self, skill: Skill) -> None:
        """Add a skill from code; it beats every discovered skill of the same name.
        Registering the same name and version again replaces the earlier one.
        Anything but a Skill is refused with a TypeError, the registry unchanged."""
        if not isinstance(skill, Skill):  # a name, or load_skill()'s (skill, diagnostics)
            raise TypeError(
                f"SkillRegistry.register() takes a Skill, not {type(skill).__name__} "
                f"{skill!r:.80}; nothing was registered. Build one with "
                "skilldeck.load_skill(folder), which returns (skill, diagnostics)."
            )
        self._registered = [
            s for s in self._registered if (s.name, s.version) != (skill.name, skill.version)
        ]
        self._registered.insert(0, skill)
        self._removed.discard(skill.name)
        self._changed()

    def unregister(self, name: str) -> None:
        """Forget ``name``: registered skills go, discovered ones are hidden until a
        later :meth:`register` of that name (a refresh does not bring them back)."""
        if name not in self._winners:
            raise self._unknown(name)
        self._registered = [s for s in self._registered if s.name != name]
        self._removed.add(name)
        self._overrides.pop(name, None)
        self._changed()

    # ---- lookup ------------------------------------------------------------------

    def get(
        self, name: str, version: str | None = None, *, include_disabled: bool = False
    ) -> Skill:
        """The skill ``name`` means (or that exact ``version`` of it).

        Raises SkillNotFoundError (with close matches), SkillInvalidError (a
        SkillNotFoundError: the skill's SKILL.md is invalid; its diagnostics say where)
        or, for a disabled skill, SkillUnavailableError unless ``include_disabled``.
        """
        if name not in self._winners:
            raise self._unknown(name)
        candidates = self._group(name)
        if version is None:
            skill = self._winners[name]
        else:
            found = [s for s in candidates if s.version == version]
            if not found:
                others = [f"{name}@{s.version}" for s in candidates if s.version]
                raise SkillNotFoundError(f"{name}@{version}", suggestions=others)
            skill = found[0]
        if not include_disabled and not self.is_enabled(skill):
            raise SkillUnavailableError(
                name, f"disabled in config; run `skilldeck skills enable {name}` to use it."
            )
        return skill

    def find(self, name: str) -> Skill | None:
        """Like :meth:`get` but None when there is no usable skill by that name."""
        skill = self._winners.get(name)
        return skill if skill is not None and self.is_enabled(skill) else None

    def __contains__(self, name: object) -> bool:
        return name in self._winners

    def __len__(self) -> int:
        return len(self._winners)

    def names(self) -> list[str]:
        return sorted(self._winners)

    def list(self, *, include_disabled: bool = False) -> builtins.list[Skill]:
        """The winning skill of every name, sorted by name; disabled ones only on request."""
        winners = self._winners
        disabled = self._view.disabled
        if include_disabled or not disabled:
            return [winners[n] for n in sorted(winners)]
        return [winners[n] for n in sorted(winners) if n not in disabled]

    def is_enabled(self, skill: Skill) -> bool:
        """Whether ``skill``'s name is enabled (not in ``skills.disabled``): the
        registry's view, as of the last refresh."""
        return self._view.is_enabled(skill)

    def why_unavailable(
        self, skill: Skill, *, tools: set[str] | frozenset[str] | None = None
    ) -> str | None:
        """Why ``skill`` cannot be used by an agent holding ``tools`` (None: tool set
        unknown), or None when it can: disabled, missing tools, then the machine-level
        gating computed at the last refresh. A per-call view: nothing is written, so
        agents with different tools sharing this registry never see each other's."""
        return self._view.why_unavailable(skill, tools)

    def is_available(self, skill: Skill, *, tools: set[str] | frozenset[str] | None = None) -> bool:
        """Whether an agent holding ``tools`` can use ``skill`` (see :meth:`why_unavailable`)."""
        return self._view.why_unavailable(skill, tools) is None

    def usable(self, *, tools: set[str] | frozenset[str] | None = None) -> builtins.list[Skill]:
        """The enabled skills an agent holding ``tools`` can use, sorted by name."""
        view = self._view
        return [s for s in self.list() if view.why_unavailable(s, tools) is None]

    def versions(self, name: str) -> builtins.list[Skill]:
        """Every candidate for ``name`` (registered and discovered), precedence order."""
        if name not in self._winners:
            raise self._unknown(name)
        return list(self._group(name))

    def override_version(self, name: str, version: str) -> None:
        """Make the candidate with this ``version`` win for ``name`` (in memory)."""
        self.get(name, version, include_disabled=True)  # raises with suggestions
        self._overrides[name] = version
        self._changed()

    # ---- enable / disable ----------------------------------------------------------

    def disable(self, name: str) -> None:
        """Disable ``name`` and remember it in the user config file."""
        self._require_known(name)
        # atomic, through the settings package; its writes module is loaded on first
        # use, so a read-only listing never imports it (``python -m bench discovery``)
        settings_pkg.record_disabled(self.settings, name)
        self._changed()

    def enable(self, name: str) -> Written:
        """Enable ``name``: removed from the disabled list of the user and the
        workspace config files, wherever it was listed (``retrust`` in the result:
        a trusted workspace file was rewritten, see :mod:`skilldeck.settings.writes`)."""
        self._require_known(name)
        written = settings_pkg.record_enabled(self.settings, name)
        self._changed()
        return written

    def is_disabled(self, name: str) -> bool:
        return name in self.settings.skills.disabled

    def _require_known(self, name: str) -> None:
        known = set(self._winners) | {i.name for i in self._discovery.invalid}
        if name not in known:
            raise SkillNotFoundError(name, suggestions=self._suggest(name))

    # ---- reports -------------------------------------------------------------------

    @property
    def roots(self) -> builtins.list[Root]:
        if self._scan_args is None:
            return []
        return resolve_roots(
            self.settings,
            roots=self._scan_args["roots"],
            no_defaults=self._scan_args["no_defaults"],
        )

    @property
    def diagnostics(self) -> builtins.list[Diagnostic]:
        """Problems of the scan itself: symlink loops, dangling links, missing roots."""
        return self._discovery.diagnostics

    @property
    def invalid(self) -> builtins.list[InvalidSkill]:
        """Skills that could not be loaded, each with its diagnostics."""
        return self._discovery.invalid

    def entries(self) -> builtins.list[SkillEntry]:
        """Every candidate and every broken skill, sorted by name then precedence."""
        resolution, view = self._resolution, self._view
        rows = [
            candidate_entry(skill, resolution, view)
            for name in sorted(self._winners)
            for skill in resolution.group(name)
        ]
        rows += [invalid_entry(bad) for bad in self._discovery.invalid]
        rows.sort(key=lambda e: e.name)
        return rows

    def active_rows(self) -> builtins.list[dict[str, Any]]:
        """``[e.to_dict() for e in entries() if e.status == "active"]``, built without
        the entries (see :func:`.entries.active_row`): what ``skills list --json``
        prints.

        A winner is active when ``self._view.why_unavailable(skill)`` is None; with no
        tool set that is: its name not disabled and no machine-level reason, tested
        here inline (two lookups instead of three calls and a join per skill, over
        thousands of skills: ``python -m bench discovery``, figure
        ``cli_list_json_warm``)."""
        winners, view = self._winners, self._view
        disabled, machine = view.disabled, view.machine_reason
        return [
            active_row(skill)
            for skill in (winners[n] for n in sorted(winners))
            if skill.name not in disabled and not machine(skill)
        ]

    def shadowing(self) -> builtins.list[Shadowing]:
        """Which skill hides which, and why, sorted by name."""
        resolution = self._resolution
        return [
            Shadowing(name, winner, skill, resolution.why_hidden(winner, skill))
            for name, winner in sorted(self._winners.items())
            for skill in resolution.groups.get(name, ())
            if skill is not winner
        ]

    # ---- change tracking ---------------------------------------------------------------

    def refresh(self) -> RefreshResult:
        """Re-scan the same roots; report which names appeared, changed or went away."""
        before = self._state()
        with gc_paused():
            if self._scan_args is not None:
                self._discovery = discover(self.settings, **self._scan_args)
            self._changed()
        after = self._state()
        return RefreshResult(
            added=sorted(after.keys() - before.keys()),
            changed=sorted(n for n in after.keys() & before.keys() if after[n] != before[n]),
            removed=sorted(before.keys() - after.keys()),
        )

    def _state(self) -> dict[str, tuple[Any, ...]]:
        """Per name: which file wins, its (mtime, size), and for a skill registered
        in code its identity (it has no file that could change)."""
        stats = {md: (m, s) for scan in self._discovery.roots for md, m, s in scan.files}
        registered = self._resolution.registered_ids
        state: dict[str, tuple[Any, ...]] = {}
        for name, skill in self._winners.items():
            md = skill.skill_md_str  # the string scan.files holds: no Path built per skill
            state[name] = (md, stats.get(md), id(skill) if id(skill) in registered else None)
        return state

    @property
    def fingerprint(self) -> str:
        """Changes whenever any skill file, registration, override or the disabled
        list changes — a key for caches derived from the registry (routing index)."""
        if self._fingerprint is None:
            import hashlib

            h = hashlib.sha256()
            for scan in self._discovery.roots:
                h.update(f"root\0{scan.root.path}\0".encode(errors="surrogateescape"))
                for md, mtime, size in scan.files:
                    h.update(f"{md}\0{mtime}\0{size}\n".encode(errors="surrogateescape"))
            for skill in self._registered:
                h.update(b"reg\0" + skill.metadata.model_dump_json().encode())
                h.update(f"\0{skill.folder}\0{id(skill)}\n".encode(errors="surrogateescape"))
            extra = (sorted(self._removed), sorted(self._overrides.items()))
            h.update(repr((extra, sorted(self.settings.skills.disabled))).encode())
            self._fingerprint = h.hexdigest()[:32]
        return self._fingerprint

    def _changed(self) -> None:
        self._fingerprint = None
        self._resolve()

    def _resolve(self) -> None:
        """Recompute candidates and winners (:mod:`.precedence`), then the registry's
        view of them (:mod:`.availability`): disabled names, and machine-level gating
        and quarantine, computed once here. Nothing is written onto the skills, and
        nothing per agent is computed here."""
        resolution = resolve_candidates(
            self._registered,
            (scan.skills for scan in self._discovery.roots),
            removed=self._removed,
            overrides=self._overrides,
        )
        self._resolution = resolution
        self._winners = resolution.winners
        self._view = Availability.compute(
            self.settings.skills.disabled,
            resolution.may_be_gated,
            self._discovery.roots,
            self.settings,
        )

    def _group(self, name: str) -> builtins.list[Skill]:
        """Every candidate for ``name``, highest precedence first."""
        return self._resolution.group(name)

    def _unknown(self, name: str) -> SkillNotFoundError:
        """The error for a name with no winner: invalid when a SKILL.md of that name
        failed to load (the highest-precedence one), else not found with close names."""
        bad = next((i for i in self._discovery.invalid if i.name == name), None)
        if bad is not None:
            return SkillInvalidError(name, path=bad.skill_md, diagnostics=bad.diagnostics)
        return SkillNotFoundError(name, suggestions=self._suggest(name))

    def _suggest(self, name: str) -> builtins.list[str]:
        names = set(self._winners) | {i.name for i in self._discovery.invalid}
        import difflib

        close = difflib.get_close_matches(name, sorted(names), n=5, cutoff=0.6)
        lowered = name.lower()
        contains = sorted(n for n in names if lowered and lowered in n and n not in close)
        return [*close, *contains][:5]
