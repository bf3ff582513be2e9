"""Settings: TOML files, then environment, then explicit arguments.

Precedence, lowest to highest:

1. built-in defaults (below)
2. user config ``$SKILLDECK_HOME/config.toml`` (``SKILLDECK_HOME`` defaults to
   ``~/.skilldeck``)
3. workspace config ``./.skilldeck/config.toml`` — a project overrides the user, but
   only in a folder you trust: an untrusted (or since changed) workspace file is
   ignored as a whole, with one warning (see :mod:`skilldeck.trust`)
4. environment: ``SKILLDECK_<SECTION>__<KEY>`` (e.g. ``SKILLDECK_SKILLS__PROMPT_BUDGET``),
   plus ``SKILLDECK_MODEL`` for the default model
5. keyword arguments to :func:`load_settings` (what CLI flags become)

Tables merge deeply, so a workspace file that sets one key keeps the user's others.
Writes (``skills enable/disable``) go through :func:`update_config_file`, which
writes atomically so a crash never leaves a half-written config.
"""

from __future__ import annotations

import difflib
import os
import tomllib
import typing
import warnings
from pathlib import Path
from typing import Any, Literal

import tomli_w
from pydantic import BaseModel, Field, PrivateAttr, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from skilldeck._atomic import atomic_write_text
from skilldeck._fastconfig import CONFIG_FILENAME as CONFIG_FILENAME  # re-exported
from skilldeck._fastconfig import WORKSPACE_DIRNAME as WORKSPACE_DIRNAME  # re-exported
from skilldeck._fastconfig import HomePaths
from skilldeck.errors import ConfigError, ConfigWarning
from skilldeck.trust import Assessment, assess_workspace, warn_if_ignored


def skilldeck_home() -> Path:
    """``$SKILLDECK_HOME`` or ``~/.skilldeck``: user skills, config, cache, sessions."""
    env = os.environ.get("SKILLDECK_HOME")
    return Path(env).expanduser() if env else Path.home() / ".skilldeck"


class HintSettings(BaseModel):
    enabled: bool = True
    k: int = 3
    threshold: float = 0.35


class SkillSettings(BaseModel):
    #: extra skill directories, searched after the user root, in listed order
    dirs: list[Path] = Field(default_factory=list)
    disabled: list[str] = Field(default_factory=list)
    #: per-skill settings, e.g. ``[skills.settings.my-skill] env = ["GITHUB_TOKEN"]``
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict)
    prompt_budget: int = 8000
    strict: bool = False
    #: processes a cold discovery of a large tree may parse with (0: one per
    #: available CPU; 1: never fork). See ``skills/_parallel.py``.
    discovery_workers: int = Field(default=0, ge=0)
    script_timeout: float = 30.0
    output_cap: int = 1024 * 1024
    #: "off" refuses code skills; "sandboxed": untrusted ones run out of process in the
    #: sandbox ("audit", "on": old names for it). Trust is by content hash
    #: (`skilldeck skills trust NAME`), never by name: see skills/codetrust.py
    code_skills: Literal["sandboxed", "audit", "on", "off"] = "sandboxed"
    #: obsolete (trust by name); kept so old configs load, it grants nothing
    trusted: list[str] = Field(default_factory=list)
    dynamic_context: bool = True
    #: what composition does when one skill allows a tool another forbids
    conflicts: Literal["resolve", "reject"] = "resolve"
    coding_pipeline: list[str] = Field(
        default_factory=lambda: ["specification-engine", "opencode-implementer"]
    )
    hints: HintSettings = Field(default_factory=HintSettings)
    #: fuse sentence embeddings into skill routing (needs ``skilldeck[embeddings]``)
    match_embeddings: bool = False


class ModelSettings(BaseModel):
    default: str | None = None
    base_url: str | None = None
    #: context window per model name (``provider:model`` or bare model) in tokens
    context_windows: dict[str, int] = Field(default_factory=dict)
    max_retries: int = 3
    request_timeout: float = 120.0
    #: cap on tokens per model answer; None = provider default (Anthropic requires one: 8192)
    max_output_tokens: int | None = None


class AgentSettings(BaseModel):
    max_turns: int = 25
    context_fraction: float = 0.7
    tool_output_limit: int = 30_000
    max_depth: int = Field(default=1, ge=0, le=3)
    max_concurrent_subagents: int = 4
    max_tool_calls: int | None = None
    max_tokens: int | None = None
    max_wall_seconds: float | None = None


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
    #: the workspace's trust as :func:`load_settings` found it (None: not yet asked)
    _trust: Assessment | None = PrivateAttr(default=None)

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
    def workspace_trust(self) -> Assessment:
        """Whether this workspace's own config and skills count (asked of the trust
        store on first use when these settings were not built by load_settings)."""
        if self._trust is None:
            self._trust = assess_workspace(self.workspace, self.home)
        return self._trust

    @property
    def workspace_trusted(self) -> bool:
        return self.workspace_trust.trusted

    def config_tables(self) -> list[dict[str, Any]]:
        """The config files in effect, lowest precedence first: the user's, then the
        workspace's when it is trusted — parsed from the bytes the trust decision
        hashed, never read again (code that merges lists per file reads these)."""
        tables = [read_toml(self.user_config_path)]
        trust = self.workspace_trust
        if trust.trusted and trust.config is not None:
            tables.append(parse_toml(trust.config, self.workspace_config_path))
        return tables


def read_toml(path: Path) -> dict[str, Any]:
    """Read one TOML file; a missing file is empty, a broken one is a ConfigError."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(
            f"{path}: invalid TOML ({e}). Fix the file or move it aside.", path=path
        ) from e
    except OSError as e:
        raise ConfigError(f"{path}: cannot read config ({e.strerror}).", path=path) from e


def parse_toml(data: bytes, path: Path) -> dict[str, Any]:
    """``data`` (the content of ``path``) as a table; broken TOML is a ConfigError."""
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(
            f"{path}: invalid TOML ({e}). Fix the file or move it aside.", path=path
        ) from e


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_settings(
    *,
    workspace: Path | None = None,
    home: Path | None = None,
    trust: bool | None = None,
    **overrides: Any,
) -> Settings:
    """Build Settings from files, environment and ``overrides`` (highest).

    The workspace's own config (and, in discovery, its skill roots) count only when
    the workspace is trusted: ``trust=True``/``False`` decides for this call; None
    asks ``$SKILLDECK_TRUST_WORKSPACE`` and then the trust store (see
    :mod:`skilldeck.trust`). Ignored workspace files are reported as one ConfigWarning.
    """
    home = (home or skilldeck_home()).expanduser()
    workspace = (workspace or Path.cwd()).resolve()
    user_file, workspace_file = (
        home / CONFIG_FILENAME,
        workspace / WORKSPACE_DIRNAME / CONFIG_FILENAME,
    )
    assessment = assess_workspace(workspace, home, trust=trust)
    trusted_config = assessment.config if assessment.trusted else None
    env = _env_overrides()
    # lowest precedence first; each layer's name says where to fix a bad value
    layers = [
        (str(user_file), read_toml(user_file)),
        (
            str(workspace_file),
            {} if trusted_config is None else parse_toml(trusted_config, workspace_file),
        ),
        ("the environment", env),
        ("the arguments given", {k: v for k, v in overrides.items() if v is not None}),
    ]
    data: dict[str, Any] = {}
    for _where, layer in layers:
        data = deep_merge(data, layer)
    data["home"] = home
    data["workspace"] = workspace
    try:
        settings = Settings.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        where = _origin(first["loc"], layers)
        if where == "the environment":
            where = _env_name(first["loc"], env)
        fix = f"Fix it in {where}" if where else f"Check {user_file} and {workspace_file}"
        raise ConfigError(f"Invalid setting {loc!r}: {first['msg']}. {fix}.") from e
    settings._trust = assessment
    warn_if_ignored(assessment, home)
    for where, layer in layers:
        for message in ignored_settings(layer, where):
            warnings.warn(message, ConfigWarning, stacklevel=2)
    return settings


def ignored_settings(layer: dict[str, Any], where: str) -> list[str]:
    """One message per key of ``layer`` (one config file, the environment or the
    arguments, named by ``where``) that no setting reads: an unknown key anywhere in
    the tree (tables that hold free-form names, like ``skills.settings``, excepted),
    with the closest known key when there is one."""

    def place(loc: tuple[str, ...]) -> str:  # a file, or the variable that set it
        return _env_name(loc, layer) if where == "the environment" else where

    messages = [
        f"{place((key,))}: `{key}` cannot be set here ({how} sets it)"
        for key, how in (("home", "SKILLDECK_HOME"), ("workspace", "the current directory"))
        if key in layer
    ]
    for loc, hint in _unknown_keys(layer, Settings):
        key = ".".join(loc)
        guess = f" (did you mean `{'.'.join((*loc[:-1], hint))}`?)" if hint else ""
        messages.append(f"{place(loc)}: unknown setting `{key}` is ignored{guess}")
    return messages


def _unknown_keys(
    data: dict[str, Any], model: type[BaseModel]
) -> list[tuple[tuple[str, ...], str | None]]:
    """Where in ``data`` (key paths) ``model`` has no field, each with the closest
    field name at that level (or None). Sections are searched; tables of free-form
    names (like ``skills.settings``) only where their entries are sections themselves."""
    fields = model.model_fields
    found: list[tuple[tuple[str, ...], str | None]] = []

    def below(prefix: tuple[str, ...], value: dict[str, Any], inner: type[BaseModel]) -> None:
        found.extend(((*prefix, *loc), hint) for loc, hint in _unknown_keys(value, inner))

    for key, value in data.items():
        name = str(key)
        if name not in fields:
            close = difflib.get_close_matches(name.replace("-", "_"), list(fields), n=1)
            found.append(((name,), close[0] if close else None))
        elif isinstance(value, dict):
            section, entries = _sections_of(fields[name].annotation)
            if section is not None:
                below((name,), value, section)
            elif entries is not None:
                for entry, entry_value in value.items():
                    if isinstance(entry_value, dict):
                        below((name, str(entry)), entry_value, entries)
    return found


def _sections_of(annotation: Any) -> tuple[type[BaseModel] | None, type[BaseModel] | None]:
    """``(X, None)`` for a field that is a section ``X``; ``(None, X)`` for a
    ``dict[str, X]`` whose entries are sections ``X``; else ``(None, None)``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, None
    if typing.get_origin(annotation) is dict:
        value = typing.get_args(annotation)[-1]
        if isinstance(value, type) and issubclass(value, BaseModel):
            return None, value
    return None, None


def _origin(loc: tuple[int | str, ...], layers: list[tuple[str, dict[str, Any]]]) -> str | None:
    """Which layer set the value at ``loc`` (the highest that has it), if any did."""
    return next((name for name, layer in reversed(layers) if _holds(layer, loc)), None)


def _holds(node: Any, loc: tuple[int | str, ...]) -> bool:
    for part in loc:
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if not (in_dict or in_list):
            return False
        node = node[part]
    return True


def _env_name(loc: tuple[int | str, ...], env: dict[str, Any]) -> str:
    """The ``SKILLDECK_A__B`` variable that set the value at ``loc`` (a variable sets
    a whole value: a bad list item names the variable of the list)."""
    parts: list[str] = []
    node: Any = env
    for part in loc:
        parts.append(str(part).upper())
        node = node[part]
        if not isinstance(node, dict):
            break
    return "SKILLDECK_" + "__".join(parts)


def _env_overrides() -> dict[str, Any]:
    """``SKILLDECK_A__B=v`` → ``{"a": {"b": v}}``; values parsed as TOML when they can be."""
    out: dict[str, Any] = {}
    if model := os.environ.get("SKILLDECK_MODEL"):
        out["model"] = model
    for key, raw in os.environ.items():
        if not key.startswith("SKILLDECK_") or "__" not in key:
            continue
        parts = key[len("SKILLDECK_") :].lower().split("__")
        node = out
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = _parse_env_value(raw)
    return out


def _parse_env_value(raw: str) -> Any:
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def update_config_file(path: Path, updates: dict[str, Any]) -> None:
    """Deep-merge ``updates`` into the TOML file at ``path``, atomically."""
    current = read_toml(path)
    merged = deep_merge(current, updates)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, tomli_w.dumps(_jsonable(merged)))


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value
