"""What a new session starts with besides the task: its system prompt, the skills it
was started with (``--skill`` bodies) and a skill hint before each user message.

Each is a small closure the :class:`~skilldeck.agent.loop.Agent` calls when a
session needs it, so nothing is ranked, indexed or imported for a run that never
asks: the level-1 block is ranked only when it does not fit its budget, and a hint
is computed only when hints are on and the registry holds a skill the model could
be pointed at (``skills/routing/hints.py`` builds the routing index on first use).
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

from skilldeck.agent.assembly import Hinter, Startup
from skilldeck.agent.context import SKILL_BODY_META
from skilldeck.agent.prompt import build_system_prompt, load_memory, wrap_data
from skilldeck.agent.spec import SkillPreload
from skilldeck.config import Settings
from skilldeck.errors import ConfigError
from skilldeck.llm.messages import Message, UserMessage
from skilldeck.skills.execution import render_available_skills
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.policy.policy import ComposedSkill
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.routing import registry_hinter, registry_ranking
from skilldeck.tools.base import ToolContext
from skilldeck.tools.memory import memory_folder as _memory_path
from skilldeck.tools.skill_results import cap_text
from skilldeck.tools.skill_session import remember_load
from skilldeck.tools.skill_tool import load_in_context

__all__ = [
    "BODY_CAP",
    "COMPACT_RANK_K",
    "COMPACT_SKILLS_BUDGET",
    "RANK_K",
    "Hinter",
    "Startup",
    "compact_skills_block",
    "hinter",
    "memory_folder",
    "preloader",
    "prompt_builder",
    "skill_body_message",
    "skills_block",
]

#: how many ranked skills the level-1 block puts first when it has to shorten
RANK_K = 20
#: the compact profile (small and local models): at most this many skills, the most
#: relevant to the task, in at most this many characters
COMPACT_RANK_K = 8
COMPACT_SKILLS_BUDGET = 2000
_LOCATION = re.compile(r"^<location>.*</location>\n", re.MULTILINE)
#: characters of a skill body preloaded into a conversation (``--skill``, chat's
#: ``/skill``): real bodies are far shorter; a 150 MB one must not be stored whole
BODY_CAP = 256 * 1024


def prompt_builder(
    settings: Settings,
    registry: SkillRegistry,
    *,
    cwd: Path,
    model: str,
    tool_names: list[str],
    max_turns: int,
    instructions: str,
    agent: str,
    list_skills: bool,
    compact: bool = False,
) -> Callable[[str], str]:
    """The system prompt for a new session; the skills block is ranked by its task and
    left out when the agent cannot load skills (no Skill tool). It is the only place
    the catalog is sent (the ``Skill`` tool's description does not repeat it): here it
    is ranked by the task and framed as data. ``compact``: the small-model profile's
    shorter sections and :func:`compact_skills_block`."""

    def build(task: str) -> str:
        tools = set(tool_names)
        block = ""
        if list_skills and compact:
            block = compact_skills_block(registry, task, tools=tools)
        elif list_skills:
            block = skills_block(registry, task, budget=settings.skills.prompt_budget, tools=tools)
        return build_system_prompt(
            cwd=cwd,
            model=model,
            tools=tool_names,
            max_turns=max_turns,
            instructions=instructions,
            skills_block=block,
            memory=load_memory(settings, agent=memory_folder(settings, agent), cwd=cwd),
            compact=compact,
        )

    return build


def memory_folder(settings: Settings, agent: str) -> str:
    """The name of ``agent``'s memory folder, exactly as the Memory tool spells it, so
    the notes it writes under ``MEMORY`` are the ones the system prompt loads."""
    return _memory_path(settings.home, agent).name


def skills_block(
    registry: SkillRegistry, task: str, *, budget: int, tools: set[str] | None = None
) -> str:
    """The level-1 block; ranked by relevance to ``task`` only when it must shorten.
    ``tools`` (this agent's tool names) leaves out skills whose ``requires-tools`` it
    lacks, computed for this block only (never written on the shared skills)."""
    skills = registry.usable()
    whole = render_available_skills(skills, budget=sys.maxsize, tools=tools)
    if len(whole) <= budget:  # everything fits in full: no ranking needed
        return whole
    ranked = registry_ranking(registry, task, k=RANK_K)
    return render_available_skills(skills, budget=budget, ranked=ranked, tools=tools)


def compact_skills_block(
    registry: SkillRegistry,
    task: str,
    *,
    tools: set[str] | None = None,
    k: int = COMPACT_RANK_K,
    budget: int = COMPACT_SKILLS_BUDGET,
) -> str:
    """The compact profile's level-1 block: the ``k`` skills most relevant to ``task``
    (all skills when the task ranks none), in ``budget`` characters; the model finds
    the others with the Skill tool's ``query``."""
    skills = registry.usable()
    ranked = registry_ranking(registry, task, k=k)
    chosen = [s for s in skills if s.name in set(ranked)] if ranked else skills
    # without <location> lines: the Skill tool loads by name, and a path costs ~20
    # tokens a skill (the budget is for what stays)
    paths = sum(len(str(s.skill_md)) + len("<location></location>\n") for s in chosen)
    block = render_available_skills(chosen, budget=budget + paths, ranked=ranked, tools=tools)
    return _LOCATION.sub("", block)


def hinter(settings: Settings, registry: SkillRegistry, *, enabled: bool | None) -> Hinter | None:
    """Per-message hints, or None when they are off (nothing is built then)."""
    config = settings.skills.hints
    if not (config.enabled if enabled is None else enabled):
        return None
    return registry_hinter(
        registry, k=config.k, threshold=config.threshold, usable=registry.is_available
    )


def preloader(
    composed: ComposedSkill | None, preload: SkillPreload, *, settings: Settings
) -> Startup | None:
    """The skills a new session starts with: level-2 bodies of the composed set (or of
    the names ``preload`` picks from it, in its execution order), each loaded by the
    one load operation (:func:`~skilldeck.tools.skill_tool.load_in_context`) in the new
    session's context — substitutions, and dynamic context vetted by the session's own
    gate. A load that is refused or fails stops the session before it starts
    (PermissionDeniedError or the command's error, with the reason). Raises
    ConfigError now when ``preload`` names a skill outside the composed set.

    A preloaded body is marked loaded in the session (``tools/skill_session.py``), so
    a ``Skill`` call with the same arguments answers "already loaded" instead of adding
    it again — unless the body had to be cut at :data:`BODY_CAP`: then the message
    holds only its start, and the ``Skill`` tool may still be asked for it."""
    if composed is None:
        if preload.skills:
            raise ConfigError(
                f"Cannot preload {', '.join(preload.skills)}: the agent has no skill set; "
                "give the skills to the agent as well."
            )
        return None
    chosen = _chosen(composed, preload.skills)

    async def preload_all(ctx: ToolContext) -> list[Message]:
        messages: list[Message] = []
        for skill in chosen:
            loaded = await load_in_context(skill, preload.arguments, ctx, settings=settings)
            loaded.raise_for_status()
            for warning in loaded.warnings:
                _warn(preload, warning)
            source = str(skill.skill_md)
            messages.append(skill_body_message(skill.name, loaded.text, source=source))
            if len(loaded.text) <= BODY_CAP:
                remember_load(skill, preload.arguments, ctx, preloaded=True)
        return messages

    return preload_all


def _chosen(composed: ComposedSkill, names: tuple[str, ...]) -> list[Skill]:
    """The composed skills ``names`` picks (all when empty), in execution order."""
    if not names:
        return list(composed.skills)
    wanted = {name.partition("@")[0] for name in names}
    missing = sorted(wanted - {s.name for s in composed.skills})
    if missing:
        raise ConfigError(
            f"Cannot preload {', '.join(missing)}: not in the agent's skill set "
            f"({', '.join(composed.names) or 'empty'})."
        )
    return [s for s in composed.skills if s.name in wanted]


def _warn(preload: SkillPreload, message: str) -> None:
    if preload.on_warning is not None:
        preload.on_warning(message)
    else:
        warnings.warn(message, UserWarning, stacklevel=2)


def skill_body_message(
    name: str, body: str, *, note: str | None = None, source: str | None = None
) -> UserMessage:
    """A loaded skill's body as a user-meta message, wrapped and marked as skill content,
    cut at :data:`BODY_CAP` characters (the note names ``source``, where the rest is)."""
    body, _ = cap_text(body, BODY_CAP, source=source)
    lead = note or f'The skill "{name}" was loaded for this session. Follow its instructions.'
    return UserMessage(
        content=f"{lead}\n{wrap_data('skill', body, name=name)}", meta=SKILL_BODY_META
    )
