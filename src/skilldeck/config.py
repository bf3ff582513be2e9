"""Settings under their documented path: ``from skilldeck.config import load_settings``.

The implementation is the :mod:`skilldeck.settings` package; this module re-exports
its names (and the section models) so existing imports keep working. Precedence,
lowest to highest: defaults, the user file ``$SKILLDECK_HOME/config.toml``, the
workspace file ``./.skilldeck/config.toml`` (only in a trusted folder, see
:mod:`skilldeck.trust`), the environment (``SKILLDECK_<SECTION>__<KEY>``,
``SKILLDECK_MODEL``), the arguments; the model's own order and the permission rules
that add up over files are in :mod:`skilldeck.settings.precedence`.
"""

from __future__ import annotations

from skilldeck.settings.checks import ignored_settings
from skilldeck.settings.layers import deep_merge, parse_toml, read_toml, skilldeck_home
from skilldeck.settings.load import load_settings, settings_from_layers
from skilldeck.settings.model import (
    AgentSettings,
    HintSettings,
    MCPServerConfig,
    MCPSettings,
    ModelSettings,
    PermissionSettings,
    SandboxSettings,
    Settings,
    SkillSettings,
)
from skilldeck.settings.paths import HomePaths
from skilldeck.settings.writes import update_config_file
from skilldeck.trust import CONFIG_FILENAME, WORKSPACE_DIRNAME

__all__ = [
    "CONFIG_FILENAME",
    "WORKSPACE_DIRNAME",
    "AgentSettings",
    "HintSettings",
    "HomePaths",
    "MCPServerConfig",
    "MCPSettings",
    "ModelSettings",
    "PermissionSettings",
    "SandboxSettings",
    "Settings",
    "SkillSettings",
    "deep_merge",
    "ignored_settings",
    "load_settings",
    "parse_toml",
    "read_toml",
    "settings_from_layers",
    "skilldeck_home",
    "update_config_file",
]
