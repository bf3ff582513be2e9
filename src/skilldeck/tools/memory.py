"""The ``Memory`` tool: small Markdown notes an agent keeps between sessions.

Notes live in ``$SKILLDECK_HOME/memory/<agent>/<key>.md``. Keys are plain names
(letters, digits, ``.``, ``_``, ``-``; no separators, no ``..``), so the model can
never address a file outside that folder; files are opened with ``O_NOFOLLOW`` so a
planted symlink cannot redirect a write. ``MEMORY.md`` in the same folder is what the
agent's system prompt loads.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from skilldeck.errors import ToolError
from skilldeck.tools.base import Tool, ToolContext, ToolResult

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
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


def memory_dir(ctx: ToolContext) -> Path:
    agent = re.sub(r"[^A-Za-z0-9._-]", "_", ctx.agent_name) or "main"
    return ctx.settings.home / "memory" / agent


def _note_path(ctx: ToolContext, key: str | None) -> Path:
    if not key:
        raise ToolError("This action needs a `key` (the note's name).")
    key = key.removesuffix(".md")
    if not _KEY.match(key) or ".." in key:
        raise ToolError(
            f"Invalid memory key {key!r}: use letters, digits, '.', '_' or '-' only "
            "(no slashes), at most 100 characters."
        )
    return memory_dir(ctx) / f"{key}.md"


def _read(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(MAX_NOTE_BYTES + 1).decode("utf-8", errors="replace")


def _write(path: Path, content: str) -> None:
    data = content.encode("utf-8")
    if len(data) > MAX_NOTE_BYTES:
        raise ToolError(f"Note too large ({len(data)} bytes); the limit is {MAX_NOTE_BYTES}.")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    if path.is_symlink():
        raise ToolError(f"Refusing to replace {path.name}: it is a symbolic link.")
    os.replace(tmp, path)


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
            folder = memory_dir(ctx)
            keys = sorted(p.stem for p in folder.glob("*.md") if p.is_file() and not p.is_symlink())
            return ToolResult("\n".join(keys) if keys else "No notes yet.", data={"keys": keys})
        path = _note_path(ctx, input.key)
        try:
            if input.action == "read":
                return ToolResult(_read(path))
            if input.action == "delete":
                path.unlink()
                return ToolResult(f"Deleted note {path.stem}.")
            if input.content is None:
                raise ToolError("`write` needs `content`.")
            _write(path, input.content)
            return ToolResult(f"Saved note {path.stem} ({len(input.content)} characters).")
        except FileNotFoundError:
            raise ToolError(
                f"No note named {path.stem!r}. Use action 'list' to see the keys."
            ) from None
        except OSError as e:
            raise ToolError(f"Cannot access note {path.stem!r}: {e.strerror}.") from e
