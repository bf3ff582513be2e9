"""Workspace trust in words: what a folder's config sets and what its control roots
hold, for the person deciding whether to trust it (``skilldeck trust``, the question
``chat`` and ``run`` ask). Standard library only, like :mod:`skilldeck.trust`."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["SENSITIVE", "root_contents", "settings_lines"]

_T = TypeVar("_T")

#: settings that relax security or run things, marked when a config is shown. The
#: whole file of an untrusted workspace is ignored, not only these.
SENSITIVE = (
    "sandbox",
    "permissions",
    "mcp",
    "model",
    "models.default",
    "models.base_url",
    "skills.code_skills",
    "skills.trusted",
    "skills.dirs",
    "skills.settings",
    "skills.dynamic_context",
    "agent",
)


def root_contents(root: Path, limit: int = 20) -> str:
    """What a control root holds, in words: its entries' names (a skill or agent is
    a folder or a ``.md`` file there), the first ``limit`` of them."""
    try:
        with os.scandir(root) as entries:
            names = sorted(e.name for e in _limited(entries, 10_000))
    except OSError as e:
        return f"(cannot be listed: {e.strerror})"
    if not names:
        return "(empty)"
    shown = ", ".join(names[:limit])
    more = f" … and {len(names) - limit} more" if len(names) > limit else ""
    count = f"{len(names)} entr{'y' if len(names) == 1 else 'ies'}"
    return f"{count}: {shown}{more}"


def _limited(items: Iterable[_T], limit: int) -> Iterator[_T]:
    for i, item in enumerate(items):
        if i >= limit:
            return
        yield item


def settings_lines(data: bytes, limit: int = 60) -> list[str]:
    import tomllib

    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        return [f"(not valid TOML: {e})"]
    leaves: list[tuple[str, Any]] = []

    def walk(prefix: str, node: dict[str, Any]) -> None:
        for key, value in node.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, dict) and value:
                walk(name, value)
            else:
                leaves.append((name, value))

    walk("", table)
    lines = [
        f"{'!' if _sensitive(name) else ' '} {name} = {json.dumps(value, default=str)[:200]}"
        for name, value in leaves
    ]
    if len(lines) > limit:
        lines = [*lines[:limit], f"  … and {len(lines) - limit} more"]
    return lines or ["(nothing)"]


def _sensitive(name: str) -> bool:
    return any(name == s or name.startswith(s + ".") for s in SENSITIVE)
