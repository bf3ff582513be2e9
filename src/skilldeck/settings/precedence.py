"""The one precedence: which layer wins, for every setting and for the model.

Settings, lowest precedence first (each higher layer overrides the lower ones;
tables merge key by key, any other value — a list too — replaces):

1. built-in defaults
2. the user file, ``$SKILLDECK_HOME/config.toml``
3. the workspace file, ``./.skilldeck/config.toml`` — only in a trusted workspace
   (:mod:`skilldeck.trust`); otherwise ignored as a whole, with one warning
4. the environment: ``SKILLDECK_<SECTION>__<KEY>``, and ``SKILLDECK_MODEL``
5. the caller's arguments (what CLI flags become)

Two settings combine instead:

* permission rules (``permissions.allow`` / ``ask`` / ``deny``): every file's list
  counts, plus the winning value above, so a workspace's ``deny = []`` cannot erase
  the user's deny rules;
* the model, in :func:`choose_model`: ``--model`` (an argument), then the agent
  definition's ``model``, then the config files — the workspace's over the user's,
  in each ``model`` over ``[models] default`` — then ``SKILLDECK_MODEL``, then
  ``SKILLDECK_MODELS__DEFAULT``. (The files win over ``SKILLDECK_MODEL``: a project
  that names its model keeps it whatever the shell exports; docs/models.md.)
  ``Settings.model`` holds this choice, so it is the model a run uses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from skilldeck.errors import ModelConfigError
from skilldeck.settings.layers import Layer, Layers, deep_merge
from skilldeck.trust import CONFIG_FILENAME, WORKSPACE_DIRNAME

__all__ = ["choose_model", "file_rules", "merged", "resolve_model"]


class _ModelsPart(Protocol):
    @property
    def default(self) -> str | None: ...


class _HasModel(Protocol):
    """What :func:`resolve_model` reads of settings (full or light)."""

    @property
    def home(self) -> Path: ...
    @property
    def model(self) -> str | None: ...
    @property
    def models(self) -> _ModelsPart: ...


def merged(layers: Layers) -> dict[str, Any]:
    """Every layer merged, lowest first, with ``model`` set by :func:`choose_model`."""
    data: dict[str, Any] = {}
    for layer in layers.layers:
        data = deep_merge(data, layer.data)
    model = choose_model(layers)
    if model is not None:
        data["model"] = model
    else:
        data.pop("model", None)  # a non-string: the model reports it where it is
        for layer in reversed(layers.layers):
            if "model" in layer.data:
                data["model"] = layer.data["model"]
                break
    return data


def choose_model(
    layers: Layers, *, explicit: str | None = None, definition: str | None = None
) -> str | None:
    """The model a run uses (see the module docs), or None when nothing names one."""
    args = layers.get("arguments").data
    env = layers.get("environment").data
    candidates: list[Any] = [explicit, args.get("model"), _default(args), definition]
    for layer in reversed(layers.files):
        candidates += [layer.data.get("model"), _default(layer.data)]
    candidates += [env.get("model"), _default(env)]
    for value in candidates:
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def resolve_model(
    settings: _HasModel, *, explicit: str | None = None, definition: str | None = None
) -> str:
    """The model a run uses: ``explicit`` (``--model``), then ``definition`` (the agent
    definition's), then ``settings.model`` — which :func:`choose_model` set from the
    layers when the settings were loaded — then ``models.default`` (settings made
    directly). Raises ModelConfigError naming the ways to set one."""
    for value in (explicit, definition, settings.model, settings.models.default):
        if isinstance(value, str) and value.strip():
            return value if value is explicit else value.strip()
    raise ModelConfigError(
        "No model chosen. Pass --model provider:name (e.g. --model ollama:qwen2.5 or "
        f'--model scripted:examples/demo.jsonl), set `model = "..."` in '
        f"{settings.home / CONFIG_FILENAME} or ./{WORKSPACE_DIRNAME}/{CONFIG_FILENAME}, "
        "or export SKILLDECK_MODEL."
    )


def _default(data: dict[str, Any]) -> Any:
    models = data.get("models")
    return models.get("default") if isinstance(models, dict) else None


def file_rules(files: tuple[Layer, ...], key: str) -> list[str]:
    """``permissions.<key>`` of every config file, in file order."""
    rules: list[str] = []
    for layer in files:
        section = layer.data.get("permissions")
        found = section.get(key) if isinstance(section, dict) else None
        if isinstance(found, list):
            rules.extend(str(r) for r in found)
    return rules
