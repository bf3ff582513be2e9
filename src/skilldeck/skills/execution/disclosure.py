"""Progressive disclosure: what the model sees of each skill, and when.

* Level 1 — :func:`render_available_skills`: every usable skill's name, description
  and location in an ``<available_skills>`` block that fits a character budget. When
  it does not fit, descriptions are shortened step by step (least relevant skills
  first) before any skill is dropped, and the block ends with a note saying how many
  were left out and how to search for them — a dropped skill is still findable.
* Level 2 — :func:`render_level2`: the body, with placeholders substituted, under
  the skill's base directory (so relative paths in it resolve), plus a short list
  of the files the skill ships.
* Level 3 — resources, read on demand: ``Skill.list_resources`` /
  ``Skill.read_resource``, confined to the skill folder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import escape

from skilldeck.skills.execution.gating import tools_reason
from skilldeck.skills.execution.substitute import substitute
from skilldeck.skills.model.skill import Skill

__all__ = ["DESCRIPTION_LIMITS", "render_available_skills", "render_level2"]

#: Description lengths tried in turn when the block is over budget: the first
#: sentence (at most 200 chars), then hard caps. Below the last one a skill is dropped.
DESCRIPTION_LIMITS = (200, 100, 50)
#: Resources listed at level 2; the rest are counted, not named.
LEVEL2_MAX_RESOURCES = 30
_OPEN, _CLOSE = "<available_skills>\n", "</available_skills>"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def render_available_skills(
    skills: Sequence[Skill],
    *,
    budget: int = 8000,
    ranked: Sequence[str] | None = None,
    tools: set[str] | frozenset[str] | None = None,
) -> str:
    """The level-1 block, at most ``budget`` characters when that is at all possible.

    ``skills`` are the ones the caller can offer (``SkillRegistry.usable()``: enabled
    and available on this machine, the registry's view). Skills with
    ``disable-model-invocation`` are left out; with ``tools`` (the agent's tool
    names), also those whose ``requires-tools`` this agent lacks — computed here, for
    this block only, never stored. ``ranked``
    (names, most relevant first) puts those skills first and keeps them in full the
    longest; the others follow in the order given.
    """
    shown = _ordered([s for s in skills if _visible(s, tools)], ranked)
    if not shown:
        return ""
    wanted = set(ranked or ())
    n_ranked = sum(1 for s in shown if s.name in wanted)
    fit = _Fitter(shown, budget)
    # Least relevant first: the unranked tail is shortened, then dropped, before the
    # ranked head loses a single character.
    for lo, hi in ((n_ranked, len(shown)), (0, n_ranked)):
        for limit in DESCRIPTION_LIMITS:
            for i in range(hi - 1, lo - 1, -1):
                if fit.fits():
                    break
                fit.shorten(i, limit)
        while fit.kept > lo and not fit.fits():
            fit.drop_last()
    return _block(fit.entries[: fit.kept], left_out=len(shown) - fit.kept)


class _Fitter:
    """The block being fitted: entries, how many are kept, and their total size."""

    def __init__(self, skills: list[Skill], budget: int) -> None:
        self.skills = skills
        self.budget = budget
        self.descriptions = [" ".join(s.description.split()) for s in skills]
        self.entries = [_entry(s, d) for s, d in zip(skills, self.descriptions, strict=True)]
        self.kept = len(skills)
        self.body = sum(map(len, self.entries))

    def fits(self) -> bool:
        left_out = len(self.skills) - self.kept
        return len(_OPEN) + self.body + len(_note(left_out)) + len(_CLOSE) <= self.budget

    def shorten(self, i: int, limit: int) -> None:
        short = _shorten(self.descriptions[i], limit)
        if short != self.descriptions[i]:
            new = _entry(self.skills[i], short)
            self.body += len(new) - len(self.entries[i])
            self.descriptions[i], self.entries[i] = short, new

    def drop_last(self) -> None:
        self.kept -= 1
        self.body -= len(self.entries[self.kept])


def _visible(skill: Skill, tools: set[str] | frozenset[str] | None) -> bool:
    if skill.metadata.disable_model_invocation:
        return False
    return tools is None or tools_reason(skill, tools) is None


def _ordered(skills: list[Skill], ranked: Sequence[str] | None) -> list[Skill]:
    if not ranked:
        return skills
    position = {name: i for i, name in reversed(list(enumerate(ranked)))}
    first = sorted((s for s in skills if s.name in position), key=lambda s: position[s.name])
    return first + [s for s in skills if s.name not in position]


def _shorten(text: str, limit: int) -> str:
    """First sentence if it fits ``limit``, else cut at a word boundary with "…"."""
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    if len(first) <= limit:
        return first
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


def _entry(skill: Skill, description: str) -> str:
    return (
        f"<skill>\n<name>{escape(skill.name)}</name>\n"
        f"<description>{escape(description)}</description>\n"
        f"<location>{escape(str(skill.skill_md))}</location>\n</skill>\n"
    )


def _note(left_out: int) -> str:
    if not left_out:
        return ""
    noun = "skill is" if left_out == 1 else "skills are"
    return (
        f"{left_out} more {noun} not shown; call the Skill tool with "
        '{"query": "<what you need>"} to search them.\n'
    )


def _block(entries: Sequence[str], *, left_out: int) -> str:
    return _OPEN + "".join(entries) + _note(left_out) + _CLOSE


# ---- level 2 -------------------------------------------------------------------------


def render_level2(
    skill: Skill,
    *,
    arguments: str | None = None,
    session_id: str | None = None,
    project_dir: Path | None = None,
) -> str:
    """Base directory, the body with placeholders filled in, and the skill's files."""
    body = substitute(
        skill.body,
        arguments=arguments,
        skill_dir=skill.folder,
        session_id=session_id,
        project_dir=project_dir,
        declared=skill.metadata.arguments,
    )
    parts = [f"Base directory for this skill: {skill.folder}", body]
    listing = _resources(skill)
    if listing:
        parts.append(listing)
    return "\n\n".join(p for p in parts if p)


def _resources(skill: Skill) -> str:
    files = skill.list_resources()
    if not files:
        return ""
    lines = [f"- {f}" for f in files[:LEVEL2_MAX_RESOURCES]]
    if len(files) > LEVEL2_MAX_RESOURCES:
        lines.append(f"- … and {len(files) - LEVEL2_MAX_RESOURCES} more")
    return "Files in this skill (paths relative to the base directory):\n" + "\n".join(lines)
