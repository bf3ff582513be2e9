"""Path confinement for file tools, and race-safe open/write helpers.

Two layers, because checking a path and then opening it is a race:

1. :func:`confine` resolves a path the model gave (relative to the workspace,
   symlinks resolved) and refuses anything outside the allowed roots. This gives the
   model a clear error before any I/O.
2. :func:`open_regular` and :func:`write_atomic` then *re-walk* the resolved path one
   component at a time from its root with ``openat(..., O_NOFOLLOW)``. A component
   swapped for a symlink after the check fails the walk instead of being followed,
   and the opened descriptor's real location is re-checked through
   ``/proc/self/fd`` (which also catches a directory renamed out of the root while
   we held it).

Hard links cannot be resolved backwards: a name inside the workspace may share its
inode with a file outside. skilldeck refuses to read or write a regular file whose
link count is above one, because it cannot prove the other names lie inside the
roots. (Writes replace the name atomically, so they never modify the other link —
but the prior Read would leak its contents, so both are refused.) Copy the file to
break the link if this is in the way.

Roots are ``ctx.roots`` (read/write). Reads are also allowed under
``ctx.read_roots`` and the folders of the skills in ``ctx.skills``, so a skill's
``references/`` can be Read without making it writable.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from skilldeck.errors import ToolError
from skilldeck.tools.base import ToolContext
from skilldeck.tools.fs._guard import protected_reason, refusal_message, system_spelling

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_PROC_FD = Path("/proc/self/fd")


@dataclass(frozen=True)
class OpenedFile:
    """A regular file opened race-safely: the descriptor, its real path and stat."""

    fd: int
    path: Path
    stat: os.stat_result


def allowed_roots(ctx: ToolContext, *, write: bool = False) -> list[Path]:
    """The resolved directories file tools may touch (writes: ``ctx.roots`` only)."""
    roots = list(ctx.roots)
    if not write:
        roots += list(ctx.read_roots)
        roots += _skill_folders(ctx)
    seen: dict[str, Path] = {}
    for root in roots:
        real = Path(os.path.realpath(os.path.expanduser(root)))
        seen.setdefault(str(real), real)
    return list(seen.values())


def _skill_folders(ctx: ToolContext) -> list[Path]:
    """Folders of the registry's skills: readable so their resources can be Read."""
    if ctx.skills is None:
        return []
    try:
        return [Path(skill.folder) for skill in ctx.skills.list()]
    except Exception:  # a broken registry must not break Read of workspace files
        return []


def is_inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _root_for(real: Path, roots: list[Path]) -> Path | None:
    """The deepest allowed root holding ``real`` (the shortest walk)."""
    holding = [r for r in roots if is_inside(real, r)]
    return max(holding, key=lambda r: len(r.parts)) if holding else None


def _describe_roots(ctx: ToolContext, *, write: bool) -> str:
    rw = allowed_roots(ctx, write=True)
    text = ", ".join(str(r) for r in rw)
    if not write:
        extra = [r for r in allowed_roots(ctx) if r not in rw]
        if extra:
            text += f" (read-only: {', '.join(str(r) for r in extra[:5])}"
            text += f" and {len(extra) - 5} more)" if len(extra) > 5 else ")"
    return text


def confine(path: str, ctx: ToolContext, *, must_exist: bool = False, write: bool = False) -> Path:
    """Resolve ``path`` for a file tool and refuse it unless it lies inside the roots.

    Relative paths resolve against ``ctx.workspace`` (not the Bash cwd), ``~`` is
    expanded, and symlinks are resolved before the check, so ``..``, absolute paths
    elsewhere and links pointing outside are all refused with a message naming the
    allowed roots. Returns the resolved path.
    """
    if not isinstance(path, str) or not path.strip():
        raise ToolError("A file path is required (got an empty string).")
    if "\x00" in path:
        raise ToolError(f"Invalid path {path!r}: it contains a NUL byte.")
    raw = Path(os.path.expanduser(path))
    candidate = raw if raw.is_absolute() else Path(ctx.workspace) / raw
    roots = allowed_roots(ctx, write=write)
    tree = system_spelling(str(candidate), [*roots, *(Path(r) for r in ctx.roots)])
    if tree is not None:
        raise ToolError(
            f"Path {path!r} goes through {tree}, which file tools never use (the same file "
            f"has many names there). Name the file by its real path under: "
            f"{_describe_roots(ctx, write=write)}."
        )
    try:
        real = Path(os.path.realpath(candidate))
    except (OSError, ValueError) as e:
        raise ToolError(f"Cannot resolve path {path!r}: {e}") from e
    if _root_for(real, roots) is None:
        verb = "write to" if write else "access"
        via = f" (it resolves to {real})" if str(real) != os.path.normpath(candidate) else ""
        raise ToolError(
            f"Path {path!r} is outside the allowed directories{via}. File tools may only "
            f"{verb} files under: {_describe_roots(ctx, write=write)}."
        )
    if write:
        reason = protected_reason(real, roots, ctx)
        if reason is not None:
            raise ToolError(refusal_message(real, reason))
    if must_exist and not os.path.lexists(real):
        raise ToolError(f"File does not exist: {real}.{_suggest(real)}")
    return real


def _suggest(missing: Path) -> str:
    """A "did you mean" hint from the names next to a missing file."""
    try:
        names = os.listdir(missing.parent)
    except OSError:
        return f" Working directory for relative paths: {missing.parent}."
    close = difflib.get_close_matches(missing.name, names, n=3, cutoff=0.6)
    return f" Did you mean: {', '.join(str(missing.parent / n) for n in close)}?" if close else ""


# ---- race-safe descriptors -----------------------------------------------------------


def _walk_to_parent(real: Path, ctx: ToolContext, *, write: bool, create: bool) -> tuple[int, str]:
    """Open the parent directory of ``real`` by walking from its root with O_NOFOLLOW.

    Returns (directory fd, final name). With ``create``, missing directories are made
    on the way (each relative to the fd of its parent, so the walk stays race-free).
    """
    roots = allowed_roots(ctx, write=write)
    root = _root_for(real, roots)
    if root is None:  # confine() was not called, or the roots changed
        raise ToolError(f"Path {real} is outside the allowed directories.")
    parts = real.relative_to(root).parts
    if not parts:
        raise ToolError(f"{real} is a directory, not a file.")
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise ToolError(f"Allowed directory {root} cannot be opened ({e.strerror}).") from e
    try:
        for part in parts[:-1]:
            child = _step_into(fd, part, real, create=create)
            os.close(fd)
            fd = child
        _verify_fd(fd, ctx, write=write, expected=real.parent, name=parts[-1])
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def _step_into(fd: int, part: str, real: Path, *, create: bool) -> int:
    """Open directory ``part`` under ``fd``; never follows a symlink."""
    try:
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=fd)
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError as e:
        raise ToolError(f"File does not exist: {real}.") from e
    except OSError as e:
        try:
            is_link = stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode)
        except OSError:
            is_link = False
        if is_link or e.errno == errno.ELOOP:
            raise ToolError(
                f"Refusing {real}: the component {part!r} is a symbolic link (it was swapped "
                "in after the path was checked); nothing was opened."
            ) from e
        raise ToolError(f"Cannot open {real}: {part!r} is not a directory ({e.strerror}).") from e
    return child


def _verify_fd(fd: int, ctx: ToolContext, *, write: bool, expected: Path, name: str = "") -> None:
    """Re-check where an open descriptor really is (catches renames out of a root and,
    for a write, a control folder renamed into the path: ``name`` is the entry the
    caller will create in the directory ``fd``)."""
    try:
        actual = Path(os.readlink(_PROC_FD / str(fd)))
    except OSError:  # no /proc: compare the inode at the expected path instead
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(expected))
        except OSError:
            same = False
        if not same:
            raise ToolError(f"Refusing {expected}: it changed while it was being opened.") from None
        return
    roots = allowed_roots(ctx, write=write)
    if _root_for(actual, roots) is None:
        raise ToolError(f"Refusing {expected}: it now lies outside the allowed directories.")
    if write:
        reason = protected_reason(actual / name if name else actual, roots, ctx)
        if reason is not None:
            raise ToolError(refusal_message(actual / name if name else actual, reason))


def _check_regular(st: os.stat_result, real: Path) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(f"{real} is a directory, not a file. Use Glob or Bash `ls` to list it.")
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(f"{real} is not a regular file (a device, socket or FIFO); refusing.")
    if st.st_nlink > 1:
        raise ToolError(
            f"Refusing {real}: it has {st.st_nlink} hard links, and skilldeck cannot prove the "
            "other names lie inside the allowed directories. Copy the file to break the link."
        )


def open_regular(path: Path, ctx: ToolContext) -> OpenedFile:
    """Open an already-confined path for reading; refuse links, non-files, hard links.

    The caller owns ``fd`` (wrap it with ``os.fdopen``). FIFOs are opened
    non-blocking so they are refused instead of hanging the tool.
    """
    dfd, name = _walk_to_parent(path, ctx, write=False, create=False)
    try:
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(name, flags, dir_fd=dfd)
    except FileNotFoundError as e:
        raise ToolError(f"File does not exist: {path}.{_suggest(path)}") from e
    except IsADirectoryError as e:
        raise ToolError(f"{path} is a directory, not a file.") from e
    except OSError as e:
        raise ToolError(
            f"Refusing {path}: it is a symbolic link or cannot be opened ({e.strerror})."
        ) from e
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        _check_regular(st, path)
        _verify_fd(fd, ctx, write=False, expected=path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return OpenedFile(fd=fd, path=path, stat=st)


def read_bytes(path: Path, ctx: ToolContext) -> tuple[bytes, os.stat_result]:
    """The whole content of a confined regular file, read race-safely."""
    opened = open_regular(path, ctx)
    with os.fdopen(opened.fd, "rb") as fh:
        return fh.read(), opened.stat


def stat_existing(path: Path, ctx: ToolContext, *, write: bool) -> os.stat_result | None:
    """lstat of ``path`` inside its parent (no link following); None when absent."""
    try:
        dfd, name = _walk_to_parent(path, ctx, write=write, create=False)
    except ToolError:
        if not os.path.lexists(path):
            return None
        raise
    try:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    finally:
        os.close(dfd)


def write_atomic(path: Path, ctx: ToolContext, data: bytes) -> tuple[os.stat_result, bool]:
    """Write ``data`` to a confined path atomically (temp file + rename in the parent).

    Missing parent directories are created. An existing target must be a regular
    file with one link; its permission bits are kept. Returns (new stat, created).
    """
    dfd, name = _walk_to_parent(path, ctx, write=True, create=True)
    try:
        try:
            old: os.stat_result | None = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None:
            if stat.S_ISLNK(old.st_mode):
                raise ToolError(f"Refusing {path}: it became a symbolic link.")
            _check_regular(old, path)
        return _replace_in(dfd, name, data, old), old is None
    finally:
        os.close(dfd)


def _replace_in(dfd: int, name: str, data: bytes, old: os.stat_result | None) -> os.stat_result:
    tmp = f".sd-{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, 0o666, dir_fd=dfd)
    try:
        with os.fdopen(fd, "wb", closefd=False) as fh:
            fh.write(data)
            fh.flush()
        if old is not None:
            os.fchmod(fd, stat.S_IMODE(old.st_mode))
        os.fsync(fd)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        return os.fstat(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        raise
    finally:
        os.close(fd)
