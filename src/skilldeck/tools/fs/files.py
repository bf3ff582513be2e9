"""Read, Write, Edit and MultiEdit — Claude Code's file tools, confined to the roots.

As in Claude Code, writing to an existing file requires having Read it in this
session, and the file must not have changed since (the read is recorded in
``ctx.state["read_files"]`` as path → mtime in ns). That keeps the model from
overwriting content it has never seen or that a user or formatter just changed.
All writes are atomic (temp file + rename) and go through :mod:`.paths`, so a
symlink or hard link cannot redirect them outside the workspace.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

import anyio.to_thread
from pydantic import BaseModel, Field

from skilldeck.errors import ToolError
from skilldeck.tools.base import Tool, ToolContext, ToolResult
from skilldeck.tools.fs._text import SNIFF_BYTES, capped_lines, looks_binary, number_line, strip_eol
from skilldeck.tools.fs.paths import confine, open_regular, read_bytes, stat_existing, write_atomic

READ_STATE = "read_files"
DEFAULT_LINE_LIMIT = 2000
#: characters of one line Read shows; longer lines are cut (and said to be)
MAX_LINE_CHARS = 2000
MAX_READ_BYTES = 256 * 1024 * 1024
_BINARY_WORDS = (
    ".png .jpg .jpeg .gif .webp .bmp .ico .tif .tiff .pdf .zip .gz .tgz .bz2 .xz .7z .so "
    ".dylib .dll .exe .class .jar .pyc .o .a .woff .woff2 .ttf .otf .mp3 .mp4 .wav"
)
_BINARY_SUFFIXES = frozenset(_BINARY_WORDS.split())


# ---- read tracking ---------------------------------------------------------------


def remember_read(ctx: ToolContext, path: os.PathLike[str] | str, st: os.stat_result) -> None:
    ctx.state.setdefault(READ_STATE, {})[str(path)] = st.st_mtime_ns


def require_fresh_read(ctx: ToolContext, path: os.PathLike[str] | str, st: os.stat_result) -> None:
    """Refuse to change an existing file the model has not seen in its current state."""
    seen = ctx.state.get(READ_STATE, {}).get(str(path))
    if seen is None:
        raise ToolError(
            f"File {path} has not been read yet in this session. Read it first before "
            "writing to it."
        )
    if seen != st.st_mtime_ns:
        raise ToolError(
            f"File {path} has been modified since it was last read (by the user, a formatter "
            "or a command). Read it again before writing to it."
        )


# ---- Read ------------------------------------------------------------------------


class ReadInput(BaseModel):
    file_path: str = Field(
        description="The absolute path to the file to read (relative paths resolve "
        "against the workspace)."
    )
    offset: int | None = Field(
        default=None,
        ge=0,
        description="The line number to start reading from (1-based). Only provide if the "
        "file is too large to read at once.",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description=f"The number of lines to read (default {DEFAULT_LINE_LIMIT}).",
    )


class ReadTool(Tool):
    name: ClassVar[str] = "Read"
    description: ClassVar[str] = (
        "Reads a file from the local filesystem. Returns up to 2000 lines by default, "
        "numbered like `cat -n` (line number, tab, content); lines longer than 2000 "
        "characters are truncated. Use offset and limit for long files. Directories and "
        "binary files cannot be read: use Glob or Bash `ls` to list a directory. Read a "
        "file before editing or overwriting it."
    )
    Input: ClassVar[type[BaseModel]] = ReadInput
    read_only: ClassVar[bool] = True

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        args: ReadInput = input
        path = confine(args.file_path, ctx, must_exist=True)
        return await anyio.to_thread.run_sync(_read, path, args, ctx)


def _check_visible(path: Path, ctx: ToolContext) -> None:
    """The session's rules, asked about the resolved path (the gate judged both the
    literal and resolved spellings already; this holds for callers past the gate)."""
    if ctx.path_filter is None:
        return
    try:
        verdict = ctx.path_filter("Read", path)
    except Exception as e:  # fail closed
        raise ToolError(f"Refusing {path}: the permission check failed ({e}).") from e
    if verdict.kind == "deny":
        raise ToolError(f"Permission denied: {path}: {verdict.reason or 'denied by a rule'}.")


def _read(path: Path, args: ReadInput, ctx: ToolContext) -> ToolResult:
    _check_visible(path, ctx)
    opened = open_regular(path, ctx)
    with os.fdopen(opened.fd, "rb") as fh:
        if opened.stat.st_size == 0:
            remember_read(ctx, opened.path, opened.stat)
            return ToolResult(
                content=f"(The file {opened.path} exists but is empty.)",
                data={"path": str(opened.path), "total_lines": 0},
            )
        if opened.stat.st_size > MAX_READ_BYTES:
            raise ToolError(
                f"{opened.path} is {opened.stat.st_size:,} bytes, too large to Read; use Grep "
                "to find what you need or Bash (head, tail, sed -n) to read parts of it."
            )
        head = fh.read(SNIFF_BYTES)
        if opened.path.suffix.lower() in _BINARY_SUFFIXES or looks_binary(head):
            raise ToolError(
                f"{opened.path} is a binary file ({opened.path.suffix or 'no extension'}); "
                "Read only displays text. Use Bash (e.g. `file`, `xxd | head`) to inspect it."
            )
        fh.seek(0)
        start = max(args.offset or 1, 1)
        limit = args.limit or DEFAULT_LINE_LIMIT
        budget = ctx.settings.agent.tool_output_limit
        shown, total = _numbered_lines(fh, start=start, limit=limit, budget=budget)
    remember_read(ctx, opened.path, opened.stat)
    data = {"path": str(opened.path), "total_lines": total, "offset": start, "lines": len(shown)}
    if start > total:
        return ToolResult(
            content=f"(The file has only {total} lines; offset {start} is past the end.)",
            data=data,
        )
    text = "\n".join(shown)
    last = start + len(shown) - 1
    if last < total:
        text += (
            f"\n\n(Showing lines {start}-{last} of {total}. Use offset={last + 1} to read more.)"
        )
    return ToolResult(content=text, data=data)


def _numbered_lines(fh: Any, *, start: int, limit: int, budget: int) -> tuple[list[str], int]:
    """The numbered lines from ``start``: at most ``limit`` lines and ``budget`` chars.

    Lines are streamed (:func:`capped_lines`): only the head of each line is ever held,
    so memory stays bounded whatever the file's shape.
    """
    shown: list[str] = []
    used = 0
    total = 0
    full = False
    keep = MAX_LINE_CHARS * 4 + 4  # enough bytes for MAX_LINE_CHARS UTF-8 characters
    for total, (raw, length) in enumerate(capped_lines(fh, keep), 1):
        if total < start or full:
            continue
        text = strip_eol(raw.decode("utf-8", errors="replace"))
        cut = length if length > len(raw) else None
        line = number_line(total, text, max_chars=MAX_LINE_CHARS, full_bytes=cut)
        if len(shown) >= limit or (shown and used + len(line) + 1 > budget):
            full = True
            continue
        shown.append(line)
        used += len(line) + 1
    return shown, total


# ---- Write -----------------------------------------------------------------------


class WriteInput(BaseModel):
    file_path: str = Field(description="The absolute path to the file to write.")
    content: str = Field(description="The content to write to the file.")


class WriteTool(Tool):
    name: ClassVar[str] = "Write"
    description: ClassVar[str] = (
        "Writes a file to the local filesystem, creating parent directories as needed and "
        "overwriting an existing file. An existing file must have been Read first in this "
        "session. Prefer Edit for changes to existing files."
    )
    Input: ClassVar[type[BaseModel]] = WriteInput

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        args: WriteInput = input
        path = confine(args.file_path, ctx, write=True)
        existing = stat_existing(path, ctx, write=True)
        if existing is not None:
            require_fresh_read(ctx, path, existing)
        st, created = write_atomic(path, ctx, args.content.encode("utf-8"))
        remember_read(ctx, path, st)
        lines = args.content.count("\n") + (0 if args.content.endswith("\n") else 1)
        message = (
            f"File created successfully at: {path}"
            if created
            else f"The file {path} has been updated ({lines} lines)."
        )
        return ToolResult(content=message, data={"path": str(path), "created": created})


# ---- Edit / MultiEdit -------------------------------------------------------------


class EditInput(BaseModel):
    file_path: str = Field(description="The absolute path to the file to modify.")
    old_string: str = Field(description="The text to replace (must match the file exactly).")
    new_string: str = Field(description="The text to replace it with (must differ).")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence of old_string (default false)."
    )


class EditTool(Tool):
    name: ClassVar[str] = "Edit"
    description: ClassVar[str] = (
        "Performs an exact string replacement in a file. old_string must match the file "
        "exactly (including indentation) and exactly once, unless replace_all is true; add "
        "surrounding lines to make it unique. Read the file first. An empty old_string "
        "creates a new file with new_string as its content."
    )
    Input: ClassVar[type[BaseModel]] = EditInput

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        args: EditInput = input
        edit = EditOperation(
            old_string=args.old_string, new_string=args.new_string, replace_all=args.replace_all
        )
        return _edit_file(args.file_path, [edit], ctx)


class EditOperation(BaseModel):
    old_string: str = Field(description="The text to replace.")
    new_string: str = Field(description="The text to replace it with.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


class MultiEditInput(BaseModel):
    file_path: str = Field(description="The absolute path to the file to modify.")
    edits: list[EditOperation] = Field(
        min_length=1,
        description="Edits applied in order, each to the result of the previous one; "
        "either all succeed or none is applied.",
    )


class MultiEditTool(Tool):
    name: ClassVar[str] = "MultiEdit"
    description: ClassVar[str] = (
        "Makes several exact string replacements in one file in one atomic step: edits "
        "apply in sequence (each sees the result of the previous) and if any fails, none "
        "is applied. Same rules per edit as Edit. Read the file first."
    )
    Input: ClassVar[type[BaseModel]] = MultiEditInput

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        args: MultiEditInput = input
        return _edit_file(args.file_path, list(args.edits), ctx)


def _edit_file(file_path: str, edits: list[EditOperation], ctx: ToolContext) -> ToolResult:
    """Apply ``edits`` in memory, then write once: all or nothing."""
    path = confine(file_path, ctx, write=True)
    existing = stat_existing(path, ctx, write=True)
    if existing is None:
        if edits[0].old_string != "":
            raise ToolError(
                f"File does not exist: {path}. To create it, use Write (or Edit with an empty "
                "old_string)."
            )
        text = None
    else:
        require_fresh_read(ctx, path, existing)
        raw, _ = read_bytes(path, ctx)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ToolError(f"{path} is not UTF-8 text; Edit cannot change it.") from e
    new_text, span, replaced = _apply_all(text, edits, path=str(path))
    st, created = write_atomic(path, ctx, new_text.encode("utf-8"))
    remember_read(ctx, path, st)
    verb = "created" if created else "updated"
    snippet = _snippet(new_text, span)
    return ToolResult(
        content=f"The file {path} has been {verb} ({replaced} replacement"
        f"{'s' if replaced != 1 else ''}). Here's the result of running `cat -n` on a "
        f"snippet of the edited file:\n{snippet}",
        data={"path": str(path), "replacements": replaced, "created": created},
    )


def _apply_all(
    text: str | None, edits: list[EditOperation], *, path: str
) -> tuple[str, tuple[int, int], int]:
    """Run each edit on the result of the previous.

    Returns (new text, (start, end) of the first edit's change, replacements made).
    """
    span = (-1, -1)
    replaced = 0
    for i, edit in enumerate(edits, 1):
        label = f"Edit {i} of {len(edits)}: " if len(edits) > 1 else ""
        if edit.old_string == "":
            if text:
                raise ToolError(
                    f"{label}old_string is empty, but {path} already has content. An empty "
                    "old_string only creates a new (or fills an empty) file; quote the text "
                    "to replace."
                )
            text, pos, count = edit.new_string, 0, 1
        else:
            text, pos, count = apply_edit(
                text or "", edit.old_string, edit.new_string, edit.replace_all, label, path
            )
        if span[0] < 0:
            span = (pos, pos + len(edit.new_string))
        replaced += count
    return text or "", span, replaced


def apply_edit(
    text: str, old: str, new: str, replace_all: bool, label: str = "", path: str = "the file"
) -> tuple[str, int, int]:
    """One exact replacement; returns (new text, position of the first change, count).

    0 matches and several matches are distinct errors, each saying what to do next.
    When the file uses CRLF and the model quoted LF lines, the CRLF form is tried.
    """
    if old == new:
        raise ToolError(f"{label}No changes to make: old_string and new_string are identical.")
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
    if count == 0:
        raise ToolError(
            f"{label}String to replace not found in {path}. old_string must match the file "
            "exactly, including whitespace, indentation and line breaks (without the line "
            "numbers Read shows). Read the file again to see its current content."
        )
    if count > 1 and not replace_all:
        raise ToolError(
            f"{label}Found {count} occurrences of old_string in {path}, but replace_all is "
            "false. Add more surrounding context to old_string so it matches exactly once, or "
            "set replace_all to true to replace every occurrence."
        )
    pos = text.find(old)
    return text.replace(old, new, -1 if replace_all else 1), pos, count if replace_all else 1


def _snippet(text: str, span: tuple[int, int], *, context: int = 4, max_lines: int = 40) -> str:
    """The changed lines with ``context`` lines around them, numbered like Read."""
    lines = text.split("\n")
    first = text.count("\n", 0, span[0])
    last = text.count("\n", 0, span[1])
    start = max(first - context, 0)
    end = min(last + context + 1, len(lines), start + max_lines)
    return "\n".join(number_line(i + 1, strip_eol(lines[i])) for i in range(start, end))
