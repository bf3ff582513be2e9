"""Writing config files: ``skills enable`` / ``disable`` and :func:`update_config_file`.

Every write is atomic (temp file, fsync, rename: a crash leaves the old file or the
new one). Rewriting a trusted workspace's ``.skilldeck/config.toml`` changes its
digest, so from the next load that folder counts as changed — its config and skills
ignored — until ``skilldeck trust`` (docs/workspace-trust.md): :class:`Written` says
so, and the in-memory settings keep the trust they were loaded with (they already
hold that file's values).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from skilldeck._atomic import atomic_write_text
from skilldeck.settings.layers import read_toml, read_toml_text
from skilldeck.trust import Assessment, TrustState, assess_workspace

__all__ = ["Written", "record_disabled", "record_enabled", "update_config_file"]


class _SkillsPart(Protocol):
    disabled: list[str]


class _Writable(Protocol):
    """What the writes need of settings (full or light)."""

    @property
    def home(self) -> Path: ...
    @property
    def workspace(self) -> Path: ...
    @property
    def user_config_path(self) -> Path: ...
    @property
    def workspace_config_path(self) -> Path: ...
    @property
    def skills(self) -> _SkillsPart: ...


@dataclass(frozen=True, slots=True)
class Written:
    """The files a change rewrote, and the workspace's trust as it now stands."""

    paths: tuple[Path, ...]
    #: a stored trust the rewrite invalidated (None: no trusted workspace file changed)
    retrust: Assessment | None = None


def update_config_file(path: Path, updates: dict[str, Any]) -> None:
    """Deep-merge ``updates`` into the TOML file at ``path``, atomically, editing the
    file's own document (tomlkit): its comments, order and layout stay, and only the
    values that change are written (a hand-kept ``config.toml`` lost every comment
    to ``skills disable`` when the file was written anew)."""
    import tomlkit  # only writers need it; kept off every settings load

    document = tomlkit.parse(read_toml_text(path))
    _merge_into(document, _jsonable(updates))
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, tomlkit.dumps(document))


def _merge_into(table: MutableMapping[str, Any], updates: dict[str, Any]) -> None:
    """As :func:`~skilldeck.settings.layers.deep_merge`, in place: tables merge key by
    key, any other value replaces."""
    import tomlkit

    for key, value in updates.items():
        current = table.get(key)
        if isinstance(value, dict):
            if not isinstance(current, MutableMapping):
                current = table[key] = tomlkit.table()
            _merge_into(current, value)
        else:
            table[key] = _toml_value(value)


#: longer lists are converted by parsing (below); shorter ones stay on one line
_SHORT_LIST = 500


def _toml_value(value: Any) -> Any:
    """``value`` as a tomlkit item. tomlkit's own conversion of a Python list is
    quadratic (a 60,000-name ``disabled`` list took minutes in
    ``tests/stress/test_stress_crash.py``), its parser linear: a long list is parsed
    from tomli-w's text of it (one item a line)."""
    import tomlkit

    if not isinstance(value, list) or len(value) <= _SHORT_LIST:
        return tomlkit.item(value)
    import tomli_w

    return tomlkit.parse(tomli_w.dumps({"value": value}))["value"]


def record_disabled(settings: _Writable, name: str) -> Written:
    """Add ``name`` to ``skills.disabled`` in the user file (and in ``settings``)."""
    path = settings.user_config_path
    current = _disabled_in(read_toml(path))
    written: tuple[Path, ...] = ()
    if name not in current:
        update_config_file(path, {"skills": {"disabled": [*current, name]}})
        written = (path,)
    if name not in settings.skills.disabled:
        settings.skills.disabled = [*settings.skills.disabled, name]
    return Written(written)


def record_enabled(settings: _Writable, name: str) -> Written:
    """Remove ``name`` from ``skills.disabled`` in the user and the workspace file,
    wherever listed (and in ``settings``)."""
    written: list[Path] = []
    for path in (settings.user_config_path, settings.workspace_config_path):
        current = _disabled_in(read_toml(path))
        if name in current:
            update_config_file(path, {"skills": {"disabled": [n for n in current if n != name]}})
            written.append(path)
    settings.skills.disabled = [n for n in settings.skills.disabled if n != name]
    retrust = None
    if settings.workspace_config_path in written:
        now = assess_workspace(settings.workspace, settings.home)
        retrust = now if now.state is TrustState.CHANGED else None
    return Written(tuple(written), retrust)


def _disabled_in(table: dict[str, Any]) -> list[str]:
    skills = table.get("skills")
    found = skills.get("disabled") if isinstance(skills, dict) else None
    return [str(n) for n in found] if isinstance(found, list) else []


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value
