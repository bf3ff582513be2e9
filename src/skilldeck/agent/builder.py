"""``build_agent``: the one place where a model, tools, skills, hints and a store meet.

The CLI, the chat REPL, ``resume`` in another process and library users all build
their :class:`~skilldeck.agent.loop.Agent` here, so they get the same wiring:

* the model from ``make_model`` (``provider:model``), or a ``Model`` object;
* the built-in tools, plus the ``Skill`` tool when at least one skill is usable;
* the skill registry (discovery roots, or the one passed in);
* a system prompt built per session (instructions, environment, the level-1 skills
  block ranked by relevance to the task when it does not all fit, ``MEMORY.md``);
* per-message skill hints (``settings.skills.hints``) as ``skill-hint`` messages;
* ``--skill NAME`` bodies preloaded as ``skill-body`` messages;
* the session store and the tool gate.

What a session needs to be rebuilt later (model spec, base URL, roots, preloaded
skills, turn limit) is saved in its metadata; :func:`build_agent_for_session` reads
it back, which is how ``skilldeck resume`` continues a run started elsewhere.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from skilldeck.agent.context import SKILL_BODY_META, ContextManager
from skilldeck.agent.events import Event
from skilldeck.agent.gate import Approver, ToolGate
from skilldeck.agent.loop import Agent, Hinter, Limits
from skilldeck.agent.prompt import (
    DEFAULT_INSTRUCTIONS,
    build_system_prompt,
    load_memory,
    wrap_data,
)
from skilldeck.agent.session import SessionRecord, SessionStore
from skilldeck.config import CONFIG_FILENAME, WORKSPACE_DIRNAME, Settings, read_toml
from skilldeck.errors import ModelConfigError
from skilldeck.llm.messages import Message, Model, UserMessage
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import Tool, ToolRegistry

#: how many ranked skills the level-1 block puts first when it has to shorten
RANK_K = 20


def choose_model_spec(settings: Settings, explicit: str | None = None) -> str:
    """``--model``, then config (``model``, ``models.default``; workspace over user),
    then ``SKILLDECK_MODEL``. Raises ModelConfigError naming the three ways to set one."""
    if explicit:
        return explicit
    for path in (settings.workspace_config_path, settings.home / CONFIG_FILENAME):
        data = read_toml(path)
        models = data.get("models")
        found = data.get("model") or (models.get("default") if isinstance(models, dict) else None)
        if isinstance(found, str) and found.strip():
            return found.strip()
    env = os.environ.get("SKILLDECK_MODEL", "").strip()
    if env:
        return env
    if settings.model or settings.models.default:
        return str(settings.model or settings.models.default)
    raise ModelConfigError(
        "No model chosen. Pass --model provider:name (e.g. --model ollama:qwen2.5 or "
        f'--model scripted:examples/demo.jsonl), set `model = "..."` in '
        f"{settings.home / CONFIG_FILENAME} or ./{WORKSPACE_DIRNAME}/{CONFIG_FILENAME}, "
        "or export SKILLDECK_MODEL."
    )


def normalise_spec(spec: str) -> str:
    """Make a ``scripted:`` path absolute, so another process can resume the session."""
    if spec.startswith("scripted:"):
        path = Path(spec.removeprefix("scripted:")).expanduser()
        if not path.is_absolute() and path.exists():
            return f"scripted:{path.resolve()}"
    return spec


def build_agent(
    settings: Settings,
    *,
    model: str | Model,
    skills: Sequence[str] = (),
    cwd: Path | None = None,
    max_turns: int | None = None,
    json_events: bool = False,
    approver: Approver | None = None,
    session_store: SessionStore | None = None,
    registry: SkillRegistry | None = None,
    roots: Sequence[Path] = (),
    no_defaults: bool = False,
    gate: ToolGate | None = None,
    tools: Sequence[Tool] | None = None,
    instructions: str = DEFAULT_INSTRUCTIONS,
    agent_name: str = "main",
    base_url: str | None = None,
    hints: bool | None = None,
    services: dict[str, Any] | None = None,
    on_event: Callable[[Event], None] | None = None,
) -> Agent:
    """A ready :class:`Agent`. ``json_events`` turns off text deltas (whole texts only)."""
    from skilldeck.llm.client import ModelLLMClient

    workdir = (cwd or settings.workspace).resolve()
    spec = normalise_spec(model) if isinstance(model, str) else model.name
    llm = _make_model(model, spec, settings, base_url)
    reg = registry or SkillRegistry.discover(settings, roots=roots, no_defaults=no_defaults)
    tool_registry = ToolRegistry(list(tools)) if tools is not None else _default_tools(reg)
    limits = Limits.from_settings(settings, max_turns=max_turns)
    prompt = _prompt_builder(
        settings,
        reg,
        cwd=workdir,
        model=spec,
        tool_names=tool_registry.names(),
        max_turns=limits.max_turns,
        instructions=instructions,
        agent=agent_name,
    )
    store = session_store or SessionStore.open(settings)
    agent = Agent(
        model=llm,
        tools=tool_registry,
        settings=settings,
        store=store,
        system_prompt=prompt,
        cwd=workdir,
        name=agent_name,
        limits=limits,
        gate=gate,
        approver=approver,
        hinter=_hinter(settings, reg, enabled=hints),
        context=ContextManager.for_model(spec, settings),
        skills=reg,
        services={"llm": ModelLLMClient(llm), **(services or {})},
        metadata={
            "model_spec": spec,
            "base_url": base_url,
            "skills": list(skills),
            "roots": [str(Path(r).resolve()) for r in roots],
            "no_defaults": no_defaults,
            "max_turns": max_turns,
        },
        model_spec=spec,
        stream_text=not json_events,
        on_event=on_event,
        startup=_preloader(reg, skills, cwd=workdir),
        owns_store=session_store is None,
    )
    return agent


def build_agent_for_session(
    settings: Settings,
    session: SessionRecord,
    *,
    model: str | Model | None = None,
    base_url: str | None = None,
    **kwargs: Any,
) -> Agent:
    """Rebuild the agent a stored session ran with (its model, cwd, roots, skills)."""
    meta = session.metadata
    return build_agent(
        settings,
        model=model or str(meta.get("model_spec") or session.model),
        skills=list(meta.get("skills") or []),
        cwd=Path(session.cwd),
        max_turns=kwargs.pop("max_turns", None) or meta.get("max_turns"),
        roots=[Path(r) for r in meta.get("roots") or []],
        no_defaults=bool(meta.get("no_defaults")),
        base_url=base_url or meta.get("base_url"),
        agent_name=session.agent,
        **kwargs,
    )


def _make_model(model: str | Model, spec: str, settings: Settings, base_url: str | None) -> Model:
    if not isinstance(model, str):
        return model
    from skilldeck.llm.factory import make_model

    return make_model(spec, settings=settings, base_url=base_url)


def _default_tools(registry: SkillRegistry) -> ToolRegistry:
    """The built-in tools, plus ``Skill`` when a skill is usable (code skills it runs
    call tools through this same registry)."""
    from skilldeck.tools.builtin import builtin_tools

    tools = ToolRegistry(builtin_tools())
    if any(s.available for s in registry.list()):
        from skilldeck.tools.skill_tool import SkillTool

        tools.register(SkillTool(registry, tools=tools))
    return tools


def _prompt_builder(
    settings: Settings,
    registry: SkillRegistry,
    *,
    cwd: Path,
    model: str,
    tool_names: list[str],
    max_turns: int,
    instructions: str,
    agent: str,
) -> Callable[[str], str]:
    """The system prompt for a new session; the skills block is ranked by its task."""

    def build(task: str) -> str:
        return build_system_prompt(
            cwd=cwd,
            model=model,
            tools=tool_names,
            max_turns=max_turns,
            instructions=instructions,
            skills_block=skills_block(registry, task, budget=settings.skills.prompt_budget),
            memory=load_memory(settings, agent=agent, cwd=cwd),
        )

    return build


def skills_block(registry: SkillRegistry, task: str, *, budget: int) -> str:
    """The level-1 block; ranked by relevance to ``task`` only when it must shorten."""
    from skilldeck.skills.disclosure import render_available_skills

    skills = registry.list()
    whole = render_available_skills(skills, budget=sys.maxsize)
    if len(whole) <= budget:  # everything fits in full: no ranking needed
        return whole
    from skilldeck.skills.match import SkillMatcher, rank_for_disclosure

    ranked = rank_for_disclosure(SkillMatcher.for_registry(registry), task, k=RANK_K)
    return render_available_skills(skills, budget=budget, ranked=ranked)


def _hinter(settings: Settings, registry: SkillRegistry, *, enabled: bool | None) -> Hinter | None:
    config = settings.skills.hints
    if not (config.enabled if enabled is None else enabled):
        return None
    if not any(s.available for s in registry.list()):
        return None

    def hint(message: str) -> tuple[str, list[str]] | None:
        from skilldeck.skills.hints import skill_hint
        from skilldeck.skills.match import SkillMatcher

        matcher = SkillMatcher.for_registry(registry)
        # already delimited as <skill-hint>…</skill-hint>, descriptions defused
        return skill_hint(matcher, message, k=config.k, threshold=config.threshold)

    return hint


def _preloader(
    registry: SkillRegistry, names: Sequence[str], *, cwd: Path
) -> Callable[[str], list[Message]] | None:
    """``--skill NAME``: level-2 bodies, resolved now (unknown names fail fast)."""
    if not names:
        return None
    from skilldeck.skills.disclosure import render_level2

    chosen = [registry.get(n) for n in names]

    def preload(session_id: str) -> list[Message]:
        return [
            skill_body_message(s.name, render_level2(s, session_id=session_id, project_dir=cwd))
            for s in chosen
        ]

    return preload


def skill_body_message(name: str, body: str, *, note: str | None = None) -> UserMessage:
    """A loaded skill's body as a user-meta message, wrapped and marked as skill content."""
    lead = note or f'The skill "{name}" was loaded for this session. Follow its instructions.'
    return UserMessage(
        content=f"{lead}\n{wrap_data('skill', body, name=name)}", meta=SKILL_BODY_META
    )
