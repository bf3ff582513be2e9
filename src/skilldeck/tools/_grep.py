"""The matching half of Grep: file types, reading one file safely, finding and
rendering its matching lines the way ripgrep prints them."""

from __future__ import annotations

import bisect
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from skilldeck.tools._text import looks_binary
from skilldeck.tools._walk import Entry

#: Files larger than this are skipped (and counted in a note).
MAX_GREP_BYTES = 20 * 1024 * 1024
_MAX_LINE = 2000

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


def _prefilter(rx: re.Pattern[str]) -> re.Pattern[str] | None:
    """A whole-text version of a per-line pattern, to skip non-matching files fast.

    Only used when a whole-text miss provably means every line misses (no
    lookaround or absolute anchors, whose meaning changes across line breaks).
    """
    if any(tok in rx.pattern for tok in ("(?", r"\A", r"\Z", r"\z")):
        return None
    return re.compile(rx.pattern, rx.flags | re.MULTILINE)


def match_text(
    path: Path,
    mtime: float,
    data: bytes,
    rx: re.Pattern[str],
    *,
    multiline: bool,
    want_lines: bool,
) -> FileMatches | None:
    """Find the lines of ``data`` that match; None for no match or a binary file."""
    if looks_binary(data):
        return None
    text = data.decode("utf-8", errors="replace")
    if multiline:
        return _match_multiline(path, mtime, text, rx, want_lines=want_lines)
    pre = _prefilter(rx)
    if pre is not None and not pre.search(text):
        return None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if not want_lines:
        first = next((i for i, line in enumerate(lines) if rx.search(line)), None)
        return None if first is None else FileMatches(path, mtime, matched=[first])
    matched = [i for i, line in enumerate(lines) if rx.search(line)]
    return FileMatches(path, mtime, lines, matched) if matched else None


def _match_multiline(
    path: Path, mtime: float, text: str, rx: re.Pattern[str], *, want_lines: bool
) -> FileMatches | None:
    if not want_lines:
        return FileMatches(path, mtime, matched=[0]) if rx.search(text) else None
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    hit: set[int] = set()
    for m in rx.finditer(text):
        first = bisect.bisect_right(starts, m.start()) - 1
        last = bisect.bisect_right(starts, max(m.end() - 1, m.start())) - 1
        hit.update(range(first, last + 1))
    if not hit:
        return None
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return FileMatches(path, mtime, lines, sorted(i for i in hit if i < len(lines)))
