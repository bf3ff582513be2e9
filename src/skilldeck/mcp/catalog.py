"""The skill catalog as MCP data: listings, resource URIs and file reads.

Pure functions over a registry, shared by the MCP server and easy to test alone.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from mcp_types import Prompt as MCPPrompt
from mcp_types import PromptArgument as MCPPromptArgument
from mcp_types import Resource as MCPResource

from skilldeck.skills.model.skill import Skill
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.routing import registry_matches

LOAD_SKILL_INTRO = (
    "Load a skill: returns its instructions (SKILL.md body, with `args` substituted for "
    "$ARGUMENTS) and the list of its files. Load the matching skill before starting a task "
    "it covers, then follow its instructions. Available skills:"
)
#: files listed as resources across all skills (SKILL.md of every skill is always listed)
MAX_LISTED_FILES = 2000
#: a single resource read larger than this is cut, with a note saying so
MAX_READ_CHARS = 1_000_000
_WORD = re.compile(r"[a-z0-9]+")


def skill_summary(skill: Skill) -> dict[str, Any]:
    meta = skill.metadata
    return {
        "name": skill.name,
        "description": skill.description,
        "version": meta.version,
        "kind": str(skill.kind),
        "user_invocable": meta.user_invocable,
        "argument_hint": meta.argument_hint,
        "tags": list(meta.tags),
    }


def list_skills_payload(
    registry: SkillRegistry, *, query: str | None, limit: int
) -> dict[str, Any]:
    """``{"total", "skills": [...]}``; with a query, ranked best first with scores."""
    skills = registry.usable()
    if not query or not query.strip():
        return {"total": len(skills), "skills": [skill_summary(s) for s in skills[:limit]]}
    ranked = _rank(registry, skills, query, limit)
    return {
        "total": len(skills),
        "query": query,
        "skills": [{**skill_summary(s), "score": round(score, 4)} for s, score in ranked],
    }


def _rank(
    registry: SkillRegistry, skills: list[Skill], query: str, limit: int
) -> list[tuple[Skill, float]]:
    """The BM25F matcher (imported on the first ranked listing), else plain word
    overlap when it cannot be imported."""
    try:
        matches = registry_matches(registry, query, k=limit)
    except ImportError:
        return _overlap_rank(skills, query, limit)
    available = {s.name for s in skills}
    return [(m.skill, float(m.score)) for m in matches if m.name in available]


def _overlap_rank(skills: list[Skill], query: str, limit: int) -> list[tuple[Skill, float]]:
    words = set(_WORD.findall(query.lower()))
    scored = []
    for skill in skills:
        text = f"{skill.name} {skill.name} {skill.description}".lower()
        hits = set(_WORD.findall(text)) & words
        if hits:
            scored.append((skill, len(hits) / len(words)))
    scored.sort(key=lambda pair: (-pair[1], pair[0].name))
    return scored[:limit]


def skill_uri(name: str, path: str) -> str:
    return f"skill://{quote(name, safe='')}/{quote(path)}"


def skill_resources(skills: list[Skill]) -> list[MCPResource]:
    """``skill://<name>/SKILL.md`` for every skill of ``skills`` (the usable ones:
    ``SkillRegistry.usable()``), then files up to a total cap."""
    out = [
        MCPResource(
            uri=skill_uri(s.name, "SKILL.md"),
            name=f"{s.name}/SKILL.md",
            description=s.description,
            mime_type="text/markdown",
        )
        for s in skills
    ]
    budget = MAX_LISTED_FILES
    for skill in skills:
        if budget <= 0:
            break
        for rel in skill.list_resources()[:budget]:
            out.append(
                MCPResource(
                    uri=skill_uri(skill.name, rel),
                    name=f"{skill.name}/{rel}",
                    mime_type="text/markdown" if rel.endswith(".md") else None,
                )
            )
            budget -= 1
    return out


def skill_prompt(skill: Skill) -> MCPPrompt:
    """A user-invocable skill as an MCP prompt taking one ``arguments`` string."""
    hint = skill.metadata.argument_hint or "Arguments for the skill"
    return MCPPrompt(
        name=skill.name,
        description=skill.description,
        arguments=[MCPPromptArgument(name="arguments", description=hint, required=False)],
    )


def resource_text(skill: Skill, path: str) -> str:
    """``SKILL.md`` (the whole file) or a confined resource of ``skill``."""
    if path in ("SKILL.md", "skill.md"):
        text = skill.skill_md.read_text(encoding="utf-8", errors="replace")
    else:
        text = skill.read_resource(path)  # confined: escapes raise ResourceAccessError
    if len(text) > MAX_READ_CHARS:
        cut = len(text) - MAX_READ_CHARS
        text = text[:MAX_READ_CHARS] + f"\n[… {cut:,} more characters not shown]"
    return text
