"""Workspace trust in words: what an untrusted folder loses (the one warning line
per process), and what its config sets and its control roots hold, for the person
deciding whether to trust it (``skilldeck trust``, the question ``chat`` and ``run``
ask). The decision itself is :mod:`skilldeck.trust`; like it, standard library only."""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

from skilldeck.errors import ConfigWarning
from skilldeck.trust import (
    CONFIG_FILENAME,
    WORKSPACE_DIRNAME,
    WORKSPACE_SKILL_ROOTS,
    Assessment,
    TrustState,
)

__all__ = [
    "SENSITIVE",
    "describe_workspace",
    "ignored_paths",
    "root_contents",
    "settings_lines",
    "skill_roots_unread",
    "untrusted_message",
    "warn_if_ignored",
]

_T = TypeVar("_T")

#: False while settings load for a command that reads no workspace skill root
#: (``--no-defaults``): the warning then leaves those roots out, since nothing that
#: would have been read was ignored. Only the words change; whether a root is read
#: is :meth:`Assessment.accepts`, which never looks at this.
_SKILL_ROOTS_READ: ContextVar[bool] = ContextVar("skilldeck_skill_roots_read", default=True)


@contextlib.contextmanager
def skill_roots_unread() -> Iterator[None]:
    """Settings loaded inside leave the workspace's skill roots out of the
    untrusted-workspace warning (its config, its agents folder still count)."""
    token = _SKILL_ROOTS_READ.set(False)
    try:
        yield
    finally:
        _SKILL_ROOTS_READ.reset(token)


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
    except RecursionError:  # tomllib recurses per nested array or table
        return ["(not valid TOML: values nested too deeply to read)"]
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


# ---- what an untrusted workspace loses -------------------------------------------


def ignored_paths(assessment: Assessment, home: Path, *, skill_roots: bool = True) -> list[str]:
    """The workspace files ``assessment`` leaves out, relative to the workspace: for
    an untrusted folder its config file and the skill and agent folders that exist,
    for a trusted one the control roots that appeared since trust (those that are the
    user's own folders too, as in the home folder, excepted). ``skill_roots=False``:
    the skill folders are not counted (a command that would not read them anyway)."""
    if assessment.trusted:
        candidates = assessment.new_roots
        found: list[str] = []
    else:
        candidates = list(assessment.present)
        config = assessment.config is not None or assessment.state is TrustState.UNREADABLE
        found = [f"{WORKSPACE_DIRNAME}/{CONFIG_FILENAME}"] if config else []
    if not skill_roots:
        candidates = [sub for sub in candidates if sub not in WORKSPACE_SKILL_ROOTS]
    if not candidates:
        return found
    ws = assessment.workspace
    users = {
        os.path.realpath(p)
        for p in (
            home / "skills",
            home / "agents",
            Path.home() / ".agents" / "skills",
            Path.home() / ".claude" / "skills",
        )
    }
    found += [sub for sub in candidates if os.path.realpath(ws / sub) not in users]
    return found


def untrusted_message(
    assessment: Assessment, home: Path, *, skill_roots: bool = True
) -> str | None:
    """The one warning line for an untrusted workspace that has something to ignore."""
    ignored = ignored_paths(assessment, home, skill_roots=skill_roots)
    if not ignored:
        return None
    ws = assessment.workspace
    what = ", ".join(ignored) + (" is" if len(ignored) == 1 else " are")
    config = f"{WORKSPACE_DIRNAME}/{CONFIG_FILENAME}"
    if assessment.trusted:
        return (
            f"{ws}: {', '.join(ignored)} appeared after you trusted this folder (a model "
            f"or a checkout may have created {'it' if len(ignored) == 1 else 'them'}), so "
            f"{what} ignored; review {'it' if len(ignored) == 1 else 'them'}, then run "
            f"`skilldeck trust {ws}` again"
        )
    if assessment.state is TrustState.CHANGED:
        return (
            f"{ws}: {config} changed since you trusted this folder (a model or a "
            f"checkout may have written it), so {what} ignored; review it, then run "
            f"`skilldeck trust {ws}` again"
        )
    if assessment.state is TrustState.UNREADABLE:
        return (
            f"{ws}: {config} {assessment.reason}, so {what} ignored; make it a "
            f"regular TOML file, then run `skilldeck trust {ws}`"
        )
    them = "it" if len(ignored) == 1 else "them"
    return (
        f"{ws}: this folder is not trusted, so {what} ignored (a cloned repository "
        f"or a model may have written {them}); review {them}, then run "
        f"`skilldeck trust {ws}`"
    )


def warn_if_ignored(assessment: Assessment, home: Path) -> None:
    """Warn (ConfigWarning, one line in the CLI) when the workspace's files are
    ignored. Issued from this one place, so the default warning filter prints a
    message once per process however many times settings are loaded."""
    message = untrusted_message(assessment, home, skill_roots=_SKILL_ROOTS_READ.get())
    if message:
        warnings.warn(message, ConfigWarning, stacklevel=1)


def describe_workspace(assessment: Assessment, home: Path) -> list[str]:
    """What trusting this folder lets in, as lines for a person deciding: each
    setting its config file sets (``!`` before those that relax security or run
    things) and the skill and agent folders present."""
    ws = assessment.workspace
    lines = [f"Folder: {ws}"]
    config = ws / WORKSPACE_DIRNAME / CONFIG_FILENAME
    if assessment.state is TrustState.UNREADABLE:
        lines.append(f"  {config} {assessment.reason}")
    elif assessment.config is None:
        lines.append(f"  no {WORKSPACE_DIRNAME}/{CONFIG_FILENAME}")
    else:
        if config.is_symlink():
            lines.append(f"  {config} is a symbolic link to {os.path.realpath(config)}")
        lines.append(f"  {config} sets (! = relaxes security or runs things):")
        lines.extend(f"    {line}" for line in settings_lines(assessment.config))
    for sub in assessment.present:
        lines.append(f"  {sub}/: {root_contents(ws / sub)}")
    return lines
