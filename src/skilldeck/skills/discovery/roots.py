"""Skill roots: which folders discovery scans, and in which precedence.

Roots, highest precedence first (see ``docs/architecture.md``):

1. explicit roots (``--root``), in the order given
2. workspace: ``./.skilldeck/skills``, ``./.agents/skills``, ``./.claude/skills`` —
   only when the workspace is trusted and the root existed when it was trusted
   (``settings.workspace_trust.accepts``, see
   :mod:`skilldeck.trust`): whoever writes the folder, a cloned repository or a model,
   must not choose the skills (and the code) a run loads
3. user: ``$SKILLDECK_HOME/skills``, ``~/.agents/skills``, ``~/.claude/skills``
4. ``settings.skills.dirs`` in listed order
5. bundled: ``skilldeck/bundled/skills``

(Skills registered in code outrank all of them; that is the registry's business.)

Explicit roots may be given as ``str`` or ``os.PathLike`` items, or as one path on its
own (:func:`root_paths`). A relative one (``--root``, ``roots=[...]`` or
``skills.dirs``) is resolved against ``settings.workspace``, which is the current
directory unless the settings were loaded for another workspace
(``load_settings(workspace=...)``); ``~`` is expanded.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from skilldeck.settings import FrozenRecord
from skilldeck.skills.model.skill import SkillSource
from skilldeck.trust import WORKSPACE_SKILL_ROOTS

if TYPE_CHECKING:
    from skilldeck.config import Settings

__all__ = ["Root", "RootPaths", "bundled_root", "resolve_roots", "root_paths"]

#: What ``roots=`` accepts: paths as ``str`` or ``os.PathLike``, in a list or alone.
RootPaths: TypeAlias = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]


class Root(FrozenRecord):
    """One folder to scan, and where it sits in the precedence order. Immutable,
    compared and hashed by value, as the frozen ``@dataclass`` it was (a
    :class:`~skilldeck.settings.FrozenRecord`: a dataclass's generated methods cost a
    millisecond at import: ``python -m bench startup`` and ``python -m bench
    discovery``, figure ``cli_list_json_warm``)."""

    __slots__ = ("explicit", "path", "source")
    __match_args__ = ("path", "source", "explicit")

    path: Path
    source: SkillSource
    #: ``--root`` and configured dirs must exist; default roots may be absent.
    explicit: bool

    def __init__(self, path: Path, source: SkillSource, explicit: bool = False) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "explicit", explicit)


def bundled_root() -> Path:
    """The skills shipped inside the package (``skilldeck/bundled/skills``)."""
    return Path(__file__).resolve().parents[2] / "bundled" / "skills"


def root_paths(roots: RootPaths) -> tuple[Path, ...]:
    """``roots`` as a tuple of paths: ``str`` and ``os.PathLike`` items are taken, and
    one path given alone (``roots="skills"``, ``roots=Path("skills")``) is one root,
    never its characters. Anything else is refused with a TypeError naming the item."""
    if isinstance(roots, str | os.PathLike):
        return (Path(roots),)
    if isinstance(roots, bytes) or not isinstance(roots, Iterable):
        raise TypeError(
            f"roots must be a path or a list of paths (str or os.PathLike), "
            f"not {type(roots).__name__}: {roots!r:.80}."
        )
    paths: list[Path] = []
    for item in roots:
        if not isinstance(item, str | os.PathLike) or isinstance(item, bytes):
            raise TypeError(
                f"roots holds {item!r:.80} ({type(item).__name__}); every root must be "
                "a path: a str or an os.PathLike such as pathlib.Path."
            )
        paths.append(Path(item))
    return tuple(paths)


def resolve_roots(
    settings: Settings, *, roots: RootPaths = (), no_defaults: bool = False
) -> list[Root]:
    """All roots in precedence order, duplicates (same real folder) removed. A
    relative explicit root is resolved against ``settings.workspace``."""
    workspace = settings.workspace
    found = [
        Root(_absolute(p, workspace), SkillSource.ROOT, explicit=True) for p in root_paths(roots)
    ]
    if not no_defaults:
        found += _default_roots(settings)
    unique: list[Root] = []
    seen: set[str] = set()
    for root in found:
        real = os.path.realpath(root.path)
        if real not in seen:
            seen.add(real)
            unique.append(root)
    return unique


def _default_roots(settings: Settings) -> list[Root]:
    """Workspace (when trusted), user, configured and bundled roots, in that order."""
    workspace, home = settings.workspace, Path.home()
    # a trusted folder's roots that existed at trust time (skilldeck.trust)
    trust = settings.workspace_trust
    found = [
        Root(workspace / sub, SkillSource.WORKSPACE)
        for sub in WORKSPACE_SKILL_ROOTS
        if trust.accepts(sub)
    ]
    found += [
        Root(settings.home / "skills", SkillSource.USER),
        Root(home / ".agents" / "skills", SkillSource.USER),
        Root(home / ".claude" / "skills", SkillSource.USER),
    ]
    found += [
        Root(_absolute(p, workspace), SkillSource.EXTRA, explicit=True)
        for p in settings.skills.dirs
    ]
    found.append(Root(bundled_root(), SkillSource.BUNDLED))
    return found


def _absolute(path: Path, base: Path) -> Path:
    path = path.expanduser()
    return path if path.is_absolute() else base / path
