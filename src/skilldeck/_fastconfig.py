"""Settings for the CLI's fast path, without importing pydantic.

Building :class:`~skilldeck.config.Settings` means importing pydantic and
pydantic-settings, about 150 ms — several times what a warm ``skilldeck skills
list --json`` needs for everything else. Nearly always the configuration is
empty or sets a few ``[skills]`` keys, so :func:`load_light_settings` reads the
same files in the same order (user, then workspace — only when the workspace is
trusted, decided by the same :func:`skilldeck.trust.assess_workspace` and warned
about in the same words; see :mod:`skilldeck.config`) and, when they hold only what
it can check exactly, returns a :class:`LightSettings` with the same values
``load_settings()`` would give.

Anything else — another section, a value of another type, a ``SKILLDECK_*``
variable that sets a setting, a file that does not parse — returns None,
and the caller takes the full :func:`~skilldeck.config.load_settings` path, which
validates everything and reports problems as it always does. An attribute the
light object does not carry is answered by a full Settings built on first use, so
code handed a LightSettings never sees a difference.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.trust import CONFIG_FILENAME as CONFIG_FILENAME  # re-exported
from skilldeck.trust import WORKSPACE_DIRNAME as WORKSPACE_DIRNAME  # re-exported
from skilldeck.trust import Assessment, assess_workspace, warn_if_ignored

if TYPE_CHECKING:
    from skilldeck.config import Settings

__all__ = ["LightSettings", "LightSkillSettings", "load_light_settings"]

#: Settings fields besides home/workspace (a test keeps this in step with config.py)
ENV_FIELDS = frozenset({"model", "skills", "models", "agent", "permissions", "sandbox", "mcp"})
#: ``[skills]`` keys checked here, with their exact TOML types (bool is not an int)
_SKILL_KEYS: dict[str, type] = {
    "dirs": list,
    "disabled": list,
    "strict": bool,
    "prompt_budget": int,
    "discovery_workers": int,
}


class HomePaths:
    """Paths derived from ``home`` and ``workspace``, shared by the full Settings and
    the light ones (kept free of pydantic so the fast path stays fast)."""

    home: Path
    workspace: Path

    @property
    def user_config_path(self) -> Path:
        return self.home / CONFIG_FILENAME

    @property
    def workspace_config_path(self) -> Path:
        return self.workspace / WORKSPACE_DIRNAME / CONFIG_FILENAME

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    @property
    def sessions_db(self) -> Path:
        return self.home / "sessions.db"


class LightSkillSettings:
    """The ``[skills]`` values discovery and the skill listing read."""

    __slots__ = ("_owner", "dirs", "disabled", "discovery_workers", "prompt_budget", "strict")

    def __init__(self, owner: LightSettings, data: dict[str, Any]) -> None:
        self._owner = owner
        self.dirs: list[Path] = [Path(d) for d in data.get("dirs", [])]
        self.disabled: list[str] = list(data.get("disabled", []))
        self.strict: bool = data.get("strict", False)
        self.prompt_budget: int = data.get("prompt_budget", 8000)
        self.discovery_workers: int = data.get("discovery_workers", 0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._owner.full().skills, name)


class LightSettings(HomePaths):
    """``home``, ``workspace``, ``model`` and ``skills`` (see above) as plain
    attributes, the derived paths as properties, anything else from a full Settings."""

    def __init__(
        self, *, home: Path, workspace: Path, data: dict[str, Any], trust: Assessment
    ) -> None:
        self.home = home
        self.workspace = workspace
        self.workspace_trust = trust
        self.workspace_trusted = trust.trusted
        self.model: str | None = data.get("model")
        self.skills = LightSkillSettings(self, data.get("skills", {}))
        self._full: Settings | None = None

    def full(self) -> Settings:
        """The complete Settings for these files (built once, on first need)."""
        if self._full is None:
            from skilldeck.config import load_settings

            # the same trust decision, not a second look at a file that may change
            trusted = self.workspace_trusted
            self._full = load_settings(home=self.home, workspace=self.workspace, trust=trusted)
        return self._full

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_full":
            raise AttributeError(name)
        return getattr(self.full(), name)


def load_light_settings() -> LightSettings | None:
    """What ``load_settings()`` (no arguments) would give, or None when that needs
    the full validation (see the module docs)."""
    for key in os.environ:
        upper = key.upper()
        if upper.startswith("SKILLDECK_") and _overrides_a_setting(upper[len("SKILLDECK_") :]):
            return None
    env = os.environ.get("SKILLDECK_HOME")
    home = (Path(env).expanduser() if env else Path.home() / ".skilldeck").expanduser()
    workspace = Path.cwd().resolve()
    trust = assess_workspace(workspace, home)
    user = _read(home / CONFIG_FILENAME)
    own = _parse(trust.config) if trust.trusted and trust.config is not None else {}
    if user is None or own is None:
        return None
    data = _merge(user, own)
    if not _plain(data):
        return None
    warn_if_ignored(trust, home)
    return LightSettings(home=home, workspace=workspace, data=data, trust=trust)


def _overrides_a_setting(name: str) -> bool:
    """Whether ``SKILLDECK_<name>`` feeds Settings: a nested ``A__B`` override, or a
    field that pydantic-settings reads from the environment (``home`` and
    ``workspace`` are always passed explicitly, so their variables never win)."""
    return "__" in name or name.lower() in ENV_FIELDS


def _read(path: Path) -> dict[str, Any] | None:
    """A config file's table, ``{}`` when there is none, None when it cannot be
    read or parsed (the full path then says why)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return {}
    except OSError:
        return None
    return _parse(raw)


def _parse(raw: bytes) -> dict[str, Any] | None:
    """A config's bytes as a table; None when they do not parse."""
    import tomllib

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """:func:`skilldeck.config.deep_merge`: tables merge, everything else replaces."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _plain(data: dict[str, Any]) -> bool:
    """Whether ``data`` only holds values checked exactly here."""
    if not set(data) <= {"skills", "model"}:
        return False
    if "model" in data and type(data["model"]) is not str:
        return False
    skills = data.get("skills", {})
    if type(skills) is not dict:
        return False
    for key, value in skills.items():
        if key not in _SKILL_KEYS or type(value) is not _SKILL_KEYS[key]:
            return False
        if type(value) is list and not all(type(v) is str for v in value):
            return False
    workers: int = skills.get("discovery_workers", 0)
    return workers >= 0  # (config.py: ge=0)
