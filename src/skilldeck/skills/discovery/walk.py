"""The walk: every SKILL.md under one root, symlink-safe, in a stable order.

A folder holding ``SKILL.md`` (or ``skill.md``) is a skill, and the walk keeps
descending into it, so nested skills are found; a root that is itself a skill is
found too. A skill's own resource folders (the spec's ``scripts/``, ``references/``
and ``assets/``) are not searched: what they hold belongs to that skill, and a
``SKILL.md`` there is a template or an example (skill-authoring skills ship
``assets/templates/SKILL.md`` scaffolds), not a skill to offer the model. Skipping
them also keeps large asset trees out of every discovery.

Entries are visited sorted by name, parents before what they contain, so "first
found" is the same on every machine. Hidden folders are walked
(``.claude/skills``, Codex's ``.system`` and ``.curated`` collections hold real
skills); VCS, dependency and tool-cache folders are not.

Symlinks are followed. Every folder is identified by ``(st_dev, st_ino)``: a link back
to a folder that contains it is a loop (reported, not followed), a second alias of a
folder already walked is skipped, and a link to nothing is reported as dangling.

The result, :class:`Tree`, also records what the snapshot cache needs to tell later
whether the walk would come out the same (folder mtimes, symlink states).
"""

from __future__ import annotations

import errno
import operator
import os
import stat as stat_mod
from collections.abc import Callable
from pathlib import Path

from skilldeck.skills.model.diagnostics import Diagnostic, Severity

__all__ = [
    "DANGLING_SYMLINK",
    "MAX_DEPTH",
    "RESOURCE_DIRS",
    "ROOT_NOT_FOUND",
    "SKILL_FILENAMES",
    "SKIP_DIRS",
    "SYMLINK_LOOP",
    "TOO_DEEP",
    "UNREADABLE_DIR",
    "Tree",
    "diagnostic",
    "link_state",
    "walk_tree",
]

SKILL_FILENAMES = ("SKILL.md", "skill.md")
#: Folders never worth descending into: VCS data, dependency trees, tool caches.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".cache",
        ".idea",
        ".vscode",
        ".DS_Store",
    }
)

#: A skill folder's resource folders (Agent Skills spec), not searched for skills.
RESOURCE_DIRS = frozenset({"scripts", "references", "assets"})

# Stable diagnostic codes of the discovery layer (SD2xx). Never renumber.
SYMLINK_LOOP = ("SD201", "symlink-loop")
DANGLING_SYMLINK = ("SD202", "dangling-symlink")
UNREADABLE_DIR = ("SD203", "unreadable-directory")
ROOT_NOT_FOUND = ("SD204", "root-not-found")
TOO_DEEP = ("SD205", "too-deep")

#: folder levels below a root the walk descends (real skill trees use a handful; a
#: planted 500-level tree is cut here and reported, not walked to the bottom)
MAX_DEPTH = 128

#: Link states recorded in a snapshot and re-checked on the warm path.
LINK_DIR, LINK_FILE, LINK_DANGLING = "d", "f", "x"


class Tree:
    """The shape of a root as far as discovery cares, with paths relative to it.

    ``dirs`` maps every folder visited to its mtime (a changed listing changes the
    mtime, so an unchanged set of mtimes means an unchanged set of skill files);
    ``links`` maps every symlink met to what it pointed at (``d``/``f``/``x``),
    because a dangling link that starts resolving changes no folder's mtime.
    ``with_code`` holds the SKILL.md paths whose folder also holds a ``skill.py``
    (a code skill), seen in the same listing, so loading needs no extra ``stat``.

    A plain class, compared by value, rather than a ``@dataclass`` (whose generated
    methods cost half a millisecond at every import: ``python -m bench startup``,
    ``skills validate``).
    """

    __slots__ = ("diagnostics", "dirs", "links", "root", "skill_mds", "with_code")

    def __init__(
        self,
        root: str,
        skill_mds: list[str] | None = None,
        dirs: dict[str, int] | None = None,
        links: dict[str, str] | None = None,
        diagnostics: list[Diagnostic] | None = None,
        with_code: set[str] | None = None,
    ) -> None:
        self.root = root
        self.skill_mds: list[str] = [] if skill_mds is None else skill_mds
        self.dirs: dict[str, int] = {} if dirs is None else dirs
        self.links: dict[str, str] = {} if links is None else links
        self.diagnostics: list[Diagnostic] = [] if diagnostics is None else diagnostics
        self.with_code: set[str] = set() if with_code is None else with_code

    def _key(self) -> tuple[object, ...]:
        return (self.root, self.skill_mds, self.dirs, self.links, self.diagnostics, self.with_code)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Tree:
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable, like a dataclass

    def __repr__(self) -> str:
        return f"Tree(root={self.root!r}, skill_mds={self.skill_mds!r})"


def walk_tree(root: Path | str, *, found: Callable[[str], None] | None = None) -> Tree:
    """Depth-first, sorted, symlink-safe scan of ``root`` for SKILL.md files.
    ``found`` is told each SKILL.md path (relative, as in ``Tree.skill_mds``) the
    moment it is added, so work on it can start before the walk ends."""
    walker = _Walker(str(root), found)
    walker.run()
    return walker.tree


class _Frame:
    """One folder being listed: where its listing stands and what it has met so far
    (the walk keeps these on a stack instead of recursing, so depth costs no stack)."""

    __slots__ = ("base", "entries", "has_code", "index", "key", "skill_rel", "upper_seen")

    def __init__(self, rel: str, key: tuple[int, int], entries: list[os.DirEntry[str]]) -> None:
        self.base = f"{rel}/" if rel else ""
        self.key = key
        self.entries = entries
        self.index = 0
        self.upper_seen = False
        self.skill_rel: str | None = None
        self.has_code = False


class _Walker:
    def __init__(self, root: str, found: Callable[[str], None] | None = None) -> None:
        self.tree = Tree(root)
        self._found = found
        self._visited: set[tuple[int, int]] = set()
        self._ancestors: set[tuple[int, int]] = set()
        self._stack: list[_Frame] = []

    def run(self) -> None:
        root = self.tree.root
        try:
            st = os.stat(root)
        except OSError as e:
            self._unreadable(root, e)
            return
        self._enter(root, "", st)
        while self._stack:
            frame = self._stack[-1]
            if frame.index < len(frame.entries):
                entry = frame.entries[frame.index]
                frame.index += 1
                self._entry(frame, entry)  # may push the folder it names
            else:
                self._leave(frame)

    def _enter(self, path: str, rel: str, st: os.stat_result) -> None:
        """Start listing one folder. Entries are taken in name order, so ``SKILL.md``
        (upper case sorts first) is met before ``skill.md`` and both before
        ``skill.py``; only folders, links and those names cost more than a comparison."""
        key = (st.st_dev, st.st_ino)
        self._visited.add(key)
        self._ancestors.add(key)
        self.tree.dirs[rel] = st.st_mtime_ns
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=_by_name)
        except OSError as e:
            self._unreadable(path, e)
            self.tree.dirs[rel] = -1  # never trusted: re-listed until it is readable
            entries = []
        self._stack.append(_Frame(rel, key, entries))

    def _leave(self, frame: _Frame) -> None:
        if frame.has_code and frame.skill_rel is not None:
            self.tree.with_code.add(frame.skill_rel)
        self._ancestors.discard(frame.key)
        self._stack.pop()

    def _entry(self, frame: _Frame, entry: os.DirEntry[str]) -> None:
        name = entry.name
        rel = frame.base + name
        if entry.is_symlink():
            is_skill_file = name == "SKILL.md" or (name == "skill.md" and not frame.upper_seen)
            frame.upper_seen = frame.upper_seen or name == "SKILL.md"
            descend = not _skipped(name, frame.entries)
            if self._link(entry, rel, is_skill_file=is_skill_file, descend=descend):
                frame.skill_rel = rel
            elif name == "skill.py":
                frame.has_code = entry.is_file()
        elif entry.is_dir():  # a real folder (not a link): its lstat is its stat
            frame.upper_seen = frame.upper_seen or name == "SKILL.md"  # it still hides skill.md
            if not _skipped(name, frame.entries):
                self._descend(entry.path, rel, entry.stat())
        elif name == "SKILL.md" or (name == "skill.md" and not frame.upper_seen):
            frame.upper_seen = frame.upper_seen or name == "SKILL.md"
            if entry.is_file():
                frame.skill_rel = rel
                self.tree.skill_mds.append(rel)
                if self._found is not None:
                    self._found(rel)
        elif name == "skill.py":
            frame.has_code = entry.is_file()

    def _descend(self, path: str, rel: str, st: os.stat_result) -> None:
        key = (st.st_dev, st.st_ino)
        if key in self._ancestors:
            self.tree.diagnostics.append(
                diagnostic(
                    SYMLINK_LOOP,
                    f"Symlink {path} points back to a folder that contains it "
                    f"({os.path.realpath(path)}); not followed.",
                    Path(path),
                )
            )
        elif len(self._stack) > MAX_DEPTH:
            self.tree.diagnostics.append(
                diagnostic(
                    TOO_DEEP,
                    f"Folder {path} is more than {MAX_DEPTH} levels below the root; it "
                    "and everything under it are skipped. Move skills nearer the root.",
                    Path(path),
                )
            )
        elif key not in self._visited:  # a second alias of a folder already scanned
            self._enter(path, rel, st)

    def _link(
        self, entry: os.DirEntry[str], rel: str, *, is_skill_file: bool, descend: bool
    ) -> bool:
        """Follow a symlink (into the folder it names only when ``descend``); True
        when it is this folder's skill file."""
        try:
            st = os.stat(entry.path)
        except OSError as e:
            self.tree.links[rel] = LINK_DANGLING
            why = "is a cycle of links" if e.errno == errno.ELOOP else "does not exist"
            self.tree.diagnostics.append(
                diagnostic(
                    DANGLING_SYMLINK,
                    f"Symlink {entry.path} points to {_readlink(entry.path)!r}, which {why}; "
                    "skipped.",
                    Path(entry.path),
                )
            )
            return False
        if stat_mod.S_ISDIR(st.st_mode):
            self.tree.links[rel] = LINK_DIR
            if descend:
                self._descend(entry.path, rel, st)
            return False
        self.tree.links[rel] = LINK_FILE
        if is_skill_file and stat_mod.S_ISREG(st.st_mode):
            self.tree.skill_mds.append(rel)
            if self._found is not None:
                self._found(rel)
            return True
        return False

    def _unreadable(self, path: str, error: OSError) -> None:
        self.tree.diagnostics.append(
            diagnostic(
                UNREADABLE_DIR,
                f"Cannot read folder {path} ({error.strerror}); skills below it are skipped.",
                Path(path),
            )
        )


_by_name = operator.attrgetter("name")


def _skipped(name: str, entries: list[os.DirEntry[str]]) -> bool:
    """Whether the folder ``name`` met in a listing of ``entries`` is left unwalked:
    a tool or dependency folder anywhere, or a resource folder of a skill."""
    if name in SKIP_DIRS:
        return True
    return name in RESOURCE_DIRS and _holds_skill_file(entries)


def _holds_skill_file(entries: list[os.DirEntry[str]]) -> bool:
    """Whether a listing has a ``SKILL.md``/``skill.md`` that is (or links to) a file:
    what makes its folder a skill. Asked only when a resource-named folder is met."""
    return any(entry.name in SKILL_FILENAMES and entry.is_file() for entry in entries)


def link_state(path: str) -> str:
    """What a symlink points at now: a folder, something else, or nothing."""
    try:
        st = os.stat(path)
    except OSError:
        return LINK_DANGLING
    return LINK_DIR if stat_mod.S_ISDIR(st.st_mode) else LINK_FILE


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def diagnostic(rule: tuple[str, str], message: str, path: Path) -> Diagnostic:
    code, slug = rule
    severity = Severity.ERROR if rule == ROOT_NOT_FOUND else Severity.WARNING
    return Diagnostic(code, slug, message, severity=severity, path=path)
