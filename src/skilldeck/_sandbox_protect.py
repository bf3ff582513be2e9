"""Which paths inside the sandbox's writable binds are mounted read-only again.

The workspace is writable so the model can do its work, but some of its files decide
what the *next* run trusts or what git executes: ``.skilldeck/`` (config, skills,
agents), ``.claude/`` and ``.agents/`` (skill roots), ``.git/config``, ``.git/hooks/``
and friends. A sandboxed command that could rewrite them would widen its own
permissions for the next run, or plant code that the user's own ``git`` runs outside
any sandbox. Each such path that *exists* is re-bound read-only after the writable
binds (``--ro-bind-try``), so writes, renames and deletes fail (a mount point cannot
be unlinked or renamed over).

What this does not cover, on purpose (creating a mount point would leave an empty
file or folder behind on the host):

* a control path that does not exist yet (``mkdir .skilldeck`` works inside): the
  workspace-trust layer (``skilldeck.trust``) ignores a config the user has not
  trusted (by content hash) and any skill or agent root that did not exist when the
  folder was trusted, so a created one does not take effect;
  a ``git init`` in a folder that is not a repository creates a ``.git`` the
  ``Bash`` tool's git then runs with neutralised config (``skilldeck._gitguard``);
* a control path that is a symlink: its target is protected, the link itself can be
  replaced;
* repositories nested deeper than one level below a root.

skilldeck's own home (``$SKILLDECK_HOME``, default ``~/.skilldeck``: the trust
store, trusted code-skill digests, user config and skills, sessions) is protected
whenever a writable root holds it, e.g. when skilldeck runs in ``~``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["protected_paths"]

#: folders at the top of a writable root that hold what skilldeck (or another agent
#: runtime) trusts; the file tools refuse them too (tools/fs/_guard.py)
CONTROL_DIRS = (".skilldeck", ".claude", ".agents")
#: entries of a ``.git`` folder that make git run commands or define what it runs
GIT_CONTROL = ("config", "config.worktree", "hooks", "modules")
#: files of a home folder that run code or configure trust, protected when a writable
#: root contains the home folder (a workspace *is* ``~`` more often than one thinks)
HOME_CONTROL = (
    ".skilldeck",
    ".claude",
    ".agents",
    ".gitconfig",
    ".config/git",
    ".ssh",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
)
#: how many sub-folders of a root are looked at for a nested repository
MAX_CHILDREN = 256


def _git_entries(repo: Path) -> list[Path]:
    """The control entries of ``repo/.git``: the ``.git`` file itself when it is a
    pointer (``gitdir: …`` of a worktree or submodule), else what lives in it."""
    dot_git = repo / ".git"
    if dot_git.is_symlink() or dot_git.is_file():
        return [dot_git]
    if not dot_git.is_dir():
        return []
    return [dot_git / name for name in GIT_CONTROL]


def _children(root: Path) -> Iterable[Path]:
    """Up to :data:`MAX_CHILDREN` real sub-folders of ``root`` (no symlinks)."""
    try:
        with os.scandir(root) as entries:
            count = 0
            for entry in entries:
                if count >= MAX_CHILDREN:
                    return
                try:
                    if entry.is_dir(follow_symlinks=False) and entry.name != ".git":
                        count += 1
                        yield Path(entry.path)
                except OSError:
                    continue
    except OSError:
        return


def skilldeck_home() -> Path:
    """``$SKILLDECK_HOME`` or ``~/.skilldeck``, as :func:`skilldeck.config.skilldeck_home`
    says (repeated here: this module sits below config)."""
    env = os.environ.get("SKILLDECK_HOME")
    return Path(env).expanduser() if env else Path.home() / ".skilldeck"


def _skilldeck_home_paths(real_roots: Sequence[Path]) -> list[Path]:
    """skilldeck's own home — the trust store, trusted code-skill digests, the user
    config and skills, the sessions a resume rebuilds its settings from — whenever a
    writable root holds it: the folder itself when it lies inside a root, its entries
    when it *is* a root (a folder cannot be re-bound over the root bound at it).
    A home that does not exist yet is created (0700, as skilldeck would create it)
    so that a sandboxed command cannot create it, with a trust store, first."""
    home = Path(os.path.realpath(skilldeck_home()))
    if any(r in home.parents for r in real_roots):
        with contextlib.suppress(OSError):
            home.mkdir(mode=0o700, parents=True, exist_ok=True)
        return [home]
    if home in real_roots:
        return list(_entries(home))
    return []


def _entries(folder: Path) -> Iterable[Path]:
    """Up to :data:`MAX_CHILDREN` entries of ``folder``, of any kind."""
    try:
        with os.scandir(folder) as entries:
            return [Path(e.path) for _, e in zip(range(MAX_CHILDREN), entries, strict=False)]
    except OSError:
        return []


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def protected_paths(roots: Sequence[Path]) -> list[str]:
    """Existing control paths under the writable ``roots`` (resolved, deduplicated, in
    a stable order), each to be re-bound read-only inside the sandbox."""
    real_roots = [Path(os.path.realpath(r)) for r in roots]
    found: list[Path] = []
    for root in real_roots:
        found += [root / name for name in CONTROL_DIRS]
        found += _git_entries(root)
        for child in _children(root):
            found += _git_entries(child)
    home = Path(os.path.realpath(Path.home()))
    if _inside(home, real_roots):
        found += [home / name for name in HOME_CONTROL]
    found += _skilldeck_home_paths(real_roots)
    out: dict[str, None] = {}
    for path in found:
        if os.path.lexists(path):
            out.setdefault(str(path), None)
    return list(out)
