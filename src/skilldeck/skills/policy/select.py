"""The context-aware selection engine: which skills a task should run with.

Rules (from the skill-injection design note):

* coding tasks are detected automatically when ``coding`` is not given;
* a coding task always gets the whole coding pipeline (by default the bundled
  ``specification-engine`` then ``opencode-implementer``) — never a part of it: if any
  pipeline skill is missing or unavailable, selection fails with a PolicyError saying
  which, instead of returning an incomplete pipeline;
* several non-coding skills may be selected; the matcher ranks the rest, and a
  candidate that would make the set invalid (conflicts, clashes under
  ``conflicts = "reject"``, missing companions it cannot bring) is skipped;
* ``risk="high"`` keeps only least-privilege candidates: skills that grant unrestricted
  ``Bash``, ``Write`` or network tools are not auto-selected for high-risk tasks;
* ``domain`` keeps candidates whose tags, name or description mention it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from skilldeck.errors import PolicyError, SkillNotFoundError
from skilldeck.skills.model.diagnostics import Diagnostic
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.policy.policy import ConflictMode, SkillLookup, validate_skill_set
from skilldeck.skills.rules import ToolRule

Risk = Literal["low", "medium", "high"]

_CODING_WORDS = re.compile(
    r"\b(implement|refactor|debug|bug|fix(?:es|ing)?|compile|unit tests?|function|class|method|"
    r"endpoint|api|repository|repo|pull request|pr|merge|build|lint|typescript|javascript|python|"
    r"rust|golang|java|kotlin|swift|sql query|regex|script|code|coding|programa[rç]?|"
    r"c[oó]digo|implementar|refatorar|corrigir|função|funcion|实现|代码|重构|修复)\b",
    re.IGNORECASE,
)
_CODE_SHAPES = re.compile(
    r"(`[^`]+`|\b\w+\.(?:py|ts|tsx|js|go|rs|java|kt|rb|cs|cpp|c|h)\b|\b[a-z]+[A-Z]\w+\b|\w+\(\))"
)
_NON_CODING_HINTS = re.compile(
    r"\b(research|summari[sz]e|write an? (?:email|essay|post|blog)|translate|pesquisar)\b",
    re.IGNORECASE,
)
_HIGH_PRIVILEGE = frozenset({"Bash", "Write", "Edit", "MultiEdit", "WebFetch"})


class Ranker(Protocol):
    """What selection needs from the matcher: names with scores in [0, 1], best first."""

    def rank(self, query: str, *, k: int = 10) -> Sequence[Any]: ...


def is_coding_task(task: str, metadata: Mapping[str, Any] | None = None) -> bool:
    """Heuristic coding detector: explicit metadata wins, then vocabulary and code shapes."""
    if metadata:
        for key in ("coding", "is_coding"):
            if isinstance(metadata.get(key), bool):
                return bool(metadata[key])
        kind = str(metadata.get("type", metadata.get("kind", ""))).lower()
        if kind in {"coding", "code", "programming", "software"}:
            return True
    words = len(_CODING_WORDS.findall(task))
    shapes = len(_CODE_SHAPES.findall(task))
    if _NON_CODING_HINTS.search(task) and shapes == 0:
        return words >= 2
    return words + 2 * shapes >= 1


def _high_privilege(skill: Skill) -> bool:
    for text in skill.metadata.allowed_tools:
        try:
            rule = ToolRule.parse(text)
        except ValueError:
            continue
        if rule.whole_tool and rule.tool in _HIGH_PRIVILEGE:
            return True
    return False


def _in_domain(skill: Skill, domain: str) -> bool:
    needle = domain.lower()
    haystack = " ".join([skill.name, skill.description, *skill.metadata.tags]).lower()
    return needle in haystack


def select(
    task: str,
    lookup: SkillLookup,
    *,
    metadata: Mapping[str, Any] | None = None,
    risk: Risk | None = None,
    domain: str | None = None,
    coding: bool | None = None,
    ranker: Ranker | None = None,
    pipeline: Sequence[str] = ("specification-engine", "opencode-implementer"),
    threshold: float = 0.35,
    max_extra: int = 3,
    conflicts: ConflictMode = "resolve",
) -> list[str]:
    """Skill names for ``task``, in execution order where the pipeline defines one."""
    coding = is_coding_task(task, metadata) if coding is None else coding
    chosen: list[str] = []
    if coding:
        chosen = _pipeline(pipeline, lookup, conflicts)
    if ranker is None:
        return chosen
    for match in ranker.rank(task, k=max_extra * 4 + len(chosen)):
        if len(chosen) >= len(pipeline if coding else ()) + max_extra:
            break
        name, score = str(match.name), float(match.score)
        if score < threshold or name in chosen:
            continue
        skill = _available(lookup, name)
        if skill is None or (risk == "high" and _high_privilege(skill)):
            continue
        if domain and not _in_domain(skill, domain):
            continue
        candidate = [*chosen, name]
        if validate_skill_set(candidate, lookup, conflicts=conflicts).valid:
            chosen = candidate
    return chosen


def _available(lookup: SkillLookup, name: str) -> Skill | None:
    try:
        skill = lookup.get(name)
    except SkillNotFoundError:
        return None
    return skill if lookup.why_unavailable(skill) is None else None


def _pipeline(pipeline: Sequence[str], lookup: SkillLookup, conflicts: ConflictMode) -> list[str]:
    result = validate_skill_set(list(pipeline), lookup, conflicts=conflicts)
    if not result.valid:
        raise PolicyError(
            "This is a coding task, but the coding pipeline "
            f"{list(pipeline)} cannot be used: "
            + "; ".join(d.message for d in result.errors)
            + " Install or enable the missing skills, or pass coding=False.",
            diagnostics=result.errors,
        )
    return list(pipeline)


def explain(diagnostics: Sequence[Diagnostic]) -> str:
    return "\n".join(str(d) for d in diagnostics)
