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

The store also records which workspace control roots (``.skilldeck/skills``,
``.agents/skills``, ``.claude/skills``, ``.skilldeck/agents``) existed when you
trusted the folder. A root that appears later is ignored, with the same one warning
line, until you trust the folder again (which shows what it holds): the sandbox
re-binds only *existing* control folders read-only, so a sandboxed command can still
``mkdir -p .claude/skills/x`` in a folder that had no ``.claude``, and a skill planted
there could pre-approve tools through ``allowed-tools``. Deciding this costs one
``stat`` per root; skill contents are not hashed (an existing root is protected by
the sandbox and the file tools, not by this check).

An untrusted workspace's config file and its workspace skill roots
(``.skilldeck/skills``, ``.agents/skills``, ``.claude/skills``) and agent definitions
(``.skilldeck/agents``) are ignored as a whole, with one warning line saying what and
how to trust. ``SKILLDECK_TRUST_WORKSPACE=1`` trusts the workspace for one process
(CI and tests; a model cannot set skilldeck's own environment; a folder that is in
the store keeps only the roots recorded there), ``=0`` distrusts it even when
stored; neither applies to ``/`` or your home folder, which are never trusted without
``skilldeck trust`` (and that refuses them: run in a project folder).

This module sits at the bottom layer (standard library only, no pydantic): the CLI's
fast path uses it too. What an untrusted folder loses, in words (the one warning
line, what trusting it would let in), is :mod:`skilldeck._trust_text`.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from skilldeck._atomic import atomic_write_text
from skilldeck.errors import ConfigError

__all__ = [
    "CONFIG_FILENAME",
    "CONTROL_ROOTS",
    "TRUST_ENV",
    "WORKSPACE_DIRNAME",
    "WORKSPACE_SKILL_ROOTS",
    "Assessment",
    "TrustState",
    "accept_created_root",
    "assess_workspace",
    "list_trusted",
    "present_roots",
    "revoke_folder",
    "store_path",
    "trust_folder",
]

CONFIG_FILENAME = "config.toml"
WORKSPACE_DIRNAME = ".skilldeck"
WORKSPACE_SKILL_ROOTS = (".skilldeck/skills", ".agents/skills", ".claude/skills")
WORKSPACE_AGENTS = ".skilldeck/agents"
#: every workspace folder whose content the next run loads, in precedence order
CONTROL_ROOTS = (*WORKSPACE_SKILL_ROOTS, WORKSPACE_AGENTS)
TRUST_ENV = "SKILLDECK_TRUST_WORKSPACE"
STORE_NAME = "trusted-folders.json"
#: a config or store larger than this is not read (a workspace config is a few lines)
_MAX_BYTES = 1024 * 1024


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
    #: the :data:`CONTROL_ROOTS` the store recorded at trust time (None: no record
    #: restricts them, as for a folder trusted by the environment and never stored)
    roots: frozenset[str] | None = None
    #: the :data:`CONTROL_ROOTS` that were folders when this assessment was made
    present: tuple[str, ...] = ()

    @property
    def trusted(self) -> bool:
        return self.state is TrustState.TRUSTED

    def accepts(self, root: str) -> bool:
        """Whether the loaders may read the workspace root ``root`` (one of
        :data:`CONTROL_ROOTS`): the folder is trusted and the root was recorded at
        trust time (or no record restricts it)."""
        return self.trusted and (self.roots is None or root in self.roots)

    @property
    def new_roots(self) -> list[str]:
        """Present roots a trusted folder ignores: they appeared since trust."""
        return [r for r in self.present if self.trusted and not self.accepts(r)]

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


def present_roots(workspace: Path) -> tuple[str, ...]:
    """The :data:`CONTROL_ROOTS` of ``workspace`` that are folders now (one ``stat``
    each, following symlinks as the loaders do)."""
    return tuple(sub for sub in CONTROL_ROOTS if os.path.isdir(workspace / sub))


def _recorded_roots(record: dict[str, Any] | None) -> frozenset[str] | None:
    """The roots a store record accepts: None without a record; none at all for a
    record without a well-formed ``roots`` list (written before roots were
    recorded, or tampered with): fail closed, ``skilldeck trust`` records them."""
    if record is None:
        return None
    roots = record.get("roots")
    if not isinstance(roots, list):
        return frozenset()
    return frozenset(r for r in roots if isinstance(r, str) and r in CONTROL_ROOTS)


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
    present = present_roots(workspace)
    if problem:
        return Assessment(workspace, TrustState.UNREADABLE, None, None, problem, present=present)
    record = _load_store(home).get(str(workspace))
    roots = _recorded_roots(record)
    choice, reason = (trust, "argument") if trust is not None else (_env_choice(workspace), "")
    if choice is not None:
        state = TrustState.TRUSTED if choice else TrustState.UNTRUSTED
        return Assessment(workspace, state, data, digest, reason or "environment", roots, present)
    if record is None:
        state = TrustState.UNTRUSTED
    elif record.get("config_sha256") != digest:
        state = TrustState.CHANGED
    else:
        state = TrustState.TRUSTED
    return Assessment(workspace, state, data, digest, "store", roots, present)


# ---- the store ------------------------------------------------------------------


def _load_store(home: Path, *, strict: bool = False) -> dict[str, dict[str, Any]]:
    """Trusted folders by real path. A store that is missing trusts nothing; one that
    is not a regular file of this user, writable by others, too large or not the
    expected JSON trusts nothing too — and, ``strict`` (before a write or a listing),
    is a ConfigError: read as empty, the next write would drop every folder in it."""
    path = store_path(home)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        return {}
    except OSError as e:
        return _unusable(path, e.strerror or str(e), strict)
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return _unusable(path, "not a regular file of yours", strict)
        if info.st_mode & 0o022:
            return _unusable(path, "writable by others (chmod 600 it if you wrote it)", strict)
        if info.st_size > _MAX_BYTES:
            return _unusable(path, f"larger than {_MAX_BYTES} bytes", strict)
        raw = fh.read(_MAX_BYTES)
    try:
        folders = json.loads(raw.decode("utf-8")).get("folders")
    except (ValueError, UnicodeDecodeError, AttributeError):
        return _unusable(path, "not the JSON skilldeck writes", strict)
    if not isinstance(folders, dict):
        return _unusable(path, 'no "folders" table', strict)
    return {str(k): v for k, v in folders.items() if isinstance(v, dict)}


def _unusable(path: Path, why: str, strict: bool) -> dict[str, dict[str, Any]]:
    if strict:
        raise ConfigError(
            f"The trust store {path} cannot be used: {why}. Move it aside (its folders "
            "must then be trusted again with `skilldeck trust FOLDER`) or restore it.",
            path=path,
        )
    return {}


def _save_store(home: Path, folders: dict[str, dict[str, Any]]) -> None:
    path = store_path(home)
    text = json.dumps({"version": 1, "folders": folders}, indent=2, sort_keys=True) + "\n"
    atomic_write_text(path, text)  # a mkstemp file: created 0600
    os.chmod(path, 0o600)


def trust_folder(workspace: Path, home: Path, *, expect: Assessment | None = None) -> Assessment:
    """Record ``workspace`` (its real path) as trusted with its config's digest and
    the control roots present now. Refuses ``/`` and the home folder (ConfigError
    saying why and what to do), and, given ``expect`` (what a person was shown), a
    config that changed or a control root that appeared since."""
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
    present = present_roots(real)
    _check_unchanged(real, expect, _digest(data), present)
    import datetime as dt

    folders = _load_store(home, strict=True)
    folders[str(real)] = {
        "config_sha256": _digest(data),
        "roots": list(present),
        "trusted_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    _save_store(home, folders)
    return Assessment(
        real, TrustState.TRUSTED, data, _digest(data), "store", frozenset(present), present
    )


def _check_unchanged(
    real: Path, expect: Assessment | None, digest: str | None, present: tuple[str, ...]
) -> None:
    """ConfigError when the folder is no longer what ``expect`` showed a person."""
    if expect is None:
        return
    if expect.digest != digest:
        raise ConfigError(
            f"{real / WORKSPACE_DIRNAME / CONFIG_FILENAME} changed while you were "
            "reading it; nothing was trusted. Review it again.",
            path=real,
        )
    appeared = [r for r in present if r not in expect.present]
    if appeared:
        raise ConfigError(
            f"{real}: {', '.join(appeared)} appeared while you were reviewing the "
            "folder; nothing was trusted. Review it again.",
            path=real,
        )


def accept_created_root(workspace: Path, home: Path, root: str) -> bool:
    """Add ``root`` to a stored folder's recorded roots because skilldeck itself just
    created it at the user's command (``skills install``): a model that could run
    that could write the store anyway. Re-reads the store; changes nothing unless the
    folder is stored with its config unchanged. True when ``root`` is now accepted."""
    real = os.path.realpath(workspace)
    folders = _load_store(home)  # (unusable: no record, nothing written; the install stands)
    record = folders.get(real)
    data, problem = read_config(Path(real), home)
    if root not in CONTROL_ROOTS or record is None or problem:
        return False
    if record.get("config_sha256") != _digest(data):
        return False
    accepted = _recorded_roots(record) or frozenset()
    if root not in accepted:
        record["roots"] = [r for r in CONTROL_ROOTS if r in accepted or r == root]
        _save_store(home, folders)
    return True


def revoke_folder(workspace: Path, home: Path) -> bool:
    """Forget ``workspace``; False when it was not trusted."""
    folders = _load_store(home, strict=True)
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
    for key, record in sorted(_load_store(home, strict=True).items()):
        folder, state = Path(key), None
        if folder.is_dir():
            data, problem = read_config(folder, home)
            same = not problem and record.get("config_sha256") == _digest(data)
            accepted = _recorded_roots(record) or frozenset()
            same = same and set(present_roots(folder)) <= accepted
            state = TrustState.TRUSTED if same else TrustState.CHANGED
        found.append((folder, str(record.get("trusted_at", "")), state))
    return found
