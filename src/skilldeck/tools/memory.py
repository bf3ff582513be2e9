"""The ``Memory`` tool: small Markdown notes an agent keeps between sessions.

Notes live in ``$SKILLDECK_HOME/memory/<agent>/<key>.md``. Keys are plain names
(letters, digits, ``.``, ``_``, ``-``; no separators, no ``..``), so the model can
never address a file outside that folder. Every operation works relative to a
descriptor of the agent's folder, opened with ``O_NOFOLLOW`` (a folder swapped for a
symlink is refused), and notes are opened with ``O_NOFOLLOW | O_NONBLOCK``: a planted
symlink, FIFO or hard link (whose other name may lie anywhere) is refused, and writes
go through a fresh ``O_EXCL`` temp file renamed over the note, so a planted temp file
cannot redirect them. ``MEMORY.md`` in the same folder is what the agent's system
prompt loads.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from skilldeck.errors import ToolError
from skilldeck.tools.base import Tool, ToolContext, ToolResult

_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_NOTE_BYTES = 256 * 1024


class MemoryInput(BaseModel):
    action: Literal["read", "write", "list", "delete"] = Field(
        description="read, write, list or delete a note"
    )
    key: str | None = Field(
        default=None,
        description="note name, e.g. 'project-conventions' (stored as <key>.md); "
        "use 'MEMORY' for the note loaded into every session",
    )
    content: str | None = Field(default=None, description="Markdown to store (write only)")


def memory_folder(home: Path, agent_name: str) -> Path:
    """``$SKILLDECK_HOME/memory/<agent>`` with the agent name made safe as one folder."""
    agent = re.sub(r"[^A-Za-z0-9._-]", "_", agent_name) or "main"
    agent = re.sub(r"^\.+", lambda m: "_" * len(m.group()), agent)  # never "." or ".."
    return home / "memory" / agent


def memory_dir(ctx: ToolContext) -> Path:
    return memory_folder(ctx.settings.home, ctx.agent_name)


def _note_path(ctx: ToolContext, key: str | None) -> Path:
    if not key:
        raise ToolError("This action needs a `key` (the note's name).")
    key = key.removesuffix(".md")
    if not _KEY.fullmatch(key) or ".." in key:
        raise ToolError(
            f"Invalid memory key {key!r}: use letters, digits, '.', '_' or '-' only "
            "(no slashes), at most 100 characters."
        )
    return memory_dir(ctx) / f"{key}.md"


@contextlib.contextmanager
def _open_folder(folder: Path, *, create: bool) -> Iterator[int]:
    """A descriptor of the agent's memory folder; a symlink in its place is refused."""
    if create:
        folder.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
    try:
        fd = os.open(folder, _DIR_FLAGS)
    except FileNotFoundError:
        raise  # the caller says "no such note"
    except OSError as e:
        raise ToolError(
            f"Refusing the memory folder {folder}: it is a symbolic link or not a folder."
        ) from e
    try:
        yield fd
    finally:
        os.close(fd)


def _read(dfd: int, name: str) -> str:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dfd)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            raise ToolError(f"Refusing note {name}: not a regular file with a single link.")
        return fh.read(MAX_NOTE_BYTES + 1).decode("utf-8", errors="replace")


def _write(dfd: int, name: str, content: str) -> None:
    data = content.encode("utf-8")
    if len(data) > MAX_NOTE_BYTES:
        raise ToolError(f"Note too large ({len(data)} bytes); the limit is {MAX_NOTE_BYTES}.")
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISLNK(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
            raise ToolError(f"Refusing to replace {name}: it is a symbolic link.")
    tmp = f".{name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, 0o600, dir_fd=dfd)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        raise


def _list(folder: Path) -> list[str]:
    try:
        with _open_folder(folder, create=False) as dfd, os.scandir(dfd) as entries:
            return sorted(
                e.name.removesuffix(".md")
                for e in entries
                if e.name.endswith(".md") and e.is_file(follow_symlinks=False)
            )
    except FileNotFoundError:
        return []


class MemoryTool(Tool):
    name = "Memory"
    description = (
        "Keep notes that persist across sessions for this agent: `write` a Markdown note "
        "under a key, `read` it back, `list` the keys, `delete` one. The note `MEMORY` is "
        "loaded into the system prompt of every future session."
    )
    Input = MemoryInput

    async def run(self, input: MemoryInput, ctx: ToolContext) -> ToolResult:
        if input.action == "list":
            keys = _list(memory_dir(ctx))
            return ToolResult("\n".join(keys) if keys else "No notes yet.", data={"keys": keys})
        path = _note_path(ctx, input.key)
        try:
            with _open_folder(path.parent, create=input.action == "write") as dfd:
                if input.action == "read":
                    return ToolResult(_read(dfd, path.name))
                if input.action == "delete":
                    os.unlink(path.name, dir_fd=dfd)
                    return ToolResult(f"Deleted note {path.stem}.")
                if input.content is None:
                    raise ToolError("`write` needs `content`.")
                _write(dfd, path.name, input.content)
            return ToolResult(f"Saved note {path.stem} ({len(input.content)} characters).")
        except FileNotFoundError:
            raise ToolError(
                f"No note named {path.stem!r}. Use action 'list' to see the keys."
            ) from None
        except OSError as e:
            raise ToolError(f"Cannot access note {path.stem!r}: {e.strerror}.") from e
