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
evaluated as if enabled, and the report says so; so is a NAME found only in a
workspace skill root not trusted yet (``skills new``'s folder). Ranking is the
agent's (embeddings fused in unless off; ``--lexical`` / ``--embeddings`` choose).
Which catalog, which cases and ``--coexist``'s two catalogs: :mod:`.skills_eval_catalog`.
"""

from __future__ import annotations

import textwrap
from functools import partial
from pathlib import Path
from typing import Annotated

import anyio
import typer

from skilldeck.cli.common import (
    JsonOption,
    NoDefaultsOption,
    RootOption,
    fail,
    named_path,
    print_json,
)
from skilldeck.cli.skills.skills_eval_catalog import (
    EvalCatalog,
    NotRun,
    catalog,
    collect_cases,
    ranked,
    skill_targets,
    split_unpickable,
    with_added_skill,
)
from skilldeck.integrations.trigger_probe import model_results, probe_agent
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.routing import (
    Coexistence,
    EvalReport,
    SkillMatcher,
    TriggerCase,
    build_report,
    compare_catalogs,
    router_results,
)

#: below this many skills the router's scores run low (see :func:`small_catalog_note`)
SMALL_CATALOG = 50
#: the threshold that note suggests (no note when the one used is already this low)
LOW_THRESHOLD = 0.1

EmbeddingsOption = Annotated[
    bool | None,
    typer.Option(
        "--embeddings/--lexical",
        help="Rank with static embeddings fused in (the default: skills.match_embeddings), "
        "or by words only.",
    ),
]
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
    runs: Annotated[
        int | None, typer.Option("--runs", min=1, help="Runs per request (model; default 3).")
    ] = None,
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
        Path | None,
        typer.Option(
            "--coexist", parser=named_path, help="A new skill folder to check against these."
        ),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="Server URL for openai-compat/ollama models.")
    ] = None,
    root: RootOption = None,
    no_defaults: NoDefaultsOption = False,
    json_: JsonOption = False,
    embeddings: EmbeddingsOption = None,
) -> None:
    """Run trigger evals: does each skill get picked for its requests, and only those?"""
    if coexist is not None:
        _check_coexist_options(coexist, model=model, runs=runs, min_rate=min_rate, url=base_url)
    elif model is None and (runs is not None or base_url is not None):
        flags = " and ".join(f for f, v in (("--runs", runs), ("--base-url", base_url)) if v)
        fail(f"{flags} apply to a model: add --model (the router runs once, offline).", code=2)
    targets = skill_targets(targets or [])
    current = catalog(targets, root or [], no_defaults, embeddings=embeddings)
    registry, as_if_enabled = current.registry, current.as_if_enabled
    cases = collect_cases(registry, targets or [], allow_missing=coexist is not None)
    limit = registry.settings.skills.hints.threshold if threshold is None else threshold
    cases, not_run = split_unpickable(registry, cases)
    if coexist is not None:
        _report_coexistence(current, coexist, cases, limit, json_=json_)
        return
    if not cases:
        fail("Nothing to evaluate: " + " ".join(n.sentence() for n in not_run))
    report = run_evals(
        registry, cases, model=model, runs=runs or 3, threshold=limit, base_url=base_url
    )
    if json_:
        print_json(
            {
                **report.to_dict(),
                "not_run": [n.to_dict() for n in not_run],
                "evaluated_as_if_enabled": as_if_enabled,
                "untrusted_workspace_skills": [str(f) for f in current.untrusted_named],
            }
        )
    else:
        lines = report_lines(report, threshold=None if model else limit)
        lines += not_run_lines(not_run) + as_if_enabled_lines(as_if_enabled)
        lines += untrusted_lines(current.untrusted_named, registry.settings.workspace)
        if model is None and len(registry.list()) < SMALL_CATALOG:
            lines.append(small_catalog_note(len(registry.list()), threshold=limit))
        typer.echo("\n".join(lines))
    under = report.below(min_rate) if min_rate is not None else []
    if under:
        names = ", ".join(f"{s.skill} ({s.pass_rate:.0%})" for s in under)
        fail(f"{len(under)} skill(s) under --min-rate {min_rate:.0%}: {names}.")


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
            head, took = f" ({want}) -> ", _cut(took, 30)
            room = max(20, 78 - 2 - len(head) - len(took))  # the name gets what is left
            lines.append(f"  {_cut(c.case.skill, room)}{head}{took}")
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


def untrusted_lines(folders: list[Path], workspace: Path) -> list[str]:
    """The note for named skills found in a workspace root agents here ignore."""
    lines: list[str] = []
    for folder in folders:
        text = (
            f"{folder.name} ({folder}) is evaluated because you named it; agents here "
            "ignore it until you trust this folder:"
        )
        lines += ["", *textwrap.wrap(text, width=78), f"  skilldeck trust {workspace}"]
    return lines


def not_run_lines(not_run: list[NotRun]) -> list[str]:
    """Why some skills' requests were not run, wrapped at 78 columns."""
    lines: list[str] = []
    for n in not_run:
        lines += ["", *textwrap.wrap(n.sentence(), width=78, subsequent_indent="  ")]
    return lines


def small_catalog_note(skills: int, *, threshold: float | None = None) -> str:
    """Why a small catalog's router scores sit under the hint threshold, and (unless
    the ``threshold`` used is already that low) the lower one to try."""
    text = (
        f"Note: {skills} skill{'' if skills == 1 else 's'} in the catalog. Scores weigh "
        "words by rarity across the "
        "catalog, so in a small one right matches score low"
    )
    if threshold is None or threshold > LOW_THRESHOLD:
        text += f"; try --threshold {LOW_THRESHOLD}"
    text += " (docs/routing.md)."
    return "\n".join(textwrap.wrap(text, width=78))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _check_coexist_options(
    folder: Path, *, model: str | None, runs: int | None, min_rate: float | None, url: str | None
) -> None:
    """``--coexist`` compares the router's rankings with and without the new skill:
    options about a model or a pass rate do not apply, and silently ignoring them
    would let a CI step pass that checks nothing."""
    if not folder.is_dir():
        fail(f"--coexist {folder}: not a folder (give the new skill's folder).", code=2)
    given = [
        flag
        for flag, value in (
            ("--model", model),
            ("--runs", runs),
            ("--min-rate", min_rate),
            ("--base-url", url),
        )
        if value is not None
    ]
    if given:
        verb = "does" if len(given) == 1 else "do"
        fail(
            f"--coexist compares the router's rankings; {', '.join(given)} {verb} not "
            "apply. Run `skilldeck skills eval` on the skills for pass rates.",
            code=2,
        )


def _report_coexistence(
    current: EvalCatalog,
    folder: Path,
    cases: list[TriggerCase],
    threshold: float,
    *,
    json_: bool,
) -> None:
    added = with_added_skill(current, folder)
    result = compare_catalogs(
        ranked(current.registry),
        ranked(added.registry),
        added.skill.name,
        cases,
        threshold=threshold,
        budget=current.registry.settings.skills.prompt_budget,
    )
    as_if_enabled = [added.skill.name] if added.was_disabled else []
    if json_:
        print_json({**result.to_dict(), "evaluated_as_if_enabled": as_if_enabled})
    else:
        typer.echo("\n".join(coexistence_lines(result) + as_if_enabled_lines(as_if_enabled)))


def coexistence_lines(result: Coexistence) -> list[str]:
    """What adding the skill costs, at 80 columns."""
    data = result.to_dict()
    lines = [f"Adding {result.new_skill}: {result.checked} existing requests checked."]
    if not result.checked:
        lines.append("No existing skill here ships trigger evals, so none could be checked.")
    elif not result.lost:
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
