"""Path permission rules: gitignore-style patterns over the workspace, and which
path a file tool's call is about.

Split out of :mod:`skilldeck.skills.rules.toolrules` so that every path rule and every
file tool compare paths the same way.

Why two spellings of every path: a rule is written against the workspace as the user
sees it (``Read(./secrets/**)``), but the model can name the same file many ways —
``/proc/self/root/<ws>/secrets/k``, ``/proc/self/cwd/secrets/k``, a workspace symlink
to ``secrets/``, ``a/../secrets/k``. The file tools open the *resolved real path*
(:func:`os.path.realpath`), so a rule must judge that path too:

* a **deny** (or ask) rule matches when the literal path *or* the resolved path
  matches — either spelling of a forbidden file is forbidden;
* an **allow** rule matches only when the resolved path matches — a literal
  ``docs/link`` pointing at ``.git/config`` is not vouched for by ``Edit(docs/**)``.

The workspace (the base of relative rules) is compared in both spellings as well,
so a workspace reached through a symlinked folder still matches its rules.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skilldeck.skills.rules.globmatch import GlobMatcher, compile_matcher

__all__ = ["path_argument", "path_rule_matches", "resolved_path", "tool_path_key"]

_PATH_KEYS = ("file_path", "path", "notebook_path")
#: the one input key each file tool actually opens (the gate must judge that key:
#: ``Grep(path=secrets, file_path=README)`` searches ``secrets``)
_TOOL_PATH_KEY: Mapping[str, str] = {
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
    "NotebookRead": "notebook_path",
    "Glob": "path",
    "Grep": "path",
}


def tool_path_key(tool_name: str) -> str | None:
    """The input key ``tool_name`` reads its path from (None: not a known file tool)."""
    return _TOOL_PATH_KEY.get(tool_name)


def path_argument(tool_name: str, tool_input: Mapping[str, Any], workspace: Path) -> Path | None:
    """The absolute (not yet resolved) path a call is about.

    Known file tools are judged on the key they really use; Glob and Grep without a
    ``path`` search the workspace itself. Other tools fall back to the first
    path-like key.
    """
    key = tool_path_key(tool_name)
    keys = (key,) if key is not None else _PATH_KEYS
    for name in keys:
        value = tool_input.get(name)
        if isinstance(value, str) and value:
            candidate = Path(os.path.expanduser(value))
            return candidate if candidate.is_absolute() else workspace / candidate
    if tool_name in ("Glob", "Grep"):
        return workspace  # searching the workspace itself
    return None


def resolved_path(path: Path | str) -> Path:
    """``path`` with every symlink, ``..`` and /proc magic link resolved (what a file
    tool really opens). A path that cannot be resolved raises ValueError."""
    return Path(os.path.realpath(os.path.abspath(path)))


def path_rule_matches(spec: str, target: Path, workspace: Path, *, deny: bool = True) -> bool:
    """gitignore-style match of ``target`` against ``spec`` (see module docstring).

    ``deny=True``: the literal *or* the resolved path matching is enough (deny and
    ask rules). ``deny=False``: only the resolved path counts (allow rules).
    """
    base, pattern = _split_spec(spec, workspace)
    literal = os.path.normpath(os.path.abspath(target))
    try:
        real = str(resolved_path(target))
        bases = {os.path.normpath(os.path.abspath(base)), str(resolved_path(base))}
    except (OSError, ValueError):  # unresolvable (a NUL byte…): fail closed
        return deny
    targets = {literal, real} if deny else {real}
    matcher = _rule_matcher(pattern)
    for absolute_target in targets:
        for absolute_base in bases:
            rel = _relative(absolute_target, absolute_base)
            if rel is not None and matcher.match_prefix(rel):
                return True
    return False


def _split_spec(spec: str, workspace: Path) -> tuple[Path, str]:
    if spec.startswith("//"):
        return Path("/"), spec[2:]
    if spec.startswith("~/"):
        return Path.home(), spec[2:]
    if spec.startswith("./"):
        return workspace, spec[2:]
    if spec.startswith("/"):
        return workspace, spec[1:]
    return workspace, spec


def _relative(target: str, base: str) -> str | None:
    if target != base and not target.startswith(base.rstrip("/") + "/"):
        return None
    return target[len(base) :].lstrip("/")


def _rule_matcher(pattern: str) -> GlobMatcher:
    """The gitignore reading of a rule: ``*``/``?`` within a segment, ``**`` across
    segments, no ``/`` means "at any depth", ``dir/**`` covers ``dir`` itself, and a
    matching directory covers everything below it (``[`` and ``{`` are literal)."""
    pattern = pattern.rstrip("/")
    anchored = "/" in pattern
    if pattern.endswith("/**"):
        pattern = pattern[:-3]
    if not anchored:
        pattern = "**/" + pattern
    return compile_matcher(pattern, classes=False, braces=False)
