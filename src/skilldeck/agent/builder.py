"""Building an agent: :func:`build` (a spec and a runtime → a complete ``Agent``) and
``build_agent``, its keyword form.

The CLI, the chat REPL, ``resume`` in another process, sub-agents and library users
all build their :class:`~skilldeck.agent.loop.Agent` here, so they get the same
wiring:

* the model from ``make_model`` (``provider:model``), or a ``Model`` object;
* an agent definition (AGENT.md or a built-in type) for instructions, model, tools,
  preloaded skills, permission mode and turn limit;
* the tools and the gate (``agent/toolset.py``, one narrowing pipeline for every
  agent): built-ins, ``Memory``, ``Skill`` when a skill is usable, ``Task``/
  ``TaskOutput`` when sub-agents are allowed — narrowed by the definition, the
  composed skill set, deny rules and a cap — behind a
  :class:`~skilldeck.agent.permissions.permissions.PermissionGate` (config + flags);
* the skill registry (the runtime's, or discovered from its roots);
* a system prompt built per session, per-message skill hints and ``--skill`` bodies
  (``agent/startup.py``);
* the session store, and a :class:`~skilldeck.agent.subagents.subagents.SubagentManager` that
  receives :func:`build` itself as its agent factory (it never imports this module).

Every object is complete when constructed: the store exists before the manager that
shares it, the ``Skill`` tool is made over the final tool set, and the ``Agent`` gets
its manager and composed skill set in its constructor.

What a session needs to be rebuilt later is saved with it: the model spec, base URL,
roots and flags in its metadata, and its **launch record** (``agent/store/launch.py``: the
effective settings, the whole gate, the tools it held, its type and depth), which
:func:`skilldeck.agent.store.resume.build_agent_for_session` restores — reading no config
file — when ``skilldeck resume`` continues a run started elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from skilldeck.agent.assembly import (
    AgentParts,
    agent_instructions,
    make_agent_model,
    normalise_spec,
    pick_model,
    resolve_definition,
    retry_events,
    session_metadata,
    with_window,
)
from skilldeck.agent.context import ContextManager
from skilldeck.agent.events import Event
from skilldeck.agent.loop import Agent
from skilldeck.agent.permissions.gate import Approver, ToolGate
from skilldeck.agent.recorder import Limits
from skilldeck.agent.spec import (
    AgentSpec,
    PermissionOptions,
    Runtime,
    Scan,
    SkillPreload,
    names_of,
)
from skilldeck.agent.startup import (
    BODY_CAP,
    RANK_K,
    hinter,
    memory_folder,
    preloader,
    prompt_builder,
    skill_body_message,
    skills_block,
)
from skilldeck.agent.store import (
    SessionStore,
)
from skilldeck.agent.subagents import AgentDefinition, SubagentManager, discover_agents
from skilldeck.agent.toolset import ManagerFactory, Toolset, assemble_tools
from skilldeck.config import Settings
from skilldeck.errors import ConfigError
from skilldeck.llm.client import ModelLLMClient
from skilldeck.llm.messages import Model
from skilldeck.llm.profile import Profile, ToolView, resolve_profile
from skilldeck.skills.discovery.roots import RootPaths, root_paths
from skilldeck.skills.registry import SkillRegistry
from skilldeck.tools.base import Tool, ToolRegistry, ToolServices
from skilldeck.tools.compact import compact_spec

#: kept for callers of the old path (now in ``agent/startup.py``)
_REEXPORTED = (BODY_CAP, RANK_K, memory_folder, skill_body_message, skills_block)

__all__ = [
    "BODY_CAP",
    "RANK_K",
    "AgentSpec",
    "Runtime",
    "SkillPreload",
    "build",
    "build_agent",
    "memory_folder",
    "skill_body_message",
    "skills_block",
]


def build(spec: AgentSpec, runtime: Runtime) -> Agent:
    """A complete :class:`Agent` for ``spec`` in ``runtime`` (the
    :class:`~skilldeck.agent.spec.AgentFactory` sub-agents are given). Raises
    SkillNotFoundError, PolicyError (invalid skill set) or ConfigError (a ``cwd`` that is
    not a folder, among others)."""
    _check_cwd(spec.cwd)
    definition = resolve_definition(runtime.settings, spec.definition)
    model = pick_model(runtime.settings, definition, spec.model)
    model_spec = normalise_spec(model) if isinstance(model, str) else model.name
    # the settings the agent (its tools, children, launch record) sees name the model
    # it really uses: ``Settings.model`` is never a stale default beside ``--model``
    settings = runtime.settings.model_copy(update={"model": model_spec})
    on_retry = retry_events(runtime.on_event)
    llm = make_agent_model(model, model_spec, settings, spec.base_url, on_retry)
    profile = resolve_profile(settings, llm)
    settings = with_window(settings, model_spec, profile)
    runtime = replace(runtime, settings=settings)
    if profile.compact and not isinstance(llm, ToolView):  # tools/compact.py's tools
        llm = ToolView(llm, compact_spec)
    registry = runtime.registry or SkillRegistry.discover(
        settings, roots=runtime.scan.roots, no_defaults=runtime.scan.no_defaults
    )
    store = runtime.store or SessionStore.open(settings)
    try:
        toolset = assemble_tools(
            settings,
            registry,
            tools=spec.tools,
            definition=definition,
            skills=list(dict.fromkeys([*(definition.skills if definition else []), *spec.skills])),
            gate=spec.gate,
            permissions=spec.permissions,
            manager_factory=_manager_factory(spec, runtime, registry, (llm, model_spec), store),
            only_tools=spec.only_tools,
            bound=spec.bound_tools,
        )
        return _agent(
            spec, runtime, definition, toolset, (llm, model_spec), registry, store, profile
        )
    except BaseException:
        if runtime.store is None:
            store.close()
        raise


def _check_cwd(cwd: Path | None) -> None:
    """Every tool call of an agent works in its ``cwd``: a missing folder, or a file,
    is refused when the agent is built rather than at each call."""
    if cwd is None:
        return
    folder = Path(cwd)
    if folder.is_dir():
        return
    what = "is a file, not a folder" if folder.exists() else "does not exist"
    raise ConfigError(
        f"The agent's cwd {folder} {what}: pass an existing folder as cwd= "
        "(None: the settings' workspace).",
        path=folder,
    )


def _agent(
    spec: AgentSpec,
    runtime: Runtime,
    definition: AgentDefinition | None,
    toolset: Toolset,
    model: tuple[Model, str],
    registry: SkillRegistry,
    store: SessionStore,
    profile: Profile,
) -> Agent:
    """The one constructor call, with everything decided."""
    settings, (llm, model_spec) = runtime.settings, model
    workdir = (spec.cwd or settings.workspace).resolve()
    turns = spec.max_turns
    if turns is None and definition is not None:
        turns = definition.max_turns
    limits = Limits.from_settings(settings, max_turns=turns)
    name = spec.name or (definition.name if definition else "main")
    can_load = "Skill" in toolset.tools
    parts = AgentParts(
        model=llm,
        tools=toolset.tools,
        settings=settings,
        store=store,
        system_prompt=_system_prompt(
            settings,
            registry,
            toolset,
            agent_instructions(
                spec.instructions, definition, toolset.composed, compact=profile.compact
            ),
            cwd=workdir,
            model_spec=model_spec,
            max_turns=limits.max_turns,
            name=name,
            compact=profile.compact,
        ),
        cwd=workdir,
        name=name,
        limits=limits,
        gate=toolset.gate,
        approver=runtime.approver,
        hinter=hinter(settings, registry, enabled=spec.hints) if can_load else None,
        context=ContextManager.for_model(model_spec, settings),
        skills=registry,
        services=ToolServices(llm=ModelLLMClient(llm)).overlay(runtime.services),
        metadata=session_metadata(spec, runtime, definition, toolset, model_spec, limits),
        model_spec=model_spec,
        stream_text=spec.stream_text,
        on_event=runtime.on_event,
        startup=preloader(toolset.composed, spec.preload, settings=settings),
        owns_store=runtime.store is None,
        initial_state=dict(spec.initial_state or {}),
        parent_session=spec.parent_session,
        subagents=toolset.manager if isinstance(toolset.manager, SubagentManager) else None,
        composed=toolset.composed,
    )
    return Agent(parts)


def _system_prompt(
    settings: Settings,
    registry: SkillRegistry,
    toolset: Toolset,
    instructions: str,
    *,
    cwd: Path,
    model_spec: str,
    max_turns: int,
    name: str,
    compact: bool,
) -> Callable[[str], str]:
    """The system prompt, made per session (``agent/startup.py``) around the agent's
    instructions (``agent/assembly/instructions.py``); the skills catalog only when
    the agent holds the ``Skill`` tool."""
    return prompt_builder(
        settings,
        registry,
        cwd=cwd,
        model=model_spec,
        tool_names=toolset.tools.names(),
        max_turns=max_turns,
        instructions=instructions,
        agent=name,
        list_skills="Skill" in toolset.tools,
        compact=compact,
    )


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
    roots: RootPaths = (),
    no_defaults: bool = False,
    gate: ToolGate | None = None,
    tools: Sequence[Tool] | None = None,
    instructions: str | None = None,
    agent_name: str | None = None,
    base_url: str | None = None,
    hints: bool | None = None,
    services: ToolServices | Mapping[str, Any] | None = None,
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
    preload: SkillPreload | None = None,
) -> Agent:
    """A ready :class:`Agent`: :func:`build` with the spec and runtime these keywords
    describe. ``json_events`` turns off text deltas (whole texts only).

    ``agent`` names an agent definition (AGENT.md or a built-in type) whose
    instructions, model, tools, preloaded skills, permission mode and turn limit the
    agent takes (explicit arguments win). ``skills`` are validated and composed: the
    run gets exactly their composed tool set. ``permission_mode``/``allow``/``ask``/
    ``deny`` add to ``settings.permissions``; they build the gate unless ``gate`` is
    given. Raises SkillNotFoundError, PolicyError (invalid skill set) or ConfigError.

    ``only_tools`` caps the tool set by name and ``depth`` places the agent below the
    main one (what ``resume`` restores); ``launch_extra`` adds to the launch record a
    new session stores (a sub-agent's type, depth and roots). ``preload`` says how the
    composed skills are preloaded into each new session (default: all of them, no
    arguments, notices as warnings), through the one load operation.
    """
    spec = AgentSpec(
        model=model,
        base_url=base_url,
        definition=agent,
        skills=names_of(skills, "skills"),
        preload=preload or SkillPreload(),
        name=agent_name,
        instructions=instructions,
        max_turns=max_turns,
        permissions=PermissionOptions(
            permission_mode, names_of(allow, "allow"), names_of(ask, "ask"), names_of(deny, "deny")
        ),
        gate=gate,
        tools=None if tools is None else tuple(tools),
        only_tools=None if only_tools is None else names_of(only_tools, "only_tools"),
        depth=depth,
        parent_session=parent_session,
        hints=hints,
        stream_text=not json_events,
        cwd=None if cwd is None else Path(cwd),
        initial_state=initial_state,
        launch_extra=launch_extra,
    )
    runtime = Runtime(
        settings=settings,
        registry=registry,
        store=session_store,
        approver=approver,
        on_event=on_event,
        services=ToolServices.of(services),
        scan=Scan(root_paths(roots), no_defaults),
    )
    return build(spec, runtime)


def _manager_factory(
    spec: AgentSpec,
    runtime: Runtime,
    registry: SkillRegistry,
    model: tuple[Model, str],
    store: SessionStore,
) -> ManagerFactory:
    """Makes the agent's SubagentManager once its final tools and gate exist. Children
    use the parent's model object unless they name another, the parent's store (a
    background child opens its own) and :func:`build` as their factory."""
    settings, (llm, model_spec) = runtime.settings, model

    def model_for(name: str | None) -> Model:
        if not name or name == model_spec:
            return llm
        return make_agent_model(name, normalise_spec(name), settings, None, None)

    def make(tools: ToolRegistry, gate: ToolGate) -> SubagentManager:
        return SubagentManager(
            settings=settings,
            parent_tools=tools,
            catalog=discover_agents(settings),
            registry=registry,
            model_factory=model_for,
            parent_gate=gate,
            approver=runtime.approver,
            depth=spec.depth,
            store=store,
            scan=runtime.scan.to_dict(),
            agent_factory=build,
        )

    return make
