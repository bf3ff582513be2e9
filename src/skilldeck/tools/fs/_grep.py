"""The matching half of Grep: file types, reading one file safely, finding matching
lines in a killable worker process, rendering them the way ripgrep prints them."""

from __future__ import annotations

import contextlib
import json
import os
import select
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from skilldeck.errors import ToolError
from skilldeck.tools.fs import _grepworker
from skilldeck.tools.fs._grepworker import frame, multiline_lines, split_lines
from skilldeck.tools.fs._guard import Budget
from skilldeck.tools.fs._text import looks_binary
from skilldeck.tools.fs._walk import Entry

#: Files larger than this are skipped (and counted in a note).
MAX_GREP_BYTES = 20 * 1024 * 1024
_MAX_LINE = 2000
_WORKER = _grepworker.__file__

#: ripgrep's type names (a subset), as globs over the file name.
FILE_TYPES: dict[str, tuple[str, ...]] = {
    "py": ("*.py", "*.pyi"),
    "python": ("*.py", "*.pyi"),
    "js": ("*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "typescript": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "go": ("*.go",),
    "rust": ("*.rs",),
    "java": ("*.java", "*.jsp"),
    "kotlin": ("*.kt", "*.kts"),
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.c++", "*.hpp", "*.hh", "*.hxx", "*.h", "*.inl"),
    "cs": ("*.cs",),
    "ruby": ("*.rb", "*.rake", "*.gemspec", "Gemfile", "Rakefile"),
    "php": ("*.php",),
    "swift": ("*.swift",),
    "scala": ("*.scala", "*.sbt"),
    "sh": ("*.sh", "*.bash", "*.zsh", ".bashrc", ".zshrc"),
    "lua": ("*.lua",),
    "r": ("*.r", "*.R", "*.Rmd"),
    "dart": ("*.dart",),
    "md": ("*.md", "*.markdown", "*.mdx"),
    "markdown": ("*.md", "*.markdown", "*.mdx"),
    "rst": ("*.rst",),
    "txt": ("*.txt",),
    "json": ("*.json", "*.jsonl", "*.json5"),
    "yaml": ("*.yaml", "*.yml"),
    "toml": ("*.toml",),
    "xml": ("*.xml", "*.xsd", "*.xsl", "*.svg"),
    "html": ("*.html", "*.htm", "*.xhtml"),
    "css": ("*.css", "*.scss", "*.sass", "*.less"),
    "sql": ("*.sql",),
    "csv": ("*.csv", "*.tsv"),
    "proto": ("*.proto",),
    "docker": ("Dockerfile", "*.dockerfile", "Dockerfile.*"),
    "make": ("Makefile", "makefile", "GNUmakefile", "*.mk"),
    "terraform": ("*.tf", "*.tfvars"),
    "ini": ("*.ini", "*.cfg", "*.conf"),
    "svelte": ("*.svelte",),
    "vue": ("*.vue",),
}


@dataclass
class FileMatches:
    """The matches of one file: ``matched`` are 0-based line indexes."""

    path: Path
    mtime: float
    lines: list[str] = field(default_factory=list)
    matched: list[int] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.matched)

    def render(self, *, before: int, after: int, numbers: bool, bare: bool) -> list[str]:
        """ripgrep layout: ``path:N:text`` for matches, ``path-N-text`` for context,
        ``--`` between separate groups; ``bare`` (one file searched) drops the path."""
        hits = set(self.matched)
        wanted: list[int] = []
        for i in self.matched:
            lo, hi = max(i - before, 0), min(i + after, len(self.lines) - 1)
            wanted.extend(j for j in range(lo, hi + 1) if not wanted or j > wanted[-1])
        out: list[str] = []
        prev = -2
        for j in wanted:
            if (before or after) and out and j != prev + 1:
                out.append("--")
            sep = ":" if j in hits else "-"
            prefix = "" if bare else f"{self.path}{sep}"
            number = f"{j + 1}{sep}" if numbers else ""
            text = self.lines[j]
            if len(text) > _MAX_LINE:
                text = f"{text[:_MAX_LINE]}… [line truncated]"
            out.append(f"{prefix}{number}{text}")
            prev = j
        return out


def read_entry(entry: Entry) -> bytes | None:
    """The bytes of a walked file, opened without following links; None if unreadable."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(entry.name, flags, dir_fd=entry.dir_fd)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
            return None
        return fh.read(MAX_GREP_BYTES + 1)


class MatchTimeout(Exception):
    """The regex worker did not answer within the call's budget (it was killed)."""


class RegexWorker:
    """The child process that runs Grep's regex (see :mod:`._grepworker`); use as a
    context manager: leaving it always kills the child."""

    def __init__(
        self, pattern: str, *, ignore_case: bool, multiline: bool, want_lines: bool
    ) -> None:
        self.pattern, self.multiline, self.want_lines = pattern, multiline, want_lines
        self._header = json.dumps(
            {
                "pattern": pattern,
                "ignore_case": ignore_case,
                "multiline": multiline,
                "want_lines": want_lines,
            }
        ).encode()
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, budget: Budget) -> None:
        """Spawn the worker and compile the pattern there; a bad pattern is a ToolError."""
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", _WORKER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
        except OSError as e:
            raise ToolError(f"Grep cannot start its regex worker ({e.strerror}).") from e
        answer = json.loads(self._ask(self._header, budget))
        if "error" in answer:
            raise ToolError(f"Invalid regular expression {self.pattern!r}: {answer['error']}.")

    def match(self, data: bytes, budget: Budget) -> list[int]:
        """Matched 0-based line indexes of ``data``; raises MatchTimeout at the deadline."""
        hits = json.loads(self._ask(data, budget))
        return [int(i) for i in hits]

    def _ask(self, data: bytes, budget: Budget) -> bytes:
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(frame(data))
            proc.stdin.flush()
        except OSError as e:
            raise ToolError("Grep's regex worker stopped unexpectedly.") from e
        fd = proc.stdout.fileno()
        head = _read_exact(fd, 4, budget)
        return _read_exact(fd, int.from_bytes(head, "big"), budget)

    def __enter__(self) -> RegexWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        proc = self._proc
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _read_exact(fd: int, size: int, budget: Budget) -> bytes:
    """``size`` bytes from ``fd``, waiting no longer than the budget allows."""
    chunks: list[bytes] = []
    got = 0
    while got < size:
        ready, _, _ = select.select([fd], [], [], budget.remaining())
        if not ready:
            budget.hit = True
            raise MatchTimeout
        chunk = os.read(fd, min(size - got, 1 << 20))
        if not chunk:
            raise ToolError("Grep's regex worker stopped unexpectedly.")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def match_file(
    worker: RegexWorker, path: Path, mtime: float, data: bytes, budget: Budget
) -> FileMatches | None:
    """The matches of one file's bytes; None for no match or a binary file."""
    if looks_binary(data):
        return None
    hits = worker.match(data, budget)
    if not hits:
        return None
    if not worker.want_lines:
        return FileMatches(path, mtime, matched=hits[:1])
    text = data.decode("utf-8", errors="replace")
    lines = multiline_lines(text) if worker.multiline else split_lines(text)
    return FileMatches(path, mtime, lines, hits)
