"""What ``skilldeck skills eval`` evaluates, and in which catalog.

The catalog is what an agent here would see, plus what the author names: a skill
folder given as PATH joins it (as ``skills match --root`` would), a disabled skill
named by PATH or NAME is held as if enabled (the config is not changed), and a NAME
that discovery left out because its workspace root is not trusted yet — ``skills
new`` writes to ``./.skilldeck/skills``, and a fresh folder is untrusted — is found
there and joins like a PATH, with a note saying agents here ignore it until the
folder is trusted. Evaluating ranks the skill's text (and, with ``--model``, shows
its name and description to a model whose tool calls are never run): no script,
code or dynamic context of the skill is run, so naming it is enough, as for
``skills validate PATH``.

``--coexist DIR`` compares two catalogs built the same way, each ranked by the
agent's own matcher (``SkillMatcher.for_registry``: words fused with embeddings when
``skills.match_embeddings`` is on): the catalog as it is, and the catalog with DIR's
skill added (replacing a skill of its name; held as if enabled even when its name is
disabled in config).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.cli.workspace import discover_registry
from skilldeck.config import Settings
from skilldeck.errors import SkillError
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.routing import (
    RankedCatalog,
    SkillMatcher,
    TriggerCase,
    find_eval_file,
    load_eval_file,
)
from skilldeck.trust import WORKSPACE_SKILL_ROOTS

__all__ = [
    "EvalCatalog",
    "NewSkill",
    "NotRun",
    "catalog",
    "collect_cases",
    "disabled_targets",
    "ignored_workspace_skill",
    "ranked",
    "skill_targets",
    "split_unpickable",
    "with_added_skill",
]


@dataclass(frozen=True)
class EvalCatalog:
    """The registry an eval ranks, how it was discovered, and what the report says
    about the skills the author named."""

    registry: SkillRegistry
    #: the roots it was discovered with: the named folders first, then ``--root``
    roots: list[Path]
    no_defaults: bool
    #: disabled skills the targets name, held as if enabled
    as_if_enabled: list[str] = field(default_factory=list)
    #: named skills found in a workspace root discovery ignores (not trusted yet)
    untrusted_named: list[Path] = field(default_factory=list)
    #: ``skills`` settings given on the command line (``--lexical``), kept by every
    #: catalog derived from this one
    skills_overrides: dict[str, Any] = field(default_factory=dict)

    def discover(self, roots: list[Path], *, disabled: list[str]) -> SkillRegistry:
        """A registry discovered like this one, from ``roots``, with ``disabled``."""
        overrides = {**self.skills_overrides, "disabled": disabled}
        return discover_registry(roots, self.no_defaults, skills=overrides)


def skill_targets(targets: list[str]) -> list[str]:
    """The targets with a skill's own ``SKILL.md`` read as its folder (the file is no
    eval set: it was read as JSON and failed)."""
    return [
        str(Path(t).resolve().parent) if Path(t).name == "SKILL.md" and Path(t).is_file() else t
        for t in targets
    ]


def catalog(
    targets: list[str], roots: list[Path], no_defaults: bool, *, embeddings: bool | None = None
) -> EvalCatalog:
    """The catalog to evaluate in (see the module docstring): the target folders join
    it, a NAME only an ignored workspace root holds joins by its folder, and the
    disabled skills the targets name are held as if enabled. ``embeddings`` (None:
    the settings' ``skills.match_embeddings``) turns the fused ranking on or off."""
    own = {} if embeddings is None else {"match_embeddings": embeddings}
    skill_dirs = [Path(t) for t in targets if Path(t).is_dir()]
    registry = discover_registry([*skill_dirs, *roots], no_defaults, skills=own)
    # --no-defaults reads no workspace root: a NAME is then never looked up there
    untrusted = [] if no_defaults else _untrusted_named(registry, targets)
    all_roots = [*skill_dirs, *untrusted, *roots]
    current = EvalCatalog(registry, all_roots, no_defaults, [], untrusted, own)
    if untrusted:
        registry = current.discover(all_roots, disabled=registry.settings.skills.disabled)
    as_if_enabled = disabled_targets(registry, targets)
    if as_if_enabled:  # the catalog once the author enables their skill
        disabled = [n for n in registry.settings.skills.disabled if n not in as_if_enabled]
        registry = current.discover(all_roots, disabled=disabled)
    return EvalCatalog(registry, all_roots, no_defaults, as_if_enabled, untrusted, own)


def _untrusted_named(registry: SkillRegistry, targets: list[str]) -> list[Path]:
    """The folders of the NAME targets the catalog lacks but an ignored workspace root
    holds (``skills new my-skill`` in a folder not trusted yet)."""
    found: list[Path] = []
    for target in targets:
        if Path(target).exists() or target in registry:
            continue
        folder = ignored_workspace_skill(registry.settings, target)
        if folder is not None and folder not in found:
            found.append(folder)
    return found


def ignored_workspace_skill(settings: Settings, name: str) -> Path | None:
    """``<workspace>/<root>/<name>`` when it holds a SKILL.md and discovery ignores
    ``<root>`` (one of the workspace skill roots: the folder is not trusted, or the
    root appeared since it was); None otherwise. ``name`` must be one path component."""
    if name in ("", ".", "..") or Path(name).name != name:
        return None
    trust = settings.workspace_trust
    for sub in WORKSPACE_SKILL_ROOTS:
        folder = Path(settings.workspace) / sub / name
        if not trust.accepts(sub) and (folder / "SKILL.md").is_file():
            return folder
    return None


def disabled_targets(registry: SkillRegistry, targets: list[str]) -> list[str]:
    """The disabled skills ``targets`` name — by folder, by a file in their folder, or
    by name: an author asking about their own skill, evaluated as if enabled."""
    everything = registry.list(include_disabled=True)
    names: list[str] = []
    for target in targets:
        path = Path(target)
        if path.exists():
            real = path.resolve()
            inside = (s for s in everything if s.folder.resolve() in (real, *real.parents))
            skill = next(inside, None)
        else:
            skill = registry.get(target, include_disabled=True) if target in registry else None
        if skill is not None and not registry.is_enabled(skill) and skill.name not in names:
            names.append(skill.name)
    return names


# ---- which cases ---------------------------------------------------------------------


@dataclass(frozen=True)
class NotRun:
    """A skill whose cases were left out: no picker can choose it here, so its misses
    would say nothing about its description (an unavailable skill, or one with
    ``disable-model-invocation``)."""

    skill: str
    reason: str
    cases: int

    def to_dict(self) -> dict[str, Any]:
        return {"skill": self.skill, "reason": self.reason, "cases": self.cases}

    def sentence(self) -> str:
        return f"{self.skill} not evaluated ({self.cases} request(s)): {self.reason}."


def split_unpickable(
    registry: SkillRegistry, cases: list[TriggerCase]
) -> tuple[list[TriggerCase], list[NotRun]]:
    """``cases`` without those of skills nothing can pick, and why each was left out."""
    why: dict[str, str] = {}
    for name in dict.fromkeys(c.skill for c in cases):
        skill = registry.get(name, include_disabled=True)
        unavailable = registry.why_unavailable(skill)
        if not registry.is_enabled(skill):
            why[name] = (
                f"disabled in config; `skilldeck skills eval {name}` evaluates it as if enabled"
            )
        elif unavailable is not None:
            why[name] = f"unavailable here: {unavailable}"
        elif skill.metadata.disable_model_invocation:
            why[name] = "disable-model-invocation is set: no model or router ever picks it"
    kept = [c for c in cases if c.skill not in why]
    counts = Counter(c.skill for c in cases if c.skill in why)
    return kept, [NotRun(name, reason, counts[name]) for name, reason in why.items()]


def collect_cases(
    registry: SkillRegistry, targets: list[str], *, allow_missing: bool = False
) -> list[TriggerCase]:
    """The cases the targets name (see the module docstring), checked against the
    catalog: a case for a skill that is not in it is an error, not a silent miss."""
    cases: list[TriggerCase] = []
    unevaluated: list[str] = []  # skills named that ship no evals of their own
    for target in targets:
        named = _target_cases(registry, target)
        if named is None:
            unevaluated.append(target)
        else:
            cases += named
    for name in unevaluated:  # a suite file given beside it may hold its evals
        if not any(c.skill == name for c in cases):
            skill = registry.get(name)
            raise SkillError(
                f"Skill {name!r} ({skill.folder}) ships no trigger evals, and no suite "
                f"file given holds any for it; write {skill.folder / 'evals/trigger_evals.json'}."
            )
    if not targets:  # disabled skills too: listed as not run, not silently skipped
        for skill in registry.list(include_disabled=True):
            found = find_eval_file(skill.folder)
            cases += load_eval_file(found, skill=skill.name, allow_empty=True) if found else []
    if not cases and not allow_missing:
        raise SkillError(
            "No trigger evals found. Write SKILL_DIR/evals/trigger_evals.json as a list "
            'of {"query": "...", "should_trigger": true|false} (`skills new` writes one).'
        )
    unknown = sorted({c.skill for c in cases if c.skill not in registry})
    if unknown:
        raise SkillError(
            f"Evals name skills that are not in the catalog: {', '.join(unknown)}; "
            "pass their folders (or --root) so they are discovered."
        )
    return cases


def _target_cases(registry: SkillRegistry, target: str) -> list[TriggerCase] | None:
    """The cases one target names; None for a skill named that ships no evals of its
    own (a suite file given beside it may hold them: :func:`collect_cases` decides)."""
    path = Path(target)
    if path.is_dir() and not (target in registry and not _holds_a_skill(path)):
        skill = skill_in(registry, path)
        found = find_eval_file(path)
        if found is None:
            raise SkillError(
                f"{path} has no trigger evals; write {path / 'evals/trigger_evals.json'} "
                '(a list of {"query": "...", "should_trigger": true|false}).'
            )
        return load_eval_file(found, skill=skill.name)
    if path.is_file():
        owner = next((s for s in registry.list() if s.folder in path.resolve().parents), None)
        return load_eval_file(path, skill=owner.name if owner else None)
    if target in registry:
        skill = registry.get(target)
        found = find_eval_file(skill.folder)
        return load_eval_file(found, skill=skill.name) if found else None
    raise SkillError(
        f"{target!r} is neither a file, a folder nor a skill in the catalog (the --root "
        "folders and, unless --no-defaults, the default roots); give a skill's folder "
        "(`skilldeck skills eval ./my-skill`) or see `skilldeck skills list`."
    )


def _holds_a_skill(folder: Path) -> bool:
    """Whether ``folder`` is a skill's folder: else a catalog skill of the same name
    is meant (``skills eval pdf`` where the current folder has a ``pdf/`` of data)."""
    return (folder / "SKILL.md").is_file() or (folder / "skill.md").is_file()


def skill_in(registry: SkillRegistry, folder: Path) -> Skill:
    """The skill ``registry`` discovered in ``folder`` (disabled or not); a SkillError
    saying why when there is none."""
    real = folder.resolve()
    for skill in registry.list(include_disabled=True):
        if skill.folder.resolve() == real:
            return skill
    if not (folder / "SKILL.md").is_file():
        raise SkillError(f"{folder} has no SKILL.md: give the folder of one skill.")
    raise SkillError(f"{folder} holds no valid skill (see `skilldeck skills validate {folder}`).")


# ---- --coexist -------------------------------------------------------------------------


@dataclass(frozen=True)
class NewSkill:
    """The catalog with the new skill added, and whether its name is disabled in
    config (it is then held as if enabled: the cost once you enable it)."""

    registry: SkillRegistry
    skill: Skill
    was_disabled: bool


def with_added_skill(current: EvalCatalog, folder: Path) -> NewSkill:
    """``current`` with the skill in ``folder`` added, first in precedence (so it
    replaces a skill of its name) and enabled whatever the config says."""
    alone = discover_registry([folder], True, skills={"disabled": []})
    name = skill_in(alone, folder).name
    disabled = current.registry.settings.skills.disabled
    kept = [n for n in disabled if n != name]
    after = current.discover([folder, *current.roots], disabled=kept)
    return NewSkill(after, after.get(name), was_disabled=name in disabled)


def ranked(registry: SkillRegistry) -> RankedCatalog:
    """``registry`` as an agent here ranks it: the agent's matcher (embeddings fused
    in when on), a request going only to a skill an agent can use."""
    return RankedCatalog(SkillMatcher.for_registry(registry), registry.is_available)
