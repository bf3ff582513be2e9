"""The settings as a validated pydantic model: sections, fields, defaults.

Built by :func:`skilldeck.settings.load.load_settings` from the layers of
:mod:`skilldeck.settings.layers` (see :mod:`skilldeck.settings.precedence` for who
wins). A ``Settings(...)`` made directly (tests, library callers) holds what it was
given; the files' tables, which a few rules combine per file, are then read once, on
first need, for its ``home`` and ``workspace``.

Importing this module imports pydantic (about 150 ms): the CLI's fast path uses the
light view (:mod:`skilldeck.settings.view`) instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from skilldeck.settings.layers import Layers, read_layers, skilldeck_home
from skilldeck.settings.paths import HomePaths
from skilldeck.trust import Assessment

__all__ = [
    "AgentSettings",
    "HintSettings",
    "MCPServerConfig",
    "MCPSettings",
    "ModelOptions",
    "ModelSettings",
    "PermissionSettings",
    "SandboxSettings",
    "Settings",
    "SkillSettings",
]


class HintSettings(BaseModel):
    enabled: bool = True
    #: 0 names no skill (as ``enabled = false``); a threshold above 1 is never reached
    k: int = Field(default=3, ge=0)
    threshold: float = Field(default=0.35, ge=0)


class SkillSettings(BaseModel):
    #: extra skill directories, searched after the user root, in listed order
    dirs: list[Path] = Field(default_factory=list)
    disabled: list[str] = Field(default_factory=list)
    #: per-skill settings, e.g. ``[skills.settings.my-skill] env = ["GITHUB_TOKEN"]``
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict)
    prompt_budget: int = Field(default=8000, ge=0)
    strict: bool = False
    #: processes a cold discovery of a large tree may parse with (0: one per
    #: available CPU; 1: never fork). See ``skills/discovery/_parallel.py``.
    discovery_workers: int = Field(default=0, ge=0)
    script_timeout: float = Field(default=30.0, gt=0)
    output_cap: int = Field(default=1024 * 1024, gt=0)
    #: "off" refuses code skills; "sandboxed": untrusted ones run out of process in the
    #: sandbox ("audit", "on": old names for it). Trust is by content hash
    #: (`skilldeck skills trust NAME`), never by name: see skills/code/codetrust.py
    code_skills: Literal["sandboxed", "audit", "on", "off"] = "sandboxed"
    #: where `skills install owner/repo` points (tests: a local file:// folder)
    github_url: str = "https://github.com"
    #: obsolete (trust by name); kept so old configs load, it grants nothing
    trusted: list[str] = Field(default_factory=list)
    dynamic_context: bool = True
    #: what composition does when one skill allows a tool another forbids
    conflicts: Literal["resolve", "reject"] = "resolve"
    #: the tools of a ``--skill`` / ``Task(skills=…)`` skill that declares no
    #: ``allowed-tools``: "parent" (the run's tools minus anything forbidden) or "none"
    undeclared_tools: Literal["none", "parent"] = "parent"
    hints: HintSettings = Field(default_factory=HintSettings)
    #: fuse static embeddings (wordllama, CPU, offline) into skill routing: on by
    #: default since it improved both held-out splits (docs/routing.md); false keeps
    #: routing lexical
    match_embeddings: bool = True


class ModelOptions(BaseModel):
    """Per-model settings: ``[models.options."openai-compat:qwen"]`` (a full spec, a
    bare model name, a provider such as ``ollama``, or ``*``; the most specific wins
    field by field). Sampling values are sent only when set (``llm/profile.py``)."""

    temperature: float | None = Field(default=None, ge=0)
    seed: int | None = None
    top_p: float | None = Field(default=None, gt=0, le=1)
    #: seconds to wait for each read (None: ``request_timeout``, or
    #: ``local_request_timeout`` for a server on this machine)
    request_timeout: float | None = Field(default=None, gt=0)
    #: stream every call (a long prompt then never waits for a whole reply at once)
    stream: bool | None = None
    #: "compact": short tool descriptions, fewer instructions, a smaller ranked skills
    #: block; "auto": compact for local servers with a small context window
    profile: Literal["auto", "default", "compact"] | None = None
    #: the context window in tokens, when the server cannot tell
    context_window: int | None = Field(default=None, gt=0)


class ModelSettings(BaseModel):
    default: str | None = None
    base_url: str | None = None
    #: context window per model name (``provider:model`` or bare model) in tokens
    context_windows: dict[str, int] = Field(default_factory=dict)
    max_retries: int = 3
    request_timeout: float = Field(default=120.0, gt=0)
    #: the timeout for ``ollama:`` models and servers on localhost / 127.0.0.1
    local_request_timeout: float = Field(default=600.0, gt=0)
    #: per-model options (sampling, timeout, streaming, profile): see ModelOptions
    options: dict[str, ModelOptions] = Field(default_factory=dict)
    #: cap on tokens per model answer; None = provider default (Anthropic requires one: 8192)
    max_output_tokens: int | None = Field(default=None, gt=0)


class AgentSettings(BaseModel):
    max_turns: int = Field(default=25, ge=1)
    context_fraction: float = Field(default=0.7, gt=0, le=1)
    tool_output_limit: int = Field(default=30_000, gt=0)
    max_depth: int = Field(default=1, ge=0, le=3)
    max_concurrent_subagents: int = Field(default=4, ge=1)
    max_tool_calls: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, gt=0)
    max_wall_seconds: float | None = Field(default=None, gt=0)
    #: loop guard (``agent/loopguard.py``): a tool call repeated with the same
    #: arguments and the same result is flagged to the model from this count on…
    repeat_warn_after: int = Field(default=2, ge=2)
    #: …and ends the run as ``stuck`` (resumable) at this count
    repeat_stop_after: int = Field(default=4, ge=2)
    #: a reply whose text is only a tool call is taken as that call ("auto": for
    #: ``ollama:`` and ``openai-compat:`` models; ``llm/textcalls.py``)
    text_tool_calls: Literal["auto", "on", "off"] = "auto"


class PermissionSettings(BaseModel):
    mode: Literal["default", "acceptEdits", "plan", "bypassPermissions"] = "default"
    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)


class SandboxSettings(BaseModel):
    mode: Literal["auto", "required", "off"] = "auto"
    network: bool = False


class MCPServerConfig(BaseModel):
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None


class MCPSettings(BaseModel):
    servers: dict[str, MCPServerConfig] = Field(default_factory=dict)
    #: whether `skilldeck mcp serve` exposes run_skill_script
    allow_scripts: bool = False


class Settings(HomePaths, BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="SKILLDECK_", env_nested_delimiter="__", extra="ignore"
    )

    home: Path = Field(default_factory=skilldeck_home)
    workspace: Path = Field(default_factory=Path.cwd)
    model: str | None = None
    skills: SkillSettings = Field(default_factory=SkillSettings)
    models: ModelSettings = Field(default_factory=ModelSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    mcp: MCPSettings = Field(default_factory=MCPSettings)
    #: what :func:`load_settings` built these from (None: made directly, read on need)
    _layers: Layers | None = PrivateAttr(default=None)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings)

    def skill_settings(self, name: str) -> dict[str, Any]:
        return dict(self.skills.settings.get(name, {}))

    @property
    def layers(self) -> Layers:
        """The layers these settings came from; for settings made directly, the files
        of ``home`` and ``workspace`` read now (once) — the environment and arguments
        are then this object's own values, not re-read."""
        if self._layers is None:
            self._layers = read_layers(workspace=self.workspace, home=self.home)
        return self._layers

    @property
    def workspace_trust(self) -> Assessment:
        """Whether this workspace's own config and skills count (asked of the trust
        store on first use when these settings were not built by load_settings)."""
        return self.layers.trust

    @property
    def workspace_trusted(self) -> bool:
        return self.workspace_trust.trusted

    def config_tables(self) -> list[dict[str, Any]]:
        """The config files in effect, lowest precedence first: the user's, then the
        workspace's when it is trusted — as read when these settings were loaded
        (the workspace's parsed from the bytes the trust decision hashed)."""
        return [layer.data for layer in self.layers.files]
