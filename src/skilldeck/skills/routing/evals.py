"""Trigger evals: does a skill get picked for the requests it is for, and only those?

An eval set is what Anthropic's skill-creator writes for description optimisation, a
JSON list of ``{"query": "…", "should_trigger": true|false}`` (``prompt`` is accepted
for ``query``, and ``{"evals": [...]}`` around the list). A skill keeps its own under
``evals/`` (:data:`EVAL_FILES`, first found wins); a catalog-wide *suite* is the same
list with a ``"skill"`` key on each item (or an object mapping skill names to lists).
skill-creator's output evals (``evals/evals.json``: ``prompt`` + ``expected_output``,
no ``should_trigger``) are tasks the skill is for, so their prompts count as
``should_trigger: true``.

Running a set means asking a *picker* which skill takes each request (``None``: no
skill). :func:`router_picker` asks the lexical router, offline: the best skill an
agent here could be pointed to — invocable by the model and usable (the registry's
view: not disabled, not unavailable on this machine), the rule of the per-message
hints — if its normalised score reaches the hint threshold. The model picker (what a
real agent's first turn calls ``Skill`` with) lives above this layer, in
``integrations/trigger_probe.py``: skills/ never imports a model. :func:`build_report`
turns the picks into per-skill trigger rates, false triggers and confusions (which
other skill took a request), the same numbers for both.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.errors import EvalWarning, SkillError
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.routing.hints import hintable
from skilldeck.skills.routing.match import SkillMatcher

__all__ = [
    "EVAL_FILES",
    "CaseResult",
    "EvalReport",
    "SkillReport",
    "TriggerCase",
    "Usable",
    "build_report",
    "find_eval_file",
    "load_eval_file",
    "router_picker",
    "router_results",
    "run_picker",
]

#: where a skill keeps its trigger evals, relative to its folder, in the order tried
EVAL_FILES = (
    "evals/trigger_evals.json",
    "evals/trigger-evals.json",
    "evals/eval_set.json",
    "evals/trigger_eval_set.json",
    "evals/evals.json",
    "trigger_evals.json",
)
#: a case passes when the skill took at least this share of its runs (should trigger),
#: or less than it (should not) — skill-creator's rule
PASS_SHARE = 0.5

Picker = Callable[[str], str | None]
#: which skills an agent here can use (``SkillRegistry.is_available``; None: all)
Usable = Callable[[Skill], bool] | None


@dataclass(frozen=True)
class TriggerCase:
    """One request of one skill's eval set."""

    skill: str
    query: str
    should_trigger: bool


@dataclass(frozen=True)
class CaseResult:
    """A case and the skill that took it on each run (``None``: no skill)."""

    case: TriggerCase
    picks: tuple[str | None, ...]
    #: how close the case's skill came (router: "rank 3, score 0.21"), for failures
    detail: str = ""

    @property
    def hits(self) -> int:
        return sum(1 for p in self.picks if p == self.case.skill)

    @property
    def rate(self) -> float:
        return self.hits / len(self.picks) if self.picks else 0.0

    @property
    def passed(self) -> bool:
        took = self.rate >= PASS_SHARE
        return took if self.case.should_trigger else not took

    def to_dict(self) -> dict[str, Any]:
        return {
            "skill": self.case.skill,
            "query": self.case.query,
            "should_trigger": self.case.should_trigger,
            "picks": list(self.picks),
            "trigger_rate": round(self.rate, 4),
            "passed": self.passed,
            **({"detail": self.detail} if self.detail else {}),
        }


@dataclass
class SkillReport:
    """One skill's figures over its cases."""

    skill: str
    positives: int = 0
    negatives: int = 0
    passed: int = 0
    positive_runs: int = 0
    positive_hits: int = 0
    false_triggers: int = 0
    confusions: Counter[str] = field(default_factory=Counter)

    @property
    def trigger_rate(self) -> float:
        """Share of the runs of should-trigger requests that picked this skill."""
        return self.positive_hits / self.positive_runs if self.positive_runs else 1.0

    @property
    def pass_rate(self) -> float:
        cases = self.positives + self.negatives
        return self.passed / cases if cases else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "positives": self.positives,
            "negatives": self.negatives,
            "trigger_rate": round(self.trigger_rate, 4),
            "false_triggers": self.false_triggers,
            "pass_rate": round(self.pass_rate, 4),
            "confusions": dict(self.confusions.most_common()),
        }


@dataclass
class EvalReport:
    """What ``skilldeck skills eval`` prints: per skill, per case and a summary."""

    mode: str
    runs: int
    skills: list[SkillReport]
    cases: list[CaseResult]

    @property
    def pass_rate(self) -> float:
        return sum(c.passed for c in self.cases) / len(self.cases) if self.cases else 1.0

    def below(self, min_rate: float) -> list[SkillReport]:
        """Skills whose pass rate is under ``min_rate`` (what fails a CI run)."""
        return [s for s in self.skills if s.pass_rate < min_rate]

    def summary(self) -> dict[str, Any]:
        positives = [c for c in self.cases if c.case.should_trigger]
        runs = sum(len(c.picks) for c in positives)
        return {
            "skills": len(self.skills),
            "cases": len(self.cases),
            "passed": sum(c.passed for c in self.cases),
            "pass_rate": round(self.pass_rate, 4),
            "trigger_rate": round(sum(c.hits for c in positives) / runs, 4) if runs else 1.0,
            "false_triggers": sum(s.false_triggers for s in self.skills),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "runs": self.runs,
            "summary": self.summary(),
            "skills": [s.to_dict() for s in self.skills],
            "cases": [c.to_dict() for c in self.cases],
        }


# ---- reading eval sets ---------------------------------------------------------------


def find_eval_file(skill_dir: Path) -> Path | None:
    """The first of :data:`EVAL_FILES` that exists in ``skill_dir``."""
    for name in EVAL_FILES:
        path = skill_dir / name
        if path.is_file():
            return path
    return None


def load_eval_file(
    path: Path, *, skill: str | None = None, allow_empty: bool = False
) -> list[TriggerCase]:
    """The cases of a skill's eval file (``skill`` given) or of a suite file (each item
    names its ``skill``; an item's own ``skill`` wins). Raises SkillError saying where
    and how to fix it — also for a file with no case at all, unless ``allow_empty``
    (a catalog-wide run: one skill's empty file must not stop everyone's)."""
    cases = _load_cases(path, skill)
    if not cases and not allow_empty:
        raise SkillError(
            f'Eval set {path} holds no case; add {{"query": "...", "should_trigger": '
            "true|false} objects (a few that should trigger the skill, a few that should not)."
        )
    return cases


def _load_cases(path: Path, skill: str | None) -> list[TriggerCase]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SkillError(f"Cannot read eval set {path}: {e.strerror}.") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise SkillError(f"Eval set {path} is not valid JSON: {e}.") from e
    except RecursionError as e:
        raise SkillError(f"Eval set {path} is not valid JSON here: nested too deeply.") from e
    if isinstance(data, dict) and "evals" in data:
        named = _str_or_none(data.get("skill_name"))
        if skill is not None and named is not None and named != skill:
            warnings.warn(
                f"{path}: skill_name {named!r} is not the skill {skill!r} whose folder "
                f"holds the file; its cases run for {skill!r} (set skill_name to it).",
                EvalWarning,
                stacklevel=3,
            )
        skill = skill or named
        data = data["evals"]
    if isinstance(data, dict):  # a suite: {"skill-name": [cases...]}
        return [c for name, items in data.items() for c in _cases(path, items, str(name))]
    return _cases(path, data, skill)


def _cases(path: Path, items: Any, skill: str | None) -> list[TriggerCase]:
    if not isinstance(items, list):
        raise SkillError(
            f"Eval set {path} must be a JSON list of "
            '{"query": "...", "should_trigger": true|false} objects.'
        )
    cases = []
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise SkillError(f"Eval set {path}, item {i}: expected an object, got {item!r}.")
        query = item.get("query", item.get("prompt"))
        name = _str_or_none(item.get("skill")) or skill
        should = item.get("should_trigger", True)
        if not isinstance(query, str) or not query.strip():
            raise SkillError(f'Eval set {path}, item {i}: "query" must be a non-empty string.')
        if not isinstance(should, bool):
            raise SkillError(f'Eval set {path}, item {i}: "should_trigger" must be true or false.')
        if name is None:
            raise SkillError(
                f'Eval set {path}, item {i}: no skill named; add "skill": "<name>" to each '
                "item of a suite file, or keep the file in the skill's evals/ folder."
            )
        cases.append(TriggerCase(skill=name, query=query.strip(), should_trigger=should))
    return cases


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


# ---- running ---------------------------------------------------------------------------


def router_picker(matcher: SkillMatcher, *, threshold: float, usable: Usable = None) -> Picker:
    """The router's pick for a request: its best skill a hint could name (invocable by
    the model and ``usable`` here), when that skill's normalised score reaches
    ``threshold`` (the hint threshold). A skill an agent cannot use never takes a
    request, as it never gets a hint; it still ranks, as in the agent's index."""

    def pick(query: str) -> str | None:
        for m in matcher.rank(query, k=5):
            if hintable(m.skill, usable):
                return m.name if m.score >= threshold else None
        return None

    return pick


def run_picker(cases: Sequence[TriggerCase], pick: Picker, *, runs: int = 1) -> list[CaseResult]:
    """Every case through ``pick``, ``runs`` times each."""
    return [CaseResult(c, tuple(pick(c.query) for _ in range(runs))) for c in cases]


def router_results(
    matcher: SkillMatcher,
    cases: Sequence[TriggerCase],
    *,
    threshold: float,
    usable: Usable = None,
) -> list[CaseResult]:
    """Every case through the router (:func:`router_picker`), each with where the
    case's own skill ranked and scored, so an author sees how far off a miss was."""
    pick = router_picker(matcher, threshold=threshold, usable=usable)
    return [CaseResult(c, (pick(c.query),), _standing(matcher, c)) for c in cases]


def _standing(matcher: SkillMatcher, case: TriggerCase, depth: int = 50) -> str:
    for rank, m in enumerate(matcher.rank(case.query, k=depth), 1):
        if m.name == case.skill:
            return f"{case.skill}: rank {rank}, score {m.score:.2f}"
    return f"{case.skill}: not in the top {depth}"


def build_report(mode: str, runs: int, results: Iterable[CaseResult]) -> EvalReport:
    """Per-skill figures, skills in the order their first case came."""
    results = list(results)
    by_skill: dict[str, SkillReport] = {}
    for r in results:
        report = by_skill.setdefault(r.case.skill, SkillReport(r.case.skill))
        report.passed += r.passed
        if r.case.should_trigger:
            report.positives += 1
            report.positive_runs += len(r.picks)
            report.positive_hits += r.hits
            report.confusions.update(p for p in r.picks if p and p != r.case.skill)
        else:
            report.negatives += 1
            report.false_triggers += r.hits
    return EvalReport(mode=mode, runs=runs, skills=list(by_skill.values()), cases=results)


def cases_by_skill(cases: Iterable[TriggerCase]) -> Mapping[str, list[TriggerCase]]:
    grouped: dict[str, list[TriggerCase]] = {}
    for c in cases:
        grouped.setdefault(c.skill, []).append(c)
    return grouped
