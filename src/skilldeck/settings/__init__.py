"""Settings: one package reads them, one precedence decides them.

Sources, lowest precedence first — each read once per load into a
:class:`~skilldeck.settings.layers.Layer` that remembers where it came from:

1. built-in defaults
2. the user file, ``$SKILLDECK_HOME/config.toml`` (``~/.skilldeck`` by default)
3. the workspace file, ``./.skilldeck/config.toml`` — only in a trusted workspace
   (:mod:`skilldeck.trust`: ``skilldeck trust``; a changed file is untrusted again);
   otherwise ignored as a whole, with one warning
4. the environment: ``SKILLDECK_<SECTION>__<KEY>`` (e.g.
   ``SKILLDECK_SKILLS__PROMPT_BUDGET=9000``) and ``SKILLDECK_MODEL``
5. the caller's arguments (what CLI flags become)

Tables merge key by key; other values replace. Permission rules add up over the
files instead, and the model has its own order — ``--model``, the agent
definition's, the files' (workspace over user), ``SKILLDECK_MODEL`` — all in
:mod:`skilldeck.settings.precedence`, the one place that decides.
``Settings.model`` is that choice.

Modules: ``layers`` (reading, provenance, the one merge), ``precedence``, ``model``
(the pydantic :class:`Settings`), ``load`` (:func:`load_settings`), ``checks``
(unknown keys, where a bad value came from), ``view`` (the pydantic-free view of the
CLI's fast path, from the same layers), ``writes`` (atomic ``enable``/``disable``).
Nothing else in skilldeck opens ``config.toml``. The pydantic names below are loaded
on first use (PEP 562), so ``import skilldeck.settings`` stays pydantic-free for the
fast path; ``skilldeck.config`` re-exports them under their old path. So are the
writes: a read-only command (``skills list --json``: ``python -m bench discovery``,
figure ``cli_list_json_warm``) never imports :mod:`~skilldeck.settings.writes`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute
from skilldeck.settings.layers import (
    FrozenRecord,
    Layer,
    Layers,
    deep_merge,
    parse_toml,
    read_layers,
    read_toml,
    skilldeck_home,
)
from skilldeck.settings.paths import HomePaths
from skilldeck.settings.precedence import choose_model, file_rules, merged
from skilldeck.settings.view import SettingsView, view_from_layers

if TYPE_CHECKING:
    from skilldeck.settings.load import load_settings, settings_from_layers
    from skilldeck.settings.model import Settings
    from skilldeck.settings.writes import (
        Written,
        record_disabled,
        record_enabled,
        update_config_file,
    )

__all__ = [
    "FrozenRecord",
    "HomePaths",
    "Layer",
    "Layers",
    "Settings",
    "SettingsView",
    "Written",
    "choose_model",
    "deep_merge",
    "file_rules",
    "load_settings",
    "merged",
    "parse_toml",
    "read_layers",
    "read_toml",
    "record_disabled",
    "record_enabled",
    "settings_from_layers",
    "skilldeck_home",
    "update_config_file",
    "view_from_layers",
]

#: names resolved on first use (and then cached, as every facade's): pydantic's, and
#: the writes (only commands that write config need them)
_LAZY = {
    "Settings": "model",
    "load_settings": "load",
    "settings_from_layers": "load",
    "Written": "writes",
    "record_disabled": "writes",
    "record_enabled": "writes",
    "update_config_file": "writes",
}


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _LAZY, name, globals())
