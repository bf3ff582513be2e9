"""Path permission rules: gitignore-style patterns over the workspace, and which
path a file tool's call is about.

Split out of :mod:`skilldeck.skills.toolrules` so that every path rule and every
file tool compare paths the same way.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["path_argument", "path_rule_matches"]

_PATH_KEYS = ("file_path", "path", "notebook_path")


def path_argument(tool_name: str, tool_input: Mapping[str, Any], workspace: Path) -> Path | None:
    for key in _PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            candidate = Path(os.path.expanduser(value))
            return candidate if candidate.is_absolute() else workspace / candidate
    if tool_name in ("Glob", "Grep"):
        return workspace  # searching the workspace itself
    return None


def path_rule_matches(spec: str, target: Path, workspace: Path) -> bool:
    """gitignore-style match of ``target`` against ``spec`` (see module docstring)."""
    if spec.startswith("//"):
        base, pattern = Path("/"), spec[2:]
    elif spec.startswith("~/"):
        base, pattern = Path.home(), spec[2:]
    elif spec.startswith("./"):
        base, pattern = workspace, spec[2:]
    elif spec.startswith("/"):
        base, pattern = workspace, spec[1:]
    else:
        base, pattern = workspace, spec
    absolute_target = os.path.normpath(os.path.abspath(target))
    absolute_base = os.path.normpath(os.path.abspath(base))
    if absolute_target != absolute_base and not absolute_target.startswith(
        absolute_base.rstrip("/") + "/"
    ):
        return False
    rel = absolute_target[len(absolute_base) :].lstrip("/")
    regex = _gitignore_regex(pattern.rstrip("/"), anchored="/" in pattern.rstrip("/"))
    return bool(regex.match(rel))


@lru_cache(maxsize=512)
def _gitignore_regex(pattern: str, *, anchored: bool) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    if pattern.endswith("/**"):  # `dir/**` covers the directory itself too
        pattern = pattern[:-3]
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    body = "".join(out)
    prefix = "" if anchored else "(?:.*/)?"
    # a directory pattern also covers everything below it
    return re.compile(f"^{prefix}{body}(?:/.*)?$", re.DOTALL)
