"""The file tools (Read/Write/Edit/MultiEdit, Glob/Grep) and what keeps them confined:
path confinement, control-path and system-tree refusal, the filtered iterative walk,
the grep engine and its killable worker, output caps.

Other packages import these names from here; names load lazily, so importing the
facade costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.tools.fs.files import (
        EditInput,
        EditOperation,
        EditTool,
        MultiEditInput,
        MultiEditTool,
        ReadInput,
        ReadTool,
        WriteInput,
        WriteTool,
        apply_edit,
        remember_read,
        require_fresh_read,
    )
    from skilldeck.tools.fs.paths import (
        OpenedFile,
        allowed_roots,
        confine,
        is_inside,
        open_regular,
        read_bytes,
        stat_existing,
        write_atomic,
    )
    from skilldeck.tools.fs.search import (
        GlobInput,
        GlobTool,
        GrepInput,
        GrepTool,
    )

_HOME: dict[str, str] = {
    "remember_read": "files",
    "require_fresh_read": "files",
    "ReadInput": "files",
    "ReadTool": "files",
    "WriteInput": "files",
    "WriteTool": "files",
    "EditInput": "files",
    "EditTool": "files",
    "EditOperation": "files",
    "MultiEditInput": "files",
    "MultiEditTool": "files",
    "apply_edit": "files",
    "OpenedFile": "paths",
    "allowed_roots": "paths",
    "is_inside": "paths",
    "confine": "paths",
    "open_regular": "paths",
    "read_bytes": "paths",
    "stat_existing": "paths",
    "write_atomic": "paths",
    "GlobInput": "search",
    "GlobTool": "search",
    "GrepInput": "search",
    "GrepTool": "search",
}

__all__ = [
    "EditInput",
    "EditOperation",
    "EditTool",
    "GlobInput",
    "GlobTool",
    "GrepInput",
    "GrepTool",
    "MultiEditInput",
    "MultiEditTool",
    "OpenedFile",
    "ReadInput",
    "ReadTool",
    "WriteInput",
    "WriteTool",
    "allowed_roots",
    "apply_edit",
    "confine",
    "is_inside",
    "open_regular",
    "read_bytes",
    "remember_read",
    "require_fresh_read",
    "stat_existing",
    "write_atomic",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
