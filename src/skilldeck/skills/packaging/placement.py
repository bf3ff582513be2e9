"""Putting a staged skill in place, and taking an installed one out.

The last step of :func:`skilldeck.skills.packaging.package.install`: rename the
staged folder over the target (an existing copy moves to ``<scope dir>/backups``
first, and comes back if anything after fails) and write the lock entry under the
lock file's advisory lock. :func:`uninstall` is the reverse, for skills skilldeck
installed (a lock entry) only.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from skilldeck.config import Settings
from skilldeck.errors import PackageError
from skilldeck.skills.model.spec import unsafe_name_reason
from skilldeck.skills.packaging.lockfile import (
    LOCK_FILENAME,
    LockEntry,
    Scope,
    drop_entry,
    guarded,
    lock_path,
    locked,
    recorded_names,
    skills_root,
)
from skilldeck.skills.packaging.unpack import Staged
from skilldeck.trust import accept_created_root, assess_workspace

__all__ = ["commit_and_record", "prepared_root", "safe_name", "uninstall", "workspace_note"]

#: the workspace install root, as :mod:`skilldeck.trust` names it
_WORKSPACE_ROOT = ".skilldeck/skills"
#: the advisory-lock file :func:`~.lockfile.locked` keeps next to the lock file
_GUARD = f".{LOCK_FILENAME}.guard"


@contextlib.contextmanager
def prepared_root(settings: Settings, scope: Scope) -> Iterator[Path]:
    """``scope``'s skills root, created if missing, for the length of one install.

    What this created is removed again (when still empty) if the install fails: a
    refused install must leave no ``./.skilldeck`` behind, or every later command in
    the folder warns about an untrusted workspace's skills folder. Creating the
    workspace root also records it in a trusted folder's store entry (else every run
    would ignore it as a folder that "appeared after you trusted this folder") — only
    once the install succeeded, so no record ever names a root that is not there.
    """
    root = skills_root(settings, scope)
    created = _make_folders(root)
    try:
        yield root
    except BaseException:
        _remove_empty(created)
        raise
    if scope == "workspace" and root in created:
        accept_created_root(settings.workspace, settings.home, _WORKSPACE_ROOT)


def _make_folders(root: Path) -> list[Path]:
    """Create ``root`` and its missing parents; the folders *this* call created,
    deepest first. One another install created meanwhile is not ours (its ``mkdir``
    won), so a failure here never removes it. A dangling symlink or a file in the
    way is an error naming it, not a bare "File exists"."""
    missing = list(itertools.takewhile(lambda d: not d.is_dir(), (root, *root.parents)))
    made: list[Path] = []
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except FileExistsError:
            if not folder.is_dir():
                _remove_empty(made[::-1])
                raise _in_the_way(folder) from None
            continue  # another install made it first
        except OSError as e:
            _remove_empty(made[::-1])
            raise PackageError(
                f"Cannot create {folder}: {e.strerror or e}; fix its parent folder's "
                "permissions (or install with the other --scope)."
            ) from e
        made.append(folder)
    return made[::-1]


def _in_the_way(folder: Path) -> PackageError:
    if folder.is_symlink():
        return PackageError(
            f"{folder} is a symlink to {os.readlink(folder)}, which does not exist (or is "
            f"not a folder); remove the link (`rm {folder}`) or create the folder it "
            "points to, then install again."
        )
    return PackageError(
        f"{folder} exists and is not a folder; move it out of the way, then install again."
    )


def _remove_empty(created: list[Path]) -> None:
    """Remove the folders in ``created`` (deepest first) that are empty; a lock guard
    left in one (with no lock file beside it) goes first. Nothing is removed while
    another install stages a skill in the scope's folder (its ``.install-*`` folder
    is there): the skills root it is about to move into must stay."""
    if created and any(created[0].parent.glob(".install-*")):
        return
    for folder in created:
        guard = folder / _GUARD
        if guard.is_file() and not (folder / LOCK_FILENAME).exists():
            guard.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            folder.rmdir()


def workspace_note(settings: Settings) -> str | None:
    """One line when skills installed in the workspace scope will not load (an
    untrusted folder, or a skills folder its trust does not cover), with the fix."""
    assessment = assess_workspace(settings.workspace, settings.home)
    if assessment.accepts(_WORKSPACE_ROOT):
        return None
    where = settings.workspace
    if assessment.trusted:
        return (
            f"{_WORKSPACE_ROOT} appeared after you trusted {where}, so its skills do not "
            f"load yet; review it, then run `skilldeck trust {where}` again."
        )
    return (
        f"{where} is not trusted, so workspace skills do not load; run "
        f"`skilldeck trust {where}` (or install with --scope user)."
    )


def commit_and_record(
    staged: Staged, entry: LockEntry, root: Path, *, settings: Settings, scope: Scope, force: bool
) -> Path | None:
    """Move the staged folder into place and write its lock entry, or undo the move."""
    target = root / entry.name
    with locked(lock_path(settings, scope)) as lock:
        root.mkdir(exist_ok=True)  # a concurrent refused install may have removed it
        backup = _commit(staged.folder, target, force=force, backups=root.parent / "backups")
        lock.skills[entry.name] = entry
        try:
            lock.write()
        except OSError as e:
            _rollback(target, staged.folder, backup)
            raise PackageError(f"Cannot write {lock.path}: {e}; install rolled back.") from e
    return backup


def safe_name(name: str) -> str:
    reason = unsafe_name_reason(name)
    if reason is not None:
        raise PackageError(
            f"Skill name {name!r} cannot be used as a folder name: {reason}; refused."
        )
    return name


def _commit(staged: Path, target: Path, *, force: bool, backups: Path) -> Path | None:
    """Rename ``staged`` to ``target``; an existing target moves to ``backups`` first."""
    backup: Path | None = None
    if target.exists() or target.is_symlink():
        if not force:
            raise PackageError(
                f"Skill {target.name!r} is already installed at {target}. Use --force to "
                "replace it (the current copy is kept as a backup)."
            )
        backups.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        backup = backups / f"{target.name}.bak-{stamp}"
        if backup.exists():
            backup = backups / f"{target.name}.bak-{stamp}-{uuid.uuid4().hex[:6]}"
        os.replace(target, backup)
    try:
        os.replace(staged, target)
    except OSError as e:
        if backup is not None:
            os.replace(backup, target)
        raise PackageError(f"Cannot move the skill into {target}: {e}.") from e
    return backup


def _rollback(target: Path, trash: Path, backup: Path | None) -> None:
    os.replace(target, trash)
    if backup is not None:
        os.replace(backup, target)


# ---- uninstall ------------------------------------------------------------------------


def uninstall(name: str, *, scope: Scope = "workspace", settings: Settings) -> Path:
    """Remove a skill installed by :func:`install` and its lock entry; returns the path.

    Skills skilldeck did not install (no lock entry) are left alone: deleting a
    hand-written skill by a typo would be unrecoverable. A malformed entry — this
    skill's or another's — does not stop it: only this skill's entry is taken out,
    and the other entries stay as they were, byte for byte.
    """
    safe_name(name)
    root = skills_root(settings, scope)
    target = root / name
    path = lock_path(settings, scope)
    _must_be_recorded(name, recorded_names(path), path, scope)  # before the guard
    with guarded(path):  # is created: a no-op writes nothing
        _must_be_recorded(name, recorded_names(path), path, scope)  # another may have won
        trash: Path | None = None
        if target.exists() or target.is_symlink():
            trash = root.parent / f".uninstall-{name}-{uuid.uuid4().hex[:8]}"
            os.replace(target, trash)
        try:
            drop_entry(path, name)
        except (OSError, PackageError) as e:
            if trash is not None:
                os.replace(trash, target)
            if isinstance(e, PackageError):
                raise
            raise PackageError(f"Cannot write {path}: {e}; nothing was removed.") from e
    if trash is not None:
        if trash.is_symlink():
            trash.unlink()
        else:
            shutil.rmtree(trash, ignore_errors=True)
    return target


def _must_be_recorded(name: str, names: set[str], path: Path, scope: Scope) -> None:
    if name not in names:
        raise PackageError(
            f"Skill {name!r} is not installed in the {scope} scope (no entry in "
            f"{path}); skilldeck only removes skills it installed."
        )
