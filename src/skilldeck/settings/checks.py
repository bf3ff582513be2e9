"""Settings nobody reads, and where a bad value came from: messages that name the
file or variable to edit (``ConfigWarning`` for unknown keys, with the likely key)."""

from __future__ import annotations

import difflib
import typing
from typing import Any

from pydantic import BaseModel

from skilldeck.settings.layers import ENVIRONMENT, Layer
from skilldeck.settings.model import Settings

__all__ = ["error_origin", "ignored_settings"]


def ignored_settings(layer: dict[str, Any], where: str) -> list[str]:
    """One message per key of ``layer`` (one config file, the environment or the
    arguments, named by ``where``) that no setting reads: an unknown key anywhere in
    the tree (tables that hold free-form names, like ``skills.settings``, excepted),
    with the closest known key when there is one."""

    def place(loc: tuple[str, ...]) -> str:  # a file, or the variable that set it
        return _env_name(loc, layer) if where == ENVIRONMENT else where

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


def error_origin(loc: tuple[int | str, ...], layers: tuple[Layer, ...]) -> str | None:
    """The file or variable that set the (bad) value at ``loc``: the highest layer
    that has it, named by the variable when it is the environment."""
    where = _origin(loc, [(layer.where, layer.data) for layer in layers])
    if where == ENVIRONMENT:
        env = next(layer.data for layer in layers if layer.where == ENVIRONMENT)
        return _env_name(loc, env)
    return where
