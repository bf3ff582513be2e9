"""Where settings come from: each source read once, kept as a layer with its origin.

A :class:`Layers` holds, lowest precedence first, the user file, the workspace file
(its table only when the workspace is trusted), the environment and the caller's
arguments (built-in defaults are the model's and the view's own). Each layer keeps
``where`` — the file, ``the environment`` or ``the arguments given`` — so an error or
an unknown key names the place to edit, and the per-file tables stay available to the
few rules that combine files instead of letting the higher one win (permission rules,
the model: see :mod:`skilldeck.settings.precedence`).

Every consumer — the pydantic :class:`~skilldeck.settings.model.Settings`, the light
view of the CLI's fast path, model choice, permission rules — reads these layers,
never the files: one ``skilldeck run`` opens each config file once. The user file is
read here; the workspace file by :func:`skilldeck.trust.assess_workspace`, whose
digest covers the very bytes parsed below.

Standard library only (tomllib imported when a file or variable needs parsing): the
fast path builds its view from these layers without pydantic. :class:`Layer` and
:class:`Layers` are plain slotted classes with what a frozen ``@dataclass`` gave them
(immutable, equal and hashed by value, its ``repr``), because generating a frozen
dataclass's methods costs about a millisecond per class at every import, on the path
of every ``skills list --json`` (``python -m bench discovery``, figure
``cli_list_json_warm``; ``python -m bench compare discovery``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any

from skilldeck._safefs import open_regular
from skilldeck.errors import ConfigError, ResourceAccessError
from skilldeck.trust import CONFIG_FILENAME, WORKSPACE_DIRNAME, Assessment, assess_workspace

__all__ = [
    "ARGUMENTS",
    "ENVIRONMENT",
    "Layer",
    "Layers",
    "deep_merge",
    "env_layer",
    "parse_toml",
    "read_layers",
    "read_toml",
    "skilldeck_home",
]

ENVIRONMENT = "the environment"
ARGUMENTS = "the arguments given"
_PREFIX = "SKILLDECK_"


def skilldeck_home() -> Path:
    """``$SKILLDECK_HOME`` or ``~/.skilldeck``: user skills, config, cache, sessions."""
    env = os.environ.get("SKILLDECK_HOME")
    return Path(env).expanduser() if env else Path.home() / ".skilldeck"


class FrozenRecord:
    """What a frozen ``@dataclass`` gives, without the cost of generating its methods
    at import (``python -m bench discovery``, ``cli_list_json_warm``), for a subclass
    that lists its fields in ``__match_args__`` (in order) and sets them in
    ``__init__`` with ``object.__setattr__``: immutable, compared and hashed by value,
    a dataclass's ``repr``, pickled through its constructor. Used here and by the
    registry's rows."""

    __slots__ = ()
    __match_args__: tuple[str, ...] = ()

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{self.__class__.__qualname__}({fields})"

    def __reduce__(self) -> tuple[type[FrozenRecord], tuple[Any, ...]]:
        return self.__class__, self._key()

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


class Layer(FrozenRecord):
    """One source of settings: its table and where it came from."""

    __slots__ = ("data", "error", "kind", "where")
    __match_args__ = ("kind", "where", "data", "error")

    #: "user", "workspace", "environment" or "arguments"
    kind: str
    #: the file's path, ``the environment`` or ``the arguments given`` (for messages)
    where: str
    data: dict[str, Any]
    #: why the source could not be used (broken TOML, unreadable): raised by the model
    error: ConfigError | None

    def __init__(
        self,
        kind: str,
        where: str,
        data: dict[str, Any] | None = None,
        error: ConfigError | None = None,
    ) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "where", where)
        object.__setattr__(self, "data", {} if data is None else data)
        object.__setattr__(self, "error", error)

    @property
    def is_file(self) -> bool:
        return self.kind in ("user", "workspace")


class Layers(FrozenRecord):
    """Everything settings are built from, as read once for ``home`` and ``workspace``."""

    __slots__ = ("home", "layers", "trust", "workspace")
    __match_args__ = ("home", "workspace", "trust", "layers")

    home: Path
    workspace: Path
    trust: Assessment
    #: lowest precedence first: user file, workspace file, environment, arguments
    layers: tuple[Layer, ...]

    def __init__(
        self, home: Path, workspace: Path, trust: Assessment, layers: tuple[Layer, ...]
    ) -> None:
        object.__setattr__(self, "home", home)
        object.__setattr__(self, "workspace", workspace)
        object.__setattr__(self, "trust", trust)
        object.__setattr__(self, "layers", layers)

    @property
    def files(self) -> tuple[Layer, ...]:
        """The config files in effect (the workspace's empty unless trusted)."""
        return tuple(layer for layer in self.layers if layer.is_file)

    def get(self, kind: str) -> Layer:
        return next(layer for layer in self.layers if layer.kind == kind)

    def first_error(self) -> ConfigError | None:
        return next((layer.error for layer in self.layers if layer.error), None)

    def with_arguments(self, arguments: Mapping[str, Any]) -> Layers:
        """These layers with ``arguments`` as the caller's (highest) layer."""
        args = Layer("arguments", ARGUMENTS, {k: v for k, v in arguments.items() if v is not None})
        rest = tuple(layer for layer in self.layers if layer.kind != "arguments")
        return Layers(self.home, self.workspace, self.trust, (*rest, args))


def read_layers(
    *,
    workspace: Path | None = None,
    home: Path | None = None,
    trust: bool | None = None,
    arguments: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Layers:
    """Read the user file and the workspace's (through the trust decision: ``trust``
    decides for this call, None asks ``$SKILLDECK_TRUST_WORKSPACE`` and the store),
    and take the environment and ``arguments``: each once."""
    home = (home or skilldeck_home()).expanduser()
    workspace = (workspace or Path.cwd()).resolve()
    assessment = assess_workspace(workspace, home, trust=trust)
    user_path = home / CONFIG_FILENAME
    ws_path = workspace / WORKSPACE_DIRNAME / CONFIG_FILENAME
    user = _file_layer("user", user_path, *_read_bytes(user_path))
    if assessment.trusted and assessment.config is not None:
        own = _file_layer("workspace", ws_path, assessment.config, None)
    else:
        own = Layer("workspace", str(ws_path))
    env = env_layer(os.environ if environ is None else environ)
    args = {k: v for k, v in (arguments or {}).items() if v is not None}
    layers = (user, own, env, Layer("arguments", ARGUMENTS, args))
    return Layers(home, workspace, assessment, layers)


def _read_bytes(path: Path) -> tuple[bytes | None, ConfigError | None]:
    """A config file's bytes (None: no file) or why it cannot be read. Opened with
    ``os.open`` (one call per read: what the read-counting test watches), through
    :func:`skilldeck._safefs.open_regular`."""
    try:  # regular files only: a FIFO in its place would hang every command
        with open_regular(path) as fh:
            return fh.read(), None
    except FileNotFoundError:
        return None, None
    except ResourceAccessError as e:
        return None, ConfigError(f"{e} Replace it with a TOML file or remove it.", path=path)
    except OSError as e:
        return None, ConfigError(f"{path}: cannot read config ({e.strerror}).", path=path)


def _file_layer(kind: str, path: Path, raw: bytes | None, error: ConfigError | None) -> Layer:
    if error is not None or raw is None:
        return Layer(kind, str(path), {}, error)
    try:
        return Layer(kind, str(path), parse_toml(raw, path))
    except ConfigError as e:
        return Layer(kind, str(path), {}, e)


def read_toml(path: Path) -> dict[str, Any]:
    """Read one TOML file; a missing file is empty, a broken one is a ConfigError.
    (For files settings do not layer — the writes below, tests — not for loading.)"""
    raw, error = _read_bytes(path)
    if error is not None:
        raise error
    return {} if raw is None else parse_toml(raw, path)


def read_toml_text(path: Path) -> str:
    """The text of one TOML file, checked as :func:`read_toml` checks it ('' for no
    file): what a writer edits in place, keeping its comments."""
    raw, error = _read_bytes(path)
    if error is not None:
        raise error
    if raw is None:
        return ""
    parse_toml(raw, path)
    return raw.decode("utf-8")


def parse_toml(data: bytes, path: Path) -> dict[str, Any]:
    """``data`` (the content of ``path``) as a table; broken TOML is a ConfigError."""
    import tomllib  # stdlib, but not needed by a fast path without config files

    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(
            f"{path}: invalid TOML ({e}). Fix the file or move it aside.", path=path
        ) from e
    except RecursionError as e:  # tomllib recurses per nested array or table
        raise ConfigError(
            f"{path}: invalid TOML (values nested too deeply to read). Fix the file or "
            "move it aside.",
            path=path,
        ) from e


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Tables merge key by key; any other value (lists too) replaces."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def env_layer(environ: Mapping[str, str]) -> Layer:
    """``SKILLDECK_A__B=v`` → ``{"a": {"b": v}}`` (values parsed as TOML when they can
    be), plus ``SKILLDECK_MODEL`` as ``model``. Other top-level fields' variables
    (``SKILLDECK_SKILLS`` …) are read by the model's own environment source."""
    out: dict[str, Any] = {}
    if model := environ.get("SKILLDECK_MODEL"):
        out["model"] = model
    for key, raw in environ.items():
        if not key.startswith(_PREFIX) or "__" not in key:
            continue
        parts = key[len(_PREFIX) :].lower().split("__")
        node = out
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                break
            node = child
        else:
            node[parts[-1]] = _parse_env_value(raw)
    return Layer("environment", ENVIRONMENT, out)


def _parse_env_value(raw: str) -> Any:
    import tomllib

    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw
