"""``skilldeck skills eval [PATH|NAME]... [--model M] [--runs N] [--min-rate R] [--json]``.

Runs trigger evals (skill-creator's ``{"query", "should_trigger"}`` lists; see
``skills/routing/evals.py`` for the formats and where a skill keeps them):

* without ``--model``, through the router, offline: a skill triggers when it is the
  best invocable match and scores at least the hint threshold (``--threshold``);
* with ``--model``, through a real model (any adapter, ``scripted:`` included): the
  model is sent what an agent run's first turn would send and we record whether it
  calls ``Skill(name)`` (``integrations/trigger_probe.py``), ``--runs`` times each.

A PATH is a skill folder (its ``evals/`` file; the skill joins the catalog), a skill's
eval file, or a suite file whose items name their ``skill``; a NAME is a catalog
skill. With no argument every catalog skill that has evals is run. ``--min-rate``
exits 1 when a skill's pass rate is below it, for CI. ``--coexist DIR`` says which
existing skills would lose requests to the skill in DIR, and what it would push out
of the level-1 block.

What is ranked is what an agent here would see: the enabled skills, a request going
only to one an agent can use (never a disabled or unavailable skill, never one with
``disable-model-invocation``); the evals of skills it could not pick are listed as
not run, with the reason. A disabled skill you name (PATH or NAME: your own skill) is
evaluated as if enabled, and the report says so.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer

from skilldeck.cli.common import JsonOption, NoDefaultsOption, RootOption, fail, print_json
from skilldeck.cli.workspace import discover_registry
from skilldeck.errors import SkillError
from skilldeck.integrations.trigger_probe import model_results, probe_agent
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.routing import (
    Coexistence,
    EvalReport,
    SkillMatcher,
    TriggerCase,
    build_report,
    coexistence,
    find_eval_file,
    load_eval_file,
    router_results,
)

#: below this many skills the router's scores run low (see :func:`small_catalog_note`)
SMALL_CATALOG = 50
#: the threshold that note suggests (no note when the one used is already this low)
LOW_THRESHOLD = 0.1

TargetsArg = Annotated[
    list[str] | None,
    typer.Argument(help="Skill folders, eval or suite files, or skill names (default: all)."),
]


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_)


def eval_(
    targets: TargetsArg = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Ask this model instead of the router.")
    ] = None,
    runs: Annotated[int, typer.Option("--runs", min=1, help="Runs per request (model).")] = 3,
    min_rate: Annotated[
        float | None,
        typer.Option(
            "--min-rate", min=0.0, max=1.0, help="Exit 1 if a skill's pass rate is lower."
        ),
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option(
            "--threshold", min=0.0, max=1.0, help="Router trigger score (default: hints)."
        ),
    ] = None,
    coexist: Annotated[
        Path | None, typer.Option("--coexist", help="A new skill folder to check against these.")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="Server URL for openai-compat/ollama models.")
    ] = None,
    root: RootOption = None,
    no_defaults: NoDefaultsOption = False,
    json_: JsonOption = False,
) -> None:
    """Run trigger evals: does each skill get picked for its requests, and only those?"""
    if coexist is not None and not coexist.is_dir():
        fail(f"--coexist {coexist}: not a folder (give the new skill's folder).", code=2)
    registry, as_if_enabled = catalog(targets or [], root or [], no_defaults)
    cases = collect_cases(registry, targets or [], allow_missing=coexist is not None)
    limit = registry.settings.skills.hints.threshold if threshold is None else threshold
    cases, not_run = split_unpickable(registry, cases)
    if coexist is not None:
        _report_coexistence(registry, coexist, cases, limit, json_=json_)
        return
    if not cases:
        fail("Nothing to evaluate: " + " ".join(n.sentence() for n in not_run))
    report = run_evals(registry, cases, model=model, runs=runs, threshold=limit, base_url=base_url)
    if json_:
        print_json(
            {
                **report.to_dict(),
                "not_run": [n.to_dict() for n in not_run],
                "evaluated_as_if_enabled": as_if_enabled,
            }
        )
    else:
        lines = report_lines(report, threshold=None if model else limit)
        lines += not_run_lines(not_run) + as_if_enabled_lines(as_if_enabled)
        if model is None and len(registry.list()) < SMALL_CATALOG:
            lines.append(small_catalog_note(len(registry.list()), threshold=limit))
        typer.echo("\n".join(lines))
    under = report.below(min_rate) if min_rate is not None else []
    if under:
        names = ", ".join(f"{s.skill} ({s.pass_rate:.0%})" for s in under)
        fail(f"{len(under)} skill(s) under --min-rate {min_rate:.0%}: {names}.")


def catalog(
    targets: list[str], roots: list[Path], no_defaults: bool
) -> tuple[SkillRegistry, list[str]]:
    """The catalog to evaluate in (the target folders join it) and the disabled skills
    the targets name, which it holds as if enabled (the author's own skills under
    test; the config is not changed)."""
    skill_dirs = [Path(t) for t in targets if Path(t).is_dir()]
    registry = discover_registry([*skill_dirs, *roots], no_defaults)
    as_if_enabled = disabled_targets(registry, targets)
    if as_if_enabled:  # the catalog once the author enables their skill
        disabled = [n for n in registry.settings.skills.disabled if n not in as_if_enabled]
        registry = discover_registry(
            [*skill_dirs, *roots], no_defaults, skills={"disabled": disabled}
        )
    return registry, as_if_enabled


def run_evals(
    registry: SkillRegistry,
    cases: list[TriggerCase],
    *,
    model: str | None,
    runs: int,
    threshold: float,
    base_url: str | None = None,
) -> EvalReport:
    """The report of ``cases`` through the router, or through ``model``."""
    if model is None:
        matcher = SkillMatcher.for_registry(registry)
        results = router_results(matcher, cases, threshold=threshold, usable=registry.is_available)
        return build_report("router", 1, results)
    with probe_agent(registry.settings, registry, model, base_url=base_url) as agent:
        results = anyio.run(partial(model_results, agent, cases, runs=runs))
    return build_report(f"model {agent.model_spec}", runs, results)


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


def as_if_enabled_lines(names: list[str]) -> list[str]:
    """The note for disabled skills evaluated on request, wrapped at 78 columns."""
    lines: list[str] = []
    for name in names:
        text = (
            f"{name} is disabled in config: evaluated as if enabled; agents here never "
            f"pick it until `skilldeck skills enable {name}`."
        )
        lines += ["", *textwrap.wrap(text, width=78, subsequent_indent="  ")]
    return lines


def not_run_lines(not_run: list[NotRun]) -> list[str]:
    """Why some skills' requests were not run, wrapped at 78 columns."""
    lines: list[str] = []
    for n in not_run:
        lines += ["", *textwrap.wrap(n.sentence(), width=78, subsequent_indent="  ")]
    return lines


def collect_cases(
    registry: SkillRegistry, targets: list[str], *, allow_missing: bool = False
) -> list[TriggerCase]:
    """The cases the targets name (see the module docstring), checked against the
    catalog: a case for a skill that is not in it is an error, not a silent miss."""
    cases: list[TriggerCase] = []
    for target in targets:
        cases += _target_cases(registry, target)
    if not targets:  # disabled skills too: listed as not run, not silently skipped
        for skill in registry.list(include_disabled=True):
            found = find_eval_file(skill.folder)
            cases += load_eval_file(found, skill=skill.name) if found else []
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


def _target_cases(registry: SkillRegistry, target: str) -> list[TriggerCase]:
    path = Path(target)
    if path.is_dir():
        skill = _skill_in(registry, path)
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
        if found is None:
            raise SkillError(f"Skill {target!r} ({skill.folder}) ships no trigger evals.")
        return load_eval_file(found, skill=skill.name)
    raise SkillError(f"{target!r} is neither a file, a folder nor a skill in the catalog.")


def _skill_in(registry: SkillRegistry, folder: Path) -> Skill:
    real = folder.resolve()
    for skill in registry.list():
        if skill.folder.resolve() == real:
            return skill
    raise SkillError(f"{folder} holds no valid skill (see `skilldeck skills validate {folder}`).")


# ---- rendering -----------------------------------------------------------------------


def report_lines(report: EvalReport, *, threshold: float | None) -> list[str]:
    """The report at 80 columns: one row per skill, failures, a summary."""
    how = f"router, trigger score >= {threshold:.2f}" if threshold is not None else report.mode
    runs = f", {report.runs} runs each" if report.runs > 1 else ""
    lines = [f"Trigger evals ({how}{runs})", ""]
    lines.append(f"{'skill':<28} {'trigger':>8} {'false':>6} {'pass':>5}  taken by")
    for s in report.skills:
        hits, total = s.positive_hits, s.positive_runs
        negative_runs = s.negatives * report.runs
        taken = ", ".join(f"{n} ({c})" for n, c in s.confusions.most_common(2))
        lines.append(
            f"{_cut(s.skill, 28):<28} {f'{hits}/{total}':>8} "
            f"{f'{s.false_triggers}/{negative_runs}':>6} {s.pass_rate:>5.0%}  {_cut(taken, 28)}"
        )
    failed = [c for c in report.cases if not c.passed]
    if failed:
        lines += ["", "Failed requests:"]
        for c in failed:
            want = "should trigger" if c.case.should_trigger else "should not trigger"
            took = ", ".join(sorted({p or "(none)" for p in c.picks}))
            lines.append(f"  {_cut(c.case.skill, 20)} ({want}) -> {_cut(took, 30)}")
            lines.append(f"    {_cut(repr(c.case.query), 74)}")
            if c.detail:
                lines.append(f"    {_cut(c.detail, 74)}")
    summary = report.summary()
    lines += [
        "",
        f"{summary['passed']}/{summary['cases']} requests passed ({report.pass_rate:.0%}); "
        f"trigger rate {summary['trigger_rate']:.0%}; "
        f"{summary['false_triggers']} false triggers.",
    ]
    return lines


def small_catalog_note(skills: int, *, threshold: float | None = None) -> str:
    """Why a small catalog's router scores sit under the hint threshold, and (unless
    the ``threshold`` used is already that low) the lower one to try."""
    text = (
        f"Note: {skills} skills in the catalog. Scores weigh words by rarity across the "
        "catalog, so in a small one right matches score low"
    )
    if threshold is None or threshold > LOW_THRESHOLD:
        text += f"; try --threshold {LOW_THRESHOLD}"
    text += " (docs/routing.md)."
    return "\n".join(textwrap.wrap(text, width=78))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _report_coexistence(
    registry: SkillRegistry,
    folder: Path,
    cases: list[TriggerCase],
    threshold: float,
    *,
    json_: bool,
) -> None:
    new_registry = discover_registry([folder], True)
    new = _skill_in(new_registry, folder)
    result = coexistence(
        registry.list(),
        new,
        cases,
        threshold=threshold,
        budget=registry.settings.skills.prompt_budget,
        usable=registry.is_available,
    )
    if json_:
        print_json(result.to_dict())
    else:
        typer.echo("\n".join(coexistence_lines(result)))


def coexistence_lines(result: Coexistence) -> list[str]:
    """What adding the skill costs, at 80 columns."""
    data = result.to_dict()
    lines = [f"Adding {result.new_skill}: {result.checked} existing requests checked."]
    if not result.lost:
        lines.append("No existing skill loses a request it took before.")
    else:
        lines.append(f"{len(result.losers)} skill(s) lose top-1 on their own evals:")
        for r in result.lost:
            lines.append(f"  {_cut(r.skill, 24)} -> {_cut(r.taken_by or '(none)', 24)}")
            lines.append(f"    {_cut(repr(r.query), 74)}")
    before, after = result.before, result.after
    lines.append(
        f"Level-1 block: {after.left_out} skill(s) left out (was {before.left_out}), "
        f"{after.shortened} description(s) shortened (was {before.shortened})."
    )
    if data["newly_left_out"]:
        lines.append(f"{data['newly_left_out']} more skill(s) would drop out of the block.")
    return lines
