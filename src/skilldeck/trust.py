"""Workspace trust: a folder's own config and skills count only once you trust it.

Whoever can write a folder can write its ``.skilldeck/config.toml`` and its skill
roots: a cloned repository, and a model working in that folder (a sandboxed command
or a file tool writes the workspace). Those files can turn the sandbox off, allow
every tool, import code into skilldeck's process or point the model at another
server; so, as Claude Code asks "Do you trust the files in this folder?", skilldeck
uses them only for a folder you trusted (``skilldeck trust``, or "yes" to the
question ``chat`` and an interactive ``run`` ask).

The store, ``$SKILLDECK_HOME/trusted-folders.json`` (0600), records each trusted
folder's real path and the SHA-256 of its ``.skilldeck/config.toml`` at the moment
of trust (or that it had none). A folder is trusted while that file is byte for byte
what you trusted; once it changes — a model may have written it — the folder counts
as untrusted again until you review the file and trust it again. The digest is taken
over the very bytes the settings are parsed from (read once), so no second read can
swap them.

An untrusted workspace's config file and its workspace skill roots
(``.skilldeck/skills``, ``.agents/skills``, ``.claude/skills``) and agent definitions
(``.skilldeck/agents``) are ignored as a whole, with one warning line saying what and
how to trust. ``SKILLDECK_TRUST_WORKSPACE=1`` trusts the workspace for one process
(CI and tests; a model cannot set skilldeck's own environment), ``=0`` distrusts it
even when stored; neither applies to ``/`` or your home folder, which are never
trusted without ``skilldeck trust`` (and that refuses them: run in a project folder).

This module sits at the bottom layer (standard library only, no pydantic): the CLI's
fast path uses it too.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import warnings
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from skilldeck._atomic import atomic_write_text
from skilldeck.errors import ConfigError, ConfigWarning

__all__ = [
    "CONFIG_FILENAME",
    "TRUST_ENV",
    "WORKSPACE_DIRNAME",
    "WORKSPACE_SKILL_ROOTS",
    "Assessment",
    "TrustState",
    "assess_workspace",
    "describe_workspace",
    "ignored_paths",
    "list_trusted",
    "revoke_folder",
    "store_path",
    "trust_folder",
    "warn_if_ignored",
]

CONFIG_FILENAME = "config.toml"
WORKSPACE_DIRNAME = ".skilldeck"
WORKSPACE_SKILL_ROOTS = (".skilldeck/skills", ".agents/skills", ".claude/skills")
WORKSPACE_AGENTS = ".skilldeck/agents"
TRUST_ENV = "SKILLDECK_TRUST_WORKSPACE"
STORE_NAME = "trusted-folders.json"
#: a config or store larger than this is not read (a workspace config is a few lines)
_MAX_BYTES = 1024 * 1024
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


class TrustState(StrEnum):
    TRUSTED = "trusted"  # by the store, the environment or the caller
    UNTRUSTED = "untrusted"  # never trusted (or distrusted by the environment)
    CHANGED = "changed"  # trusted, but the config is no longer what was trusted
    UNREADABLE = "unreadable"  # the config is not a regular, readable file


@dataclass(frozen=True, slots=True)
class Assessment:
    """Whether ``workspace`` is trusted now, and its config's bytes as read."""

    workspace: Path
    state: TrustState
    #: the workspace config's content (None: no file, or the same file as the user's)
    config: bytes | None
    digest: str | None
    #: why, for messages: "store", "environment", "argument", or a problem
    reason: str = ""

    @property
    def trusted(self) -> bool:
        return self.state is TrustState.TRUSTED

    @property
    def config_path(self) -> Path:
        return self.workspace / WORKSPACE_DIRNAME / CONFIG_FILENAME


def store_path(home: Path) -> Path:
    return home / STORE_NAME


def never_trusted_implicitly(folder: Path) -> bool:
    """``/`` and the home folder: every project lies below them, and the home folder's
    dot folders are the user's own (trust a project folder instead)."""
    real = os.path.realpath(folder)
    return real in ("/", os.path.realpath(Path.home()))


def read_config(workspace: Path, home: Path) -> tuple[bytes | None, str]:
    """The workspace config's bytes (None when absent, or when it is the user's own
    file, as in the home folder) and a problem ("" when none). Only a regular file is
    read (a FIFO or device would hang or never end), opened without blocking."""
    path = workspace / WORKSPACE_DIRNAME / CONFIG_FILENAME
    user = home / CONFIG_FILENAME
    with contextlib.suppress(OSError):
        if os.path.realpath(path) == os.path.realpath(user):
            return None, ""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None, ""
    except OSError as e:
        return None, f"cannot be read ({e.strerror})"
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "is not a regular file"
        data = fh.read(_MAX_BYTES + 1)
    if len(data) > _MAX_BYTES:
        return None, f"is larger than {_MAX_BYTES} bytes"
    return data, ""


def _digest(data: bytes | None) -> str | None:
    # imported here (and datetime, tomllib below): the CLI's fast path loads this
    # module on every `skills list --json`, and most folders have no config
    import hashlib

    return None if data is None else hashlib.sha256(data).hexdigest()


def _env_choice(workspace: Path) -> bool | None:
    value = os.environ.get(TRUST_ENV, "").strip().lower()
    if value in ("1", "true", "yes", "on"):
        return None if never_trusted_implicitly(workspace) else True
    if value in ("0", "false", "no", "off"):
        return False
    return None


def assess_workspace(workspace: Path, home: Path, *, trust: bool | None = None) -> Assessment:
    """Trust of the real folder ``workspace``: ``trust`` when the caller decides,
    else ``$SKILLDECK_TRUST_WORKSPACE``, else the store and the config's digest."""
    workspace = Path(os.path.realpath(workspace))
    data, problem = read_config(workspace, home)
    digest = _digest(data)
    if problem:
        return Assessment(workspace, TrustState.UNREADABLE, None, None, problem)
    choice, reason = (trust, "argument") if trust is not None else (_env_choice(workspace), "")
    if choice is not None:
        state = TrustState.TRUSTED if choice else TrustState.UNTRUSTED
        return Assessment(workspace, state, data, digest, reason or "environment")
    record = _load_store(home).get(str(workspace))
    if record is None:
        return Assessment(workspace, TrustState.UNTRUSTED, data, digest, "store")
    if record.get("config_sha256") != digest:
        return Assessment(workspace, TrustState.CHANGED, data, digest, "store")
    return Assessment(workspace, TrustState.TRUSTED, data, digest, "store")


# ---- the store ------------------------------------------------------------------


def _load_store(home: Path) -> dict[str, dict[str, Any]]:
    """Trusted folders by real path. A store that is missing, not a regular file of
    this user, writable by others, too large or not the expected JSON trusts nothing."""
    path = store_path(home)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return {}
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.getuid()
            or info.st_mode & 0o022
            or info.st_size > _MAX_BYTES
        ):
            return {}
        raw = fh.read(_MAX_BYTES)
    try:
        folders = json.loads(raw.decode("utf-8")).get("folders")
    except (ValueError, UnicodeDecodeError, AttributeError):
        return {}
    if not isinstance(folders, dict):
        return {}
    return {str(k): v for k, v in folders.items() if isinstance(v, dict)}


def _save_store(home: Path, folders: dict[str, dict[str, Any]]) -> None:
    path = store_path(home)
    text = json.dumps({"version": 1, "folders": folders}, indent=2, sort_keys=True) + "\n"
    atomic_write_text(path, text)  # a mkstemp file: created 0600
    os.chmod(path, 0o600)


def trust_folder(workspace: Path, home: Path, *, expect: Assessment | None = None) -> Assessment:
    """Record ``workspace`` (its real path) as trusted with its config's digest now.
    Refuses ``/`` and the home folder (ConfigError saying why and what to do), and,
    given ``expect`` (what a person was shown), a config that changed since."""
    real = Path(os.path.realpath(workspace))
    if never_trusted_implicitly(real):
        raise ConfigError(
            f"{real}: skilldeck does not trust / or your home folder as a workspace "
            f"(every project lies below it). Put user-wide settings in "
            f"{home / CONFIG_FILENAME} and trust a project folder instead.",
            path=real,
        )
    if not real.is_dir():
        raise ConfigError(f"{real}: not a folder; give the workspace folder to trust.", path=real)
    data, problem = read_config(real, home)
    if problem:
        raise ConfigError(
            f"{real / WORKSPACE_DIRNAME / CONFIG_FILENAME} {problem}: "
            "replace it with a regular TOML file before trusting the folder.",
            path=real,
        )
    if expect is not None and expect.digest != _digest(data):
        raise ConfigError(
            f"{real / WORKSPACE_DIRNAME / CONFIG_FILENAME} changed while you were "
            "reading it; nothing was trusted. Review it again.",
            path=real,
        )
    import datetime as dt

    folders = _load_store(home)
    folders[str(real)] = {
        "config_sha256": _digest(data),
        "trusted_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    _save_store(home, folders)
    return Assessment(real, TrustState.TRUSTED, data, _digest(data), "store")


def revoke_folder(workspace: Path, home: Path) -> bool:
    """Forget ``workspace``; False when it was not trusted."""
    folders = _load_store(home)
    key = os.path.realpath(workspace)
    if key not in folders:
        return False
    del folders[key]
    _save_store(home, folders)
    return True


def list_trusted(home: Path) -> list[tuple[Path, str, TrustState | None]]:
    """``(folder, trusted_at, state now)`` for every stored folder (state None: the
    folder is gone)."""
    found: list[tuple[Path, str, TrustState | None]] = []
    for key, record in sorted(_load_store(home).items()):
        folder, state = Path(key), None
        if folder.is_dir():
            data, problem = read_config(folder, home)
            same = not problem and record.get("config_sha256") == _digest(data)
            state = TrustState.TRUSTED if same else TrustState.CHANGED
        found.append((folder, str(record.get("trusted_at", "")), state))
    return found


# ---- what an untrusted workspace loses, in words ---------------------------------


def ignored_paths(assessment: Assessment, home: Path) -> list[str]:
    """The workspace files an untrusted ``assessment`` leaves out, relative to the
    workspace: its config file and the skill and agent folders that exist (those that
    are the user's own folders too, as in the home folder, excepted)."""
    if assessment.trusted:
        return []
    ws = assessment.workspace
    found: list[str] = []
    if assessment.config is not None or assessment.state is TrustState.UNREADABLE:
        found.append(f"{WORKSPACE_DIRNAME}/{CONFIG_FILENAME}")
    users = {
        os.path.realpath(p)
        for p in (
            home / "skills",
            home / "agents",
            Path.home() / ".agents" / "skills",
            Path.home() / ".claude" / "skills",
        )
    }
    for sub in (*WORKSPACE_SKILL_ROOTS, WORKSPACE_AGENTS):
        path = ws / sub
        if path.is_dir() and os.path.realpath(path) not in users:
            found.append(sub)
    return found


def untrusted_message(assessment: Assessment, home: Path) -> str | None:
    """The one warning line for an untrusted workspace that has something to ignore."""
    ignored = ignored_paths(assessment, home)
    if not ignored:
        return None
    ws = assessment.workspace
    what = ", ".join(ignored) + (" is" if len(ignored) == 1 else " are")
    config = f"{WORKSPACE_DIRNAME}/{CONFIG_FILENAME}"
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
    return (
        f"{ws}: this folder is not trusted, so {what} ignored (a cloned repository "
        f"or a model may have written them); review them, then run `skilldeck trust {ws}`"
    )


def warn_if_ignored(assessment: Assessment, home: Path) -> None:
    """Warn (ConfigWarning, one line in the CLI) when the workspace's files are
    ignored. Issued from this one place, so the default warning filter prints a
    message once per process however many times settings are loaded."""
    message = untrusted_message(assessment, home)
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
        lines.extend(f"    {line}" for line in _settings_lines(assessment.config))
    for sub in (*WORKSPACE_SKILL_ROOTS, WORKSPACE_AGENTS):
        if (ws / sub).is_dir():
            count = sum(1 for _ in _limited((ws / sub).glob("*/*.md"), 10_000))
            lines.append(f"  {sub}/ ({count} folders holding a .md file)")
    return lines


def _limited(items: Any, limit: int) -> Any:
    for i, item in enumerate(items):
        if i >= limit:
            return
        yield item


def _settings_lines(data: bytes, limit: int = 60) -> list[str]:
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
