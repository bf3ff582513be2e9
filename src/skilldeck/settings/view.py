"""The light settings view for the CLI's fast path: the same layers, no pydantic.

Speed trick, fenced here (benchmark: ``tests/e2e/test_skills_list_fastpath.py``,
which also checks that pydantic is never imported). Building the pydantic
:class:`~skilldeck.settings.model.Settings` imports pydantic and pydantic-settings,
about 150 ms — several times what a warm ``skilldeck skills list --json`` needs for
everything else. Nearly always the configuration is empty or sets a few ``[skills]``
keys, so :func:`view_from_layers` takes the layers :func:`read_layers` read — the
very tables the full settings are built from, merged by the one
:func:`~skilldeck.settings.precedence.merged` — and, when they hold only values it
can check exactly, returns a :class:`SettingsView` with the values the full
settings would have.

Anything else — another section, a value of another type, a ``SKILLDECK_*``
variable that sets a setting, a file that does not parse — returns None, and the
caller builds the full settings from the same layers (no second read), which
validates everything and reports problems as it always does. An attribute the view
does not carry is answered by full settings built from the same layers on first use.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck._trust_text import warn_if_ignored
from skilldeck.settings.layers import Layers
from skilldeck.settings.paths import HomePaths
from skilldeck.settings.precedence import merged

if TYPE_CHECKING:
    from skilldeck.settings.model import Settings

__all__ = ["ENV_FIELDS", "SettingsView", "SkillsView", "view_from_layers"]

#: Settings fields besides home/workspace (a test keeps this in step with the model)
ENV_FIELDS = frozenset({"model", "skills", "models", "agent", "permissions", "sandbox", "mcp"})
#: ``[skills]`` keys checked here, with their exact TOML types (bool is not an int)
_SKILL_KEYS: dict[str, type] = {
    "dirs": list,
    "disabled": list,
    "strict": bool,
    "prompt_budget": int,
    "discovery_workers": int,
    "match_embeddings": bool,
}


class SkillsView:
    """The ``[skills]`` values discovery, the skill listing and `skills match` read."""

    __slots__ = (
        "_owner",
        "dirs",
        "disabled",
        "discovery_workers",
        "match_embeddings",
        "prompt_budget",
        "strict",
    )

    def __init__(self, owner: SettingsView, data: dict[str, Any]) -> None:
        self._owner = owner
        self.dirs: list[Path] = [Path(d) for d in data.get("dirs", [])]
        self.disabled: list[str] = list(data.get("disabled", []))
        self.strict: bool = data.get("strict", False)
        self.prompt_budget: int = data.get("prompt_budget", 8000)
        self.discovery_workers: int = data.get("discovery_workers", 0)
        self.match_embeddings: bool = data.get("match_embeddings", True)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._owner.full().skills, name)


class SettingsView(HomePaths):
    """``home``, ``workspace``, ``model`` and ``skills`` (see above) as plain
    attributes, the derived paths as properties, anything else from full Settings
    built from the same :class:`Layers`."""

    def __init__(self, layers: Layers, data: dict[str, Any]) -> None:
        self.layers = layers
        self.home = layers.home
        self.workspace = layers.workspace
        self.workspace_trust = layers.trust
        self.workspace_trusted = layers.trust.trusted
        self.model: str | None = data.get("model")
        self.skills = SkillsView(self, data.get("skills", {}))
        self._full: Settings | None = None

    def full(self) -> Settings:
        """The complete Settings for these layers (built once, on first need)."""
        if self._full is None:
            from skilldeck.settings.load import settings_from_layers  # lazy: pydantic, on need

            self._full = settings_from_layers(self.layers)
        return self._full

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_full":
            raise AttributeError(name)
        return getattr(self.full(), name)


def view_from_layers(layers: Layers, environ: Mapping[str, str]) -> SettingsView | None:
    """What the full settings would hold for ``layers``, or None when that needs
    the full validation (see the module docs). Warns, as the full path does, when
    the workspace's files are ignored."""
    for key in environ:
        upper = key.upper()
        if upper.startswith("SKILLDECK_") and _overrides_a_setting(upper[len("SKILLDECK_") :]):
            return None
    if layers.first_error() is not None or layers.get("arguments").data:
        return None
    data = merged(layers)
    if not _plain(data):
        return None
    warn_if_ignored(layers.trust, layers.home)
    return SettingsView(layers, data)


def _overrides_a_setting(name: str) -> bool:
    """Whether ``SKILLDECK_<name>`` feeds Settings: a nested ``A__B`` override, or a
    field that pydantic-settings reads from the environment (``home`` and
    ``workspace`` are always passed explicitly, so their variables never win)."""
    return "__" in name or name.lower() in ENV_FIELDS


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
    budget: int = skills.get("prompt_budget", 0)
    return workers >= 0 and budget >= 0  # (model.py: ge=0, both)
