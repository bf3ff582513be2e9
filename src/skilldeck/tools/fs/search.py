"""Glob and Grep: find files by name and by content, confined to the roots.

Pure Python (ripgrep may be absent) with ripgrep's habits: Grep skips binary
files, hidden files and noise directories (``.git``, ``node_modules``…), does not
follow symlinks, and prints ``path:line:text`` / ``path-line-text`` for matches and
context. Glob lists files newest first, capped, like Claude Code. ``.gitignore`` is
not consulted.

Both leave out what the session's permission rules deny (``Read(./secrets/**)``
hides ``secrets/`` from a search of the whole workspace; a denied folder is not even
entered), and both stop at their wall clock (:class:`~._guard.Budget`): the walk
checks it per entry, and Grep's regex runs in a worker process that is killed when
the budget ends, so ``(a+)+$`` cannot outlive the run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field

from skilldeck.errors import ToolError
from skilldeck.skills.rules import GlobMatcher
from skilldeck.tools.base import Tool, ToolContext, ToolResult
from skilldeck.tools.fs._grep import (
    FILE_TYPES,
    MAX_GREP_BYTES,
    FileMatches,
    MatchTimeout,
    RegexWorker,
    match_file,
    read_entry,
)
from skilldeck.tools.fs._guard import Budget, Visibility
from skilldeck.tools.fs._text import cap_text
from skilldeck.tools.fs._walk import (
    MAX_DEPTH,
    WalkStats,
    compile_glob,
    literal_prefix,
    pattern_prunes,
    walk_files,
)
from skilldeck.tools.fs.paths import confine, open_regular

GLOB_LIMIT = 100


def _search_dir(path: str | None, ctx: ToolContext) -> Path:
    """The confined place to search: ``path`` if given, else the workspace."""
    return confine(path or str(ctx.workspace), ctx, must_exist=True)


def _visibility(ctx: ToolContext, tool: str, base: Path) -> Visibility:
    """The rules' view for one search; a search rooted in a denied path is refused."""
    seen = Visibility(ctx, tool, base)
    verdict = seen.root_verdict
    if verdict.kind == "deny":
        raise ToolError(f"Permission denied: {base}: {verdict.reason or 'denied by a rule'}.")
    return seen


def _closing_note(seen: Visibility, stats: WalkStats, budget: Budget, what: str) -> str:
    notes = [n for n in (seen.note(),) if n]
    if stats.too_deep:
        notes.append(f"{stats.too_deep} folder(s) deeper than {MAX_DEPTH} levels not searched")
    if budget.hit:
        notes.append(budget.note(what))
    return f"\n({'; '.join(notes)}.)" if notes else ""


# ---- Glob ------------------------------------------------------------------------


class GlobInput(BaseModel):
    pattern: str = Field(description='The glob pattern to match files against, e.g. "**/*.py".')
    path: str | None = Field(
        default=None,
        description="The directory to search in (default: the workspace). Omit it for the "
        'default; do not pass "undefined" or "null".',
    )


class GlobTool(Tool):
    name: ClassVar[str] = "Glob"
    description: ClassVar[str] = (
        'Fast file pattern matching. Supports glob patterns like "**/*.js" or '
        '"src/**/*.{ts,tsx}". Returns matching file paths sorted by modification time, '
        f"newest first (at most {GLOB_LIMIT}). Use it to find files by name; use Grep to "
        "search their contents."
    )
    Input: ClassVar[type[BaseModel]] = GlobInput
    read_only: ClassVar[bool] = True

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        args: GlobInput = input
        pattern = args.pattern.strip()
        if not pattern:
            raise ToolError("Glob needs a non-empty pattern, e.g. '**/*.py'.")
        if os.path.isabs(pattern):
            prefix, pattern = literal_prefix(pattern.lstrip("/"))
            base = confine("/" + prefix, ctx, must_exist=True)
        else:
            root = _search_dir(args.path, ctx)
            prefix, pattern = literal_prefix(pattern)
            base = confine(str(root / prefix), ctx, must_exist=True) if prefix else root
        if not base.is_dir():
            raise ToolError(f"{base} is not a directory; Glob searches directories.")
        return await anyio.to_thread.run_sync(_glob, base, pattern, ctx)


def _glob(base: Path, pattern: str, ctx: ToolContext) -> ToolResult:
    matcher = compile_glob(pattern)
    seen = _visibility(ctx, "Glob", base)
    budget, stats = Budget(ctx), WalkStats()
    found = [
        (e.st.st_mtime, str(e.path))
        for e in walk_files(
            base,
            ctx,
            prune=pattern_prunes(pattern),
            visible=seen.visible,
            budget=budget,
            stats=stats,
        )
        if matcher.match(e.rel)
    ]
    note = _closing_note(seen, stats, budget, f"finding {len(found)} file(s)")
    if not found:
        return ToolResult(content="No files found" + note, data={"files": [], "total": 0})
    found.sort(key=lambda t: (-t[0], t[1]))
    files = [p for _, p in found[:GLOB_LIMIT]]
    text = "\n".join(files)
    if len(found) > GLOB_LIMIT:
        text += (
            f"\n(Results are truncated: showing the {GLOB_LIMIT} most recently modified of "
            f"{len(found)} files. Use a more specific path or pattern.)"
        )
    data = {"files": files, "total": len(found), "partial": budget.hit}
    return ToolResult(content=text + note, data=data)


# ---- Grep ------------------------------------------------------------------------


class GrepInput(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    pattern: str = Field(description="The regular expression to search for in file contents.")
    path: str | None = Field(
        default=None, description="File or directory to search in (default: the workspace)."
    )
    glob: str | None = Field(
        default=None,
        description='Glob to filter files, e.g. "*.js" or "*.{ts,tsx}" (a pattern without '
        "/ matches file names at any depth).",
    )
    type: str | None = Field(
        default=None,
        description="File type to search (ripgrep names: py, js, ts, rust, go, java, md…). "
        "More efficient than glob for standard file types.",
    )
    output_mode: Literal["content", "files_with_matches", "count"] = Field(
        default="files_with_matches",
        description='"content" shows matching lines, "files_with_matches" (default) shows '
        'file paths, "count" shows match counts per file.',
    )
    before: int | None = Field(
        default=None, alias="-B", ge=0, description="Lines to show before each match."
    )
    after: int | None = Field(
        default=None, alias="-A", ge=0, description="Lines to show after each match."
    )
    context: int | None = Field(
        default=None, alias="-C", ge=0, description="Lines to show before and after each match."
    )
    line_numbers: bool = Field(
        default=True, alias="-n", description='Show line numbers ("content" mode only).'
    )
    ignore_case: bool = Field(default=False, alias="-i", description="Case insensitive search.")
    multiline: bool = Field(
        default=False,
        description="Let patterns span lines and make . match newlines (rg -U --multiline-dotall).",
    )
    head_limit: int | None = Field(
        default=None,
        ge=1,
        description="Only return the first N lines / files / count entries.",
    )


class GrepTool(Tool):
    name: ClassVar[str] = "Grep"
    description: ClassVar[str] = (
        "Searches file contents with a regular expression (Python/ripgrep syntax). Filter "
        'files with glob ("*.py") or type ("py"). output_mode "files_with_matches" '
        '(default) lists files newest first, "content" shows matching lines (with -A/-B/-C '
        'context, -n line numbers), "count" shows counts. Skips binary files, hidden files '
        "and .git/node_modules."
    )
    Input: ClassVar[type[BaseModel]] = GrepInput
    read_only: ClassVar[bool] = True

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        args: GrepInput = input
        if args.type and args.type not in FILE_TYPES:
            raise ToolError(
                f"Unknown file type {args.type!r}. Known types: {', '.join(sorted(FILE_TYPES))}."
            )
        target = _search_dir(args.path, ctx)
        return await anyio.to_thread.run_sync(_grep, target, args, ctx)


@dataclass
class _Scan:
    results: list[FileMatches] = field(default_factory=list)
    skipped_hardlinks: int = 0
    skipped_large: int = 0
    searched: int = 0


def _grep(target: Path, args: GrepInput, ctx: ToolContext) -> ToolResult:
    ctx_lines = args.context or 0
    before = args.before if args.before is not None else ctx_lines
    after = args.after if args.after is not None else ctx_lines
    seen = _visibility(ctx, "Grep", target)
    budget, stats, scan = Budget(ctx), WalkStats(), _Scan()
    single = target.is_file()
    worker = RegexWorker(
        args.pattern,
        ignore_case=args.ignore_case,
        multiline=args.multiline,
        want_lines=args.output_mode != "files_with_matches",
    )
    with worker:
        try:
            worker.start(budget)
            if single:
                _scan_file(target, worker, ctx, scan, budget)
            else:
                _scan_dir(target, worker, args, ctx, scan, seen, budget, stats)
        except MatchTimeout:
            pass  # budget.hit is set; what was found so far is returned
    note = _closing_note(seen, stats, budget, f"searching {scan.searched} file(s)")
    return _render(scan, args, before=before, after=after, single=single, note=note)


def _scan_file(
    target: Path, worker: RegexWorker, ctx: ToolContext, scan: _Scan, budget: Budget
) -> None:
    opened = open_regular(target, ctx)
    with os.fdopen(opened.fd, "rb") as fh:
        data = fh.read(MAX_GREP_BYTES + 1)
    found = match_file(worker, target, opened.stat.st_mtime, data, budget)
    scan.searched = 1
    scan.results = [found] if found else []


def _file_filter(args: GrepInput) -> tuple[list[GlobMatcher], GlobMatcher | None, bool]:
    types = [compile_glob(g) for g in FILE_TYPES.get(args.type or "", ())]
    rx = compile_glob(args.glob) if args.glob else None
    return types, rx, bool(args.glob and "/" in args.glob)


def _scan_dir(
    base: Path,
    worker: RegexWorker,
    args: GrepInput,
    ctx: ToolContext,
    scan: _Scan,
    seen: Visibility,
    budget: Budget,
    stats: WalkStats,
) -> None:
    types, glob_rx, glob_on_path = _file_filter(args)
    walk = walk_files(base, ctx, skip_hidden=True, visible=seen.visible, budget=budget, stats=stats)
    for entry in walk:
        if entry.is_link:  # ripgrep does not follow symlinks by default
            continue
        if types and not any(t.match(entry.name) for t in types):
            continue
        if glob_rx and not glob_rx.match(entry.rel if glob_on_path else entry.name):
            continue
        if entry.st.st_nlink > 1:
            scan.skipped_hardlinks += 1
            continue
        if entry.st.st_size > MAX_GREP_BYTES:
            scan.skipped_large += 1
            continue
        data = read_entry(entry)
        if data is None:
            continue
        found = match_file(worker, entry.path, entry.st.st_mtime, data, budget)
        scan.searched += 1
        if found:
            scan.results.append(found)


def _render(
    scan: _Scan, args: GrepInput, *, before: int, after: int, single: bool, note: str
) -> ToolResult:
    results = scan.results
    limit = args.head_limit
    if args.output_mode == "files_with_matches":
        results.sort(key=lambda r: (-r.mtime, str(r.path)))
        lines = [str(r.path) for r in results]
        shown = lines[:limit] if limit else lines
        header = f"Found {len(lines)} file{'s' if len(lines) != 1 else ''}"
        text = "No files found" if not lines else header + "\n" + "\n".join(shown)
    elif args.output_mode == "count":
        results.sort(key=lambda r: str(r.path))
        lines = [f"{r.path}:{r.count}" for r in results]
        shown = lines[:limit] if limit else lines
        total = sum(r.count for r in results)
        text = "\n".join(shown) if lines else "No matches found"
        if lines:
            text += f"\n\nFound {total} matching lines across {len(lines)} files."
    else:
        results.sort(key=lambda r: str(r.path))
        lines = []
        for r in results:
            if (before or after) and lines:
                lines.append("--")
            lines += r.render(before=before, after=after, numbers=args.line_numbers, bare=single)
        shown = lines[:limit] if limit else lines
        text = "\n".join(shown) if lines else "No matches found"
    if limit and len(lines) > limit:
        text += f"\n\n(Showing the first {limit} of {len(lines)} entries: head_limit={limit}.)"
    notes = _notes(scan) + note
    data = {"files": [str(r.path) for r in results], "mode": args.output_mode}
    return ToolResult(content=cap_text(text + notes), data=data)


def _notes(scan: _Scan) -> str:
    notes = []
    if scan.skipped_hardlinks:
        notes.append(f"{scan.skipped_hardlinks} hard-linked file(s) skipped")
    if scan.skipped_large:
        notes.append(f"{scan.skipped_large} file(s) over 20 MB skipped")
    return f"\n({'; '.join(notes)}.)" if notes else ""
