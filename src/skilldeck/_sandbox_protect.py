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
  workspace-trust layer (``skilldeck.trust``) ignores workspace config and skills
  the user has not trusted, by content hash, so a created one does not take effect;
  a ``git init`` in a folder that is not a repository creates a ``.git`` the
  ``Bash`` tool's git then runs with neutralised config (``skilldeck._gitguard``);
* a control path that is a symlink: its target is protected, the link itself can be
  replaced;
* repositories nested deeper than one level below a root.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["protected_paths"]

#: folders at the top of a writable root that hold what skilldeck (or another agent
#: runtime) trusts; the file tools refuse them too (tools/_guard.py)
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


def _homes() -> list[Path]:
    homes = [Path.home()]
    env = os.environ.get("SKILLDECK_HOME")
    if env:
        homes.append(Path(env).expanduser())
    return [Path(os.path.realpath(h)) for h in homes]


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
    home, *extra_homes = _homes()
    if _inside(home, real_roots):
        found += [home / name for name in HOME_CONTROL]
    found += [h for h in extra_homes if _inside(h, real_roots)]
    out: dict[str, None] = {}
    for path in found:
        if os.path.lexists(path):
            out.setdefault(str(path), None)
    return list(out)
