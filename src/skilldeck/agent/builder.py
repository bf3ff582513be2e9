"""``build_agent``: the one place where a model, tools, skills, hints and a store meet.

The CLI, the chat REPL, ``resume`` in another process and library users all build
their :class:`~skilldeck.agent.loop.Agent` here, so they get the same wiring:

* the model from ``make_model`` (``provider:model``), or a ``Model`` object;
* an agent definition (``agent=``: AGENT.md or a built-in type) for instructions,
  model, tools, preloaded skills, permission mode and turn limit;
* the tools and the gate (``agent/toolset.py``): built-ins, ``Memory``, ``Skill`` when a
  skill is usable, ``Task``/``TaskOutput`` when sub-agents are allowed — narrowed by
  the definition, the composed skill set and deny rules — behind a
  :class:`~skilldeck.agent.permissions.PermissionGate` (config + flags);
* the skill registry (discovery roots, or the one passed in);
* a system prompt built per session (instructions, environment, the level-1 skills
  block ranked by relevance to the task when it does not all fit, ``MEMORY.md``);
* per-message skill hints (``settings.skills.hints``) as ``skill-hint`` messages;
* ``--skill NAME`` bodies preloaded as ``skill-body`` messages;
* the session store and the tool gate.

What a session needs to be rebuilt later is saved with it: the model spec, base URL,
roots and flags in its metadata, and its **launch record** (``agent/launch.py``: the
effective settings, the whole gate, the tools it held, its type and depth), which
:func:`skilldeck.agent.resume.build_agent_for_session` restores — reading no config
file — when ``skilldeck resume`` continues a run started elsewhere.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from skilldeck.agent.context import SKILL_BODY_META, ContextManager
from skilldeck.agent.definitions import AgentDefinition, discover_agents
from skilldeck.agent.events import Event
from skilldeck.agent.gate import Approver, ToolGate
from skilldeck.agent.launch import (
    LAUNCH_KEY,
    LAUNCH_VERSION,
    definition_to_dict,
    gate_to_dict,
    snapshot_settings,
)
from skilldeck.agent.loop import Agent, Hinter, Limits
from skilldeck.agent.prompt import (
    DEFAULT_INSTRUCTIONS,
    build_system_prompt,
    load_memory,
    wrap_data,
)
from skilldeck.agent.session import SessionStore
from skilldeck.agent.toolset import (
    ManagerFactory,
    PermissionOptions,
    Toolset,
    assemble_tools,
    protocol_section,
)
from skilldeck.config import CONFIG_FILENAME, WORKSPACE_DIRNAME, Settings
from skilldeck.errors import ModelConfigError
from skilldeck.llm.messages import Message, Model, UserMessage
from skilldeck.skills.policy import ComposedSkill
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import Tool, ToolContext, ToolRegistry
from skilldeck.tools.memory import memory_dir
from skilldeck.tools.skill_tool import cap_text

#: how many ranked skills the level-1 block puts first when it has to shorten
RANK_K = 20
#: characters of a skill body preloaded into a conversation (``--skill``, chat's
#: ``/skill``): real bodies are far shorter; a 150 MB one must not be stored whole
BODY_CAP = 256 * 1024


def choose_model_spec(settings: Settings, explicit: str | None = None) -> str:
    """``--model``, then config (``model``, ``models.default``; workspace over user),
    then ``SKILLDECK_MODEL``. Raises ModelConfigError naming the three ways to set one."""
    if explicit:
        return explicit
    for data in reversed(settings.config_tables()):  # the workspace's only when trusted
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
    model: str | Model | None = None,
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
    instructions: str | None = None,
    agent_name: str | None = None,
    base_url: str | None = None,
    hints: bool | None = None,
    services: dict[str, Any] | None = None,
    on_event: Callable[[Event], None] | None = None,
    agent: str | AgentDefinition | None = None,
    permission_mode: str | None = None,
    allow: Sequence[str] = (),
    ask: Sequence[str] = (),
    deny: Sequence[str] = (),
    initial_state: dict[str, Any] | None = None,
    parent_session: str | None = None,
    only_tools: Sequence[str] | None = None,
    depth: int = 0,
    launch_extra: dict[str, Any] | None = None,
) -> Agent:
    """A ready :class:`Agent`. ``json_events`` turns off text deltas (whole texts only).

    ``agent`` names an agent definition (AGENT.md or a built-in type) whose
    instructions, model, tools, preloaded skills, permission mode and turn limit the
    agent takes (explicit arguments win). ``skills`` are validated and composed: the
    run gets exactly their composed tool set. ``permission_mode``/``allow``/``ask``/
    ``deny`` add to ``settings.permissions``; they build the gate unless ``gate`` is
    given. Raises SkillNotFoundError, PolicyError (invalid skill set) or ConfigError.

    ``only_tools`` caps the tool set by name and ``depth`` places the agent below the
    main one (what ``resume`` restores); ``launch_extra`` adds to the launch record a
    new session stores (a sub-agent's type, depth and roots).
    """
    from skilldeck.llm.client import ModelLLMClient

    workdir = (cwd or settings.workspace).resolve()
    definition = resolve_definition(settings, agent)
    model = model or (definition.model if definition else None) or choose_model_spec(settings)
    spec = normalise_spec(model) if isinstance(model, str) else model.name
    llm = _make_model(model, spec, settings, base_url)
    reg = registry or SkillRegistry.discover(settings, roots=roots, no_defaults=no_defaults)
    wanted = list(dict.fromkeys([*(definition.skills if definition else []), *skills]))
    options = PermissionOptions(permission_mode, tuple(allow), tuple(ask), tuple(deny))
    toolset = assemble_tools(
        settings,
        reg,
        tools=tools,
        definition=definition,
        skills=wanted,
        gate=gate,
        permissions=options,
        manager_factory=_manager_factory(
            settings, reg, llm, spec, approver, depth=depth, scan=(roots, no_defaults)
        ),
        only_tools=only_tools,
    )
    turns = max_turns or (definition.max_turns if definition else None)
    limits = Limits.from_settings(settings, max_turns=turns)
    name = agent_name or (definition.name if definition else "main")
    base = instructions or (definition.instructions if definition else "") or DEFAULT_INSTRUCTIONS
    protocol = protocol_section(toolset.composed)
    prompt = _prompt_builder(
        settings,
        reg,
        cwd=workdir,
        model=spec,
        tool_names=toolset.tools.names(),
        max_turns=limits.max_turns,
        instructions=f"{base.rstrip()}\n\n{protocol}" if protocol else base,
        agent=name,
        list_skills="Skill" in toolset.tools,
    )
    store = session_store or SessionStore.open(settings)
    if toolset.manager is not None:  # foreground children share the parent's store
        toolset.manager.store = store
    built = Agent(
        model=llm,
        tools=toolset.tools,
        settings=settings,
        store=store,
        system_prompt=prompt,
        cwd=workdir,
        name=name,
        limits=limits,
        gate=toolset.gate,
        approver=approver,
        hinter=_hinter(settings, reg, enabled=hints) if "Skill" in toolset.tools else None,
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
            "agent_definition": definition.name if definition else None,
            "permissions": options.to_dict(),
            LAUNCH_KEY: _launch_record(
                settings,
                toolset,
                definition=definition,
                depth=depth,
                spec=spec,
                extra={
                    "roots": [str(Path(r).resolve()) for r in roots],
                    "no_defaults": no_defaults,
                    "max_turns": limits.max_turns,
                    "base_url": base_url,
                    **(launch_extra or {}),
                },
            ),
        },
        model_spec=spec,
        stream_text=not json_events,
        on_event=on_event,
        startup=_preloader(toolset.composed, cwd=workdir),
        owns_store=session_store is None,
        initial_state=initial_state,
        parent_session=parent_session,
    )
    built.subagents = toolset.manager
    built.composed = toolset.composed
    return built


def _launch_record(
    settings: Settings,
    toolset: Toolset,
    *,
    definition: AgentDefinition | None,
    depth: int,
    spec: str,
    extra: dict[str, Any],
) -> dict[str, Any]:
    """What a new session stores to be resumed as itself (see ``agent/launch.py``)."""
    return {
        "version": LAUNCH_VERSION,
        "settings": snapshot_settings(settings),
        "gate": gate_to_dict(toolset.gate),
        "tools": toolset.tools.names(),
        "agent_type": definition.name if definition else None,
        "definition": definition_to_dict(definition),
        "skills": toolset.composed.names if toolset.composed else [],
        "depth": depth,
        "model_spec": spec,
        **extra,
    }


def resolve_definition(
    settings: Settings, agent: str | AgentDefinition | None
) -> AgentDefinition | None:
    """The agent definition named ``agent`` (AgentNotFoundError with suggestions)."""
    if agent is None or isinstance(agent, AgentDefinition):
        return agent
    return discover_agents(settings).get(agent)


def _manager_factory(
    settings: Settings,
    registry: SkillRegistry,
    llm: Model,
    spec: str,
    approver: Approver | None,
    *,
    depth: int = 0,
    scan: tuple[Sequence[Path], bool] = ((), False),
) -> ManagerFactory:
    """Builds the SubagentManager for the agent (``depth`` 0: the main agent; deeper for
    a resumed sub-agent) once its final tools and gate exist. Children use the
    parent's model object unless they name another; ``scan`` (roots, no_defaults) is
    recorded with their sessions so a resumed child finds the same skills."""
    from skilldeck.agent.subagents import SubagentManager

    def model_for(name: str | None) -> Model:
        if not name or name == spec:
            return llm
        return _make_model(name, normalise_spec(name), settings, None)

    def make(tools: ToolRegistry, gate: ToolGate) -> SubagentManager:
        return SubagentManager(
            settings=settings,
            parent_tools=tools,
            catalog=discover_agents(settings),
            registry=registry,
            model_factory=model_for,
            parent_gate=gate,
            approver=approver,
            depth=depth,
            scan={"roots": [str(Path(r).resolve()) for r in scan[0]], "no_defaults": scan[1]},
        )

    return make


def _make_model(model: str | Model, spec: str, settings: Settings, base_url: str | None) -> Model:
    if not isinstance(model, str):
        return model
    from skilldeck.llm.factory import make_model

    return make_model(spec, settings=settings, base_url=base_url)


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
    list_skills: bool,
) -> Callable[[str], str]:
    """The system prompt for a new session; the skills block is ranked by its task and
    left out when the agent cannot load skills (no Skill tool)."""

    def build(task: str) -> str:
        budget = settings.skills.prompt_budget
        return build_system_prompt(
            cwd=cwd,
            model=model,
            tools=tool_names,
            max_turns=max_turns,
            instructions=instructions,
            skills_block=skills_block(registry, task, budget=budget) if list_skills else "",
            memory=load_memory(settings, agent=memory_folder(settings, agent), cwd=cwd),
        )

    return build


def memory_folder(settings: Settings, agent: str) -> str:
    """The name of ``agent``'s memory folder, exactly as the Memory tool spells it, so
    the notes it writes under ``MEMORY`` are the ones the system prompt loads."""
    ctx = ToolContext(session_id="", workspace=settings.workspace, settings=settings)
    ctx.agent_name = agent
    return memory_dir(ctx).name


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
    composed: ComposedSkill | None, *, cwd: Path
) -> Callable[[str], list[Message]] | None:
    """``--skill NAME``: level-2 bodies of the composed set, in its execution order."""
    if composed is None:
        return None
    from skilldeck.skills.disclosure import render_level2

    chosen = list(composed.skills)

    def preload(session_id: str) -> list[Message]:
        return [
            skill_body_message(
                s.name,
                render_level2(s, session_id=session_id, project_dir=cwd),
                source=str(s.skill_md),
            )
            for s in chosen
        ]

    return preload


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
