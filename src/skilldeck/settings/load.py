"""Full, validated settings from the layers: :func:`load_settings` reads the layers
(each file once) and :func:`settings_from_layers` validates their merge — also what
the fast path's view falls back to, so no file is read a second time."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from skilldeck._trust_text import warn_if_ignored
from skilldeck.errors import ConfigError, ConfigWarning
from skilldeck.settings.checks import error_origin, ignored_settings
from skilldeck.settings.layers import Layers, read_layers
from skilldeck.settings.model import Settings
from skilldeck.settings.precedence import merged

__all__ = ["load_settings", "settings_from_layers"]


def load_settings(
    *,
    workspace: Path | None = None,
    home: Path | None = None,
    trust: bool | None = None,
    **overrides: Any,
) -> Settings:
    """Build Settings from files, environment and ``overrides`` (highest); the
    precedence is :mod:`skilldeck.settings.precedence`'s.

    The workspace's own config (and, in discovery, its skill roots) count only when
    the workspace is trusted: ``trust=True``/``False`` decides for this call; None
    asks ``$SKILLDECK_TRUST_WORKSPACE`` and then the trust store (see
    :mod:`skilldeck.trust`). Ignored workspace files are reported as one ConfigWarning.
    """
    layers = read_layers(workspace=workspace, home=home, trust=trust, arguments=overrides)
    return settings_from_layers(layers, stacklevel=3)


def settings_from_layers(layers: Layers, *, stacklevel: int = 2) -> Settings:
    """Validate ``layers``' merge into Settings. A file that could not be read or
    parsed, or a bad value, is a ConfigError naming where to fix it; unknown keys and
    an ignored workspace are ConfigWarnings."""
    error = layers.first_error()
    if error is not None:
        raise error
    data = merged(layers)
    data["home"] = layers.home
    data["workspace"] = layers.workspace
    try:
        settings = Settings.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        where = error_origin(first["loc"], layers.layers)
        user, own = layers.files
        fix = f"Fix it in {where}" if where else f"Check {user.where} and {own.where}"
        raise ConfigError(f"Invalid setting {loc!r}: {first['msg']}. {fix}.") from e
    settings._layers = layers
    warn_if_ignored(layers.trust, layers.home)
    for layer in layers.layers:
        for message in ignored_settings(layer.data, layer.where):
            warnings.warn(message, ConfigWarning, stacklevel=stacklevel)
    return settings
