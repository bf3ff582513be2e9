"""Old path of the fast path's settings: now :mod:`skilldeck.settings.view`.

:func:`load_light_settings` reads the layers once and builds the pydantic-free view
from them (None when the full settings are needed: build them with
:func:`skilldeck.settings.load.settings_from_layers` from the same layers, as
``cli/skills/fast/fastpath.py`` does, rather than reading the files again).
"""

from __future__ import annotations

import os

from skilldeck.settings.layers import read_layers
from skilldeck.settings.paths import HomePaths
from skilldeck.settings.view import ENV_FIELDS, SettingsView, SkillsView, view_from_layers
from skilldeck.trust import CONFIG_FILENAME, WORKSPACE_DIRNAME

__all__ = [
    "CONFIG_FILENAME",
    "ENV_FIELDS",
    "WORKSPACE_DIRNAME",
    "HomePaths",
    "LightSettings",
    "LightSkillSettings",
    "load_light_settings",
]

#: old names of the view's classes
LightSettings = SettingsView
LightSkillSettings = SkillsView


def load_light_settings() -> SettingsView | None:
    """What ``load_settings()`` (no arguments) would give, as the light view, or
    None when that needs the full validation."""
    return view_from_layers(read_layers(), os.environ)
