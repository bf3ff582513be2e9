"""``SKILL.md`` → frontmatter mapping + byte offset of the body, reading as little as possible.

Discovery parses thousands of skills and only needs level 1 (name, description), so the
parser reads the file in chunks until the closing ``---`` line and never touches the
body: a multi-megabyte SKILL.md costs the same as a tiny one. The body is loaded later,
from ``body_offset``, by :class:`~skilldeck.skills.model.skill.Skill`.

Nine frontmatters in ten use a plain subset of YAML (``key: value`` lines, one level
of lists and maps) that :mod:`._fastyaml` reads line by line in a few microseconds;
the rest go to libyaml via :mod:`._yamlnodes`. Both give what a validator needs and
a plain ``yaml.safe_load`` loses: the line of every top-level key, the source text of
scalars YAML 1.1 would retype (``version: 1.10`` is the float ``1.1``, but the text
``"1.10"`` is kept in ``source_text``) and duplicate keys; the libyaml path also
bounds alias expansion ("billion laughs") and nesting depth.

Values follow PyYAML's safe schema (null, bool, int, float, str, list, dict) with two
deliberate differences: timestamps stay strings (a date is not JSON and nobody wants
one in a skill's frontmatter) and mapping keys are always their source text (so
``on:`` is the key ``"on"``, not ``True``).

Every failure is a :class:`~skilldeck.errors.SkillParseError` with a stable ``code``
(the ``SD0xx`` series, listed in ``docs/skill-format.md``) and a 1-based file line.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from skilldeck.errors import SkillParseError
from skilldeck.skills.format._fastyaml import parse_simple
from skilldeck.skills.format._yamlerrors import SD_INVALID_YAML  # noqa: F401  (re-exported)
from skilldeck.skills.format._yamlnodes import (  # noqa: F401  (codes re-exported)
    RETYPABLE_FIRST,
    SD_NOT_MAPPING,
    SD_TOO_COMPLEX,
    Path_,
    compose_mapping,
    plain_value,
)

__all__ = [
    "MAX_FRONTMATTER_BYTES",
    "ParsedFrontmatter",
    "find_skill_md",
    "parse_skill_md",
    "parse_yaml_text",
]

#: Frontmatter larger than this is refused (SD006): real ones are under 4 KiB.
MAX_FRONTMATTER_BYTES = 256 * 1024
SD_NO_FRONTMATTER = "SD001"
SD_UNCLOSED = "SD002"
SD_ENCODING = "SD005"
SD_TOO_LARGE = "SD006"
SD_UNREADABLE = "SD008"
SD_NO_SKILL_MD = "SD009"

_CHUNK = 4096
#: O_NONBLOCK so a FIFO named SKILL.md cannot hang the open (regular files ignore it)
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NONBLOCK", 0)
)
_BOM = b"\xef\xbb\xbf"
_CLOSE_RE = re.compile(rb"^---[ \t]*\r?$", re.MULTILINE)


class ParsedFrontmatter:
    """What one SKILL.md's frontmatter says, and where.

    ``data`` holds the YAML values (keys as written); ``key_lines`` the 1-based file
    line of each top-level key; ``body_offset`` the byte offset where the body starts.
    ``source_text`` maps a value's path (``("version",)``, ``("metadata", "v")``,
    ``("tags", 0)``) to its text in the file when YAML typed it as something other
    than a string (``1.10``, ``yes``, ``[x]``), down to depth two, so that fields
    expecting strings get what the author wrote. ``duplicate_keys`` lists top-level
    keys given twice (``(key, line)`` of the later one; the later value wins).
    ``stamp`` is the file's ``(mtime_ns, size)`` when it was opened for this parse
    (None for text not read from a file): what a cache keys the result by, without a
    second ``stat`` (taken before reading, so a later edit always shows).

    A plain slotted class rather than a dataclass: discovery builds thousands, and
    ``path`` is kept as given (discovery passes a string) and made a ``Path`` only
    when something asks for it (a diagnostic's location, an error).
    """

    __slots__ = (
        "_path",
        "body_offset",
        "data",
        "duplicate_keys",
        "key_lines",
        "path_str",
        "source_text",
        "stamp",
    )

    def __init__(
        self,
        path: Path | str,
        data: dict[str, Any],
        body_offset: int,
        key_lines: dict[str, int],
        source_text: dict[Path_, str] | None = None,
        duplicate_keys: tuple[tuple[str, int], ...] = (),
        stamp: tuple[int, int] | None = None,
    ) -> None:
        self._path = path if isinstance(path, Path) else None
        self.path_str = str(path)
        self.data = data
        self.body_offset = body_offset
        self.key_lines = key_lines
        self.source_text = {} if source_text is None else source_text
        self.duplicate_keys = duplicate_keys
        self.stamp = stamp

    @property
    def path(self) -> Path:
        path = self._path
        if path is None:
            path = self._path = Path(self.path_str)
        return path

    def text(self, *path: str | int) -> str | None:
        """The source text recorded for ``path``, if YAML retyped that value."""
        return self.source_text.get(path)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ParsedFrontmatter):
            return NotImplemented
        return (
            self.path_str == other.path_str
            and self.data == other.data
            and self.body_offset == other.body_offset
            and self.key_lines == other.key_lines
            and self.source_text == other.source_text
            and self.duplicate_keys == other.duplicate_keys
        )

    __hash__ = None  # type: ignore[assignment]  # mutable contents, like the dataclass was

    def __repr__(self) -> str:
        return (
            f"ParsedFrontmatter(path={self.path_str!r}, data={self.data!r}, "
            f"body_offset={self.body_offset!r}, key_lines={self.key_lines!r}, "
            f"source_text={self.source_text!r}, duplicate_keys={self.duplicate_keys!r})"
        )


def find_skill_md(folder: Path) -> Path | None:
    """``SKILL.md`` in ``folder``, else ``skill.md`` (as skills-ref and Claude Code do)."""
    for name in ("SKILL.md", "skill.md"):
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def parse_skill_md(path: Path | str) -> ParsedFrontmatter:
    """Parse the frontmatter of ``path`` without reading the body.

    Raises :class:`SkillParseError` (``code`` SD001–SD008, ``line``, ``path``) when the
    file has no frontmatter, an unclosed one, invalid UTF-8 or YAML, or YAML that is not
    a mapping or is too large or too deeply nested to be a real frontmatter.
    """
    raw, yaml_start, close_start, body_offset, stamp = _read_frontmatter(path)
    try:
        text = raw[yaml_start:close_start].decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, yaml_start + e.start) + 1
        raise SkillParseError(
            f"frontmatter is not valid UTF-8 ({e.reason} at byte {yaml_start + e.start}); "
            "save the file as UTF-8",
            path=path,
            line=line,
            code=SD_ENCODING,
        ) from e
    return _parse_text(text, path, body_offset, 2, stamp)


def parse_yaml_text(
    text: str, *, path: Path, body_offset: int = 0, first_line: int = 1
) -> ParsedFrontmatter:
    """Parse frontmatter YAML ``text`` whose first line is file line ``first_line``."""
    return _parse_text(text, path, body_offset, first_line, None)


def _parse_text(
    text: str, path: Path | str, body_offset: int, first_line: int, stamp: tuple[int, int] | None
) -> ParsedFrontmatter:
    parsed = parse_simple(text, first_line, plain_value, RETYPABLE_FIRST)
    if parsed is None:
        where = path if isinstance(path, Path) else Path(path)
        parsed = compose_mapping(text, path=where, first_line=first_line)
    data, lines, source, duplicates = parsed
    return ParsedFrontmatter(path, data, body_offset, lines, source, tuple(duplicates), stamp)


# ---- reading -------------------------------------------------------------------


def _read_frontmatter(path: Path | str) -> tuple[bytes, int, int, int, tuple[int, int]]:
    """Read chunks until the closing ``---`` line.

    Returns ``(buffer, yaml_start, close_start, body_offset, stamp)``: the YAML is
    ``buffer[yaml_start:close_start]``, the body starts at ``body_offset``, and
    ``stamp`` is the file's ``(mtime_ns, size)`` taken before reading. Unbuffered
    ``os.read`` on purpose: a buffered ``open()`` costs more than the parse of a
    typical frontmatter.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as e:
        raise _unreadable(path, e) from e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SkillParseError(
                "not a regular file (a FIFO, device or socket cannot be a SKILL.md)",
                path=path,
                code=SD_UNREADABLE,
            )
        return (*_scan(fd, path), (st.st_mtime_ns, st.st_size))
    except OSError as e:
        raise _unreadable(path, e) from e
    finally:
        os.close(fd)


def _file_word(path: Path | str) -> str:
    """What a message calls the file: ``SKILL.md``, or an agent's ``reviewer.md``."""
    name = Path(path).name
    return "SKILL.md" if name.lower() == "skill.md" or not name else name


def _scan(fd: int, path: Path | str) -> tuple[bytes, int, int, int]:
    buf = os.read(fd, _CHUNK)
    if buf[:4] == b"---\n":  # the usual opening: skip the general checks below
        match = _CLOSE_RE.search(buf, 4)
        if match is not None and match.end() < len(buf) and match.start() <= MAX_FRONTMATTER_BYTES:
            return buf, 4, match.start(), match.end() + 1
    eof = not buf
    start = 3 if buf.startswith(_BOM) else 0
    first_end = buf.find(b"\n", start)
    first = buf[start:] if first_end < 0 else buf[start:first_end]
    if first.rstrip(b" \t\r") != b"---":
        raise SkillParseError(
            f"{_file_word(path)} must start "
            "with a `---` line opening the YAML frontmatter "
            "(with `name:` and `description:`), closed by another `---` line",
            path=path,
            line=1,
            code=SD_NO_FRONTMATTER,
        )
    if first_end < 0:
        raise _unclosed(path)
    yaml_start = search = first_end + 1
    while True:
        match = _CLOSE_RE.search(buf, search)
        if match is not None and (match.end() < len(buf) or eof):
            if match.start() - yaml_start > MAX_FRONTMATTER_BYTES:
                raise _too_large(path)
            # body after the newline, or at the end when `---` is the last line
            return buf, yaml_start, match.start(), min(match.end() + 1, len(buf))
        if eof:
            raise _unclosed(path)
        if len(buf) - yaml_start > MAX_FRONTMATTER_BYTES:
            raise _too_large(path)
        # resume at the start of the last (possibly incomplete) line
        search = max(yaml_start, buf.rfind(b"\n") + 1)
        more = os.read(fd, max(_CHUNK, len(buf)))
        eof = not more
        buf += more


def _too_large(path: Path | str) -> SkillParseError:
    return SkillParseError(
        f"no closing `---` within the first {MAX_FRONTMATTER_BYTES // 1024} KiB: the "
        "frontmatter is unclosed or too large (keep it short; move text into the body)",
        path=path,
        line=1,
        code=SD_TOO_LARGE,
    )


def _unreadable(path: Path | str, e: OSError) -> SkillParseError:
    return SkillParseError(f"cannot read file: {e.strerror or e}", path=path, code=SD_UNREADABLE)


def _unclosed(path: Path | str) -> SkillParseError:
    return SkillParseError(
        "frontmatter opened with `---` on line 1 is never closed: add a `---` line "
        "after the last `key: value` line",
        path=path,
        line=1,
        code=SD_UNCLOSED,
    )
