"""A :class:`SourceSpec` opened: the skills it holds, fetched into a work dir on demand.

Each kind answers two questions the same way — which skills are here
(:meth:`Opened.candidates`, cheap: a git ``ls-tree``, an index, one download) and
"put these on disk" (:meth:`Opened.materialize`, which returns local paths plus the
:class:`~skilldeck.skills.packaging.lockfile.Origin` to record). Installing is not
done here: the paths go to the one install flow,
:func:`skilldeck.skills.packaging.package.install`.
"""

from __future__ import annotations

import os
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

import httpx2

from skilldeck.errors import NotASkillSourceError, PackageError, SkilldeckError
from skilldeck.skills.format import find_skill_md, parse_skill_md, parse_yaml_text
from skilldeck.skills.packaging.lockfile import Origin, is_excluded
from skilldeck.skills.packaging.unpack import archive_skills
from skilldeck.skills.sources.gitsource import GitCheckout, fetch_commit
from skilldeck.skills.sources.httpsource import download, save
from skilldeck.skills.sources.index import IndexEntry, fetch_skill, read_index
from skilldeck.skills.sources.spec import FetchOptions, SourceSpec

__all__ = ["Candidate", "Opened", "open_source"]

#: how deep a local folder is searched for skills when it is not one itself
_LOCAL_DEPTH = 6


@dataclass(frozen=True)
class Candidate:
    name: str
    description: str
    #: where it is inside the source: a folder ("" for the top) or an index name
    subpath: str


@dataclass(frozen=True)
class Materialized:
    candidate: Candidate
    path: Path
    #: None for a local install (the lock records the resolved path, as before)
    origin: Origin | None


class Opened(Protocol):
    spec: SourceSpec

    def candidates(self) -> list[Candidate]: ...

    def materialize(self, chosen: list[Candidate]) -> list[Materialized]: ...


def open_source(
    spec: SourceSpec, workdir: Path, options: FetchOptions, client: httpx2.Client
) -> Opened:
    if spec.kind == "local":
        return _Local(spec)
    if spec.kind == "git":
        checkout = fetch_commit(spec.location, spec.ref, workdir, options)
        return _Git(spec, checkout, workdir)
    if spec.kind == "index":
        return _Index(spec, workdir, options, client, read_index(client, spec.location, options))
    return _Url(spec, workdir, download(client, spec.location, options))


def _describe(skill_md: Path, fallback: str) -> Candidate:
    """Name and description from a SKILL.md's frontmatter (the folder's name if broken)."""
    try:
        data = parse_skill_md(skill_md).data
    except SkilldeckError:
        return Candidate(fallback, "", "")
    name, description = data.get("name"), data.get("description")
    return Candidate(
        name if isinstance(name, str) and name else fallback,
        description if isinstance(description, str) else "",  # no repr of a list or null
        "",
    )


@dataclass
class _Local:
    spec: SourceSpec

    def candidates(self) -> list[Candidate]:
        root = Path(self.spec.location)
        if root.is_file():
            return _archive_candidates(root)
        if not root.is_dir() or find_skill_md(root) is not None:
            return [Candidate(root.stem or root.name, "", "")]
        found = [
            Candidate(c.name, c.description, rel)
            for rel, c in ((rel, _describe(md, Path(rel).name)) for rel, md in _local_skills(root))
        ]
        return found or [Candidate(root.name, "", "")]

    def materialize(self, chosen: list[Candidate]) -> list[Materialized]:
        root = Path(self.spec.location)
        if root.is_file():  # an archive: one of several skills is its folder inside
            source = str(root.resolve())
            return [
                Materialized(c, root, Origin("local", source, subpath=c.subpath))
                if c.subpath
                else Materialized(c, root, None)
                for c in chosen
            ]
        return [Materialized(c, root / c.subpath if c.subpath else root, None) for c in chosen]


_ARCHIVE_MD_CAP = 256 * 1024


def _archive_candidates(path: Path) -> list[Candidate]:
    """The skills of a ``.skill``/``.zip``: one (subpath "") for a package in the
    usual layout, else one per skill folder inside it. An archive that cannot be
    read is one candidate: install then says what is wrong with it."""
    try:
        found = archive_skills(path)
    except PackageError:
        found = None
    if not found:
        return [Candidate(_archive_skill_name(path) or path.stem or path.name, "", "")]
    with zipfile.ZipFile(path) as archive:
        out = []
        for skill in found:
            fallback = skill.folder.rsplit("/", 1)[-1]
            data = _archive_frontmatter(archive, skill.info, path)
            name, description = data.get("name"), data.get("description")
            out.append(
                Candidate(
                    name if isinstance(name, str) and name else fallback,
                    description if isinstance(description, str) else "",
                    skill.folder,
                )
            )
    return out


def _archive_frontmatter(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path
) -> dict[str, object]:
    """The frontmatter of an archived SKILL.md, for listing and messages only (install
    reads the archive properly); empty when it is too large or unreadable."""
    try:
        if info.file_size > _ARCHIVE_MD_CAP:
            return {}
        with archive.open(info) as fh:
            text = fh.read(_ARCHIVE_MD_CAP).decode("utf-8", "replace")
        head, sep, rest = text.lstrip("\ufeff").partition("---\n")
        yaml_text = rest.partition("\n---")[0] if sep and not head.strip() else ""
        return dict(parse_yaml_text(yaml_text, path=path).data)
    except (OSError, zipfile.BadZipFile, SkilldeckError, ValueError):
        return {}


def _archive_skill_name(path: Path) -> str | None:
    """The ``name`` in the SKILL.md of a ``.skill``/``.zip`` (top level or one folder
    down), for messages only — install reads the archive properly; None if unreadable."""
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                parts = info.filename.split("/")
                if parts[-1] in ("SKILL.md", "skill.md") and len(parts) <= 2:
                    name = _archive_frontmatter(archive, info, path).get("name")
                    return name if isinstance(name, str) and name else None
    except (OSError, zipfile.BadZipFile):
        return None
    return None


def _local_skills(root: Path) -> list[tuple[str, Path]]:
    """``(relative folder, SKILL.md)`` for every skill below ``root`` (real folders only)."""
    out: list[tuple[str, Path]] = []
    for here, dirs, _files in os.walk(root):
        rel = Path(here).relative_to(root)
        dirs[:] = sorted(
            d
            for d in dirs
            if not is_excluded((*rel.parts, d, "x"))
            and not d.startswith(".")
            and not (Path(here) / d).is_symlink()
            and len(rel.parts) < _LOCAL_DEPTH
        )
        if rel.parts and (md := find_skill_md(Path(here))) is not None:
            out.append((rel.as_posix(), md))
            dirs[:] = []  # a skill's own folders are its resources, not more skills
    return out


def _plain_skill_md(folder: Path) -> Path | None:
    """The folder's SKILL.md if it is a regular file (a checked-out symlink could point
    anywhere on this machine: it is not read, install refuses it later)."""
    for name in ("SKILL.md", "skill.md"):
        path = folder / name
        if path.is_file() and not path.is_symlink():
            return path
    return None


@dataclass
class _Git:
    spec: SourceSpec
    checkout: GitCheckout
    workdir: Path
    _found: list[Candidate] = field(default_factory=list)

    def candidates(self) -> list[Candidate]:
        if not self._found:
            repo = re.split(r"[/:]", self.spec.location.rstrip("/"))[-1]
            fallback_top = repo.removesuffix(".git") or "skill"
            folders = self.checkout.skill_folders(self.spec.subpath)
            root = self.checkout.skill_files(folders)
            for folder in folders:
                fallback = Path(folder).name or fallback_top
                md = _plain_skill_md(root / folder if folder else root)
                found = _describe(md, fallback) if md else Candidate(fallback, "", "")
                self._found.append(Candidate(found.name, found.description, folder))
        return self._found

    def materialize(self, chosen: list[Candidate]) -> list[Materialized]:
        root = self.checkout.checkout([c.subpath for c in chosen])
        return [
            Materialized(
                c,
                root / c.subpath if c.subpath else root,
                Origin("git", self.spec.location, self.spec.ref, self.checkout.commit, c.subpath),
            )
            for c in chosen
        ]


@dataclass
class _Url:
    spec: SourceSpec
    workdir: Path
    data: bytes
    _saved: Path | None = None

    def _path(self) -> Path:
        if self._saved is None:
            self._saved = self._save()
        return self._saved

    def _save(self) -> Path:
        name = urlsplit(self.spec.location).path.rstrip("/").rsplit("/", 1)[-1]
        if name.lower() == "skill.md":
            md = save(self.data, self.workdir / "raw" / "SKILL.md")
            named = _describe(md, "skill").name
            folder = self.workdir / "url" / Path(named).name
            save(self.data, folder / "SKILL.md")
            return folder
        return save(self.data, self.workdir / "url" / Path(name).name)

    def candidates(self) -> list[Candidate]:
        path = self._path()
        if path.is_file():  # a package: one skill, or several in their folders
            found = _archive_candidates(path)
            if len(found) > 1 or found[0].subpath:
                return found
        return [Candidate(Path(urlsplit(self.spec.location).path).stem, "", "")]

    def materialize(self, chosen: list[Candidate]) -> list[Materialized]:
        path = self._path()
        return [
            Materialized(c, path, Origin("url", self.spec.location, subpath=c.subpath or None))
            for c in chosen
        ]


@dataclass
class _Index:
    spec: SourceSpec
    workdir: Path
    options: FetchOptions
    client: httpx2.Client
    entries: list[IndexEntry]

    def candidates(self) -> list[Candidate]:
        if not self.entries:
            raise NotASkillSourceError(f"{self.spec.location} lists no skills.")
        return [Candidate(e.name, e.description, e.name) for e in self.entries]

    def materialize(self, chosen: list[Candidate]) -> list[Materialized]:
        by_name = {e.name: e for e in self.entries}
        out = []
        for c in chosen:
            entry = by_name[c.subpath]
            path = fetch_skill(
                self.client, self.spec.location, entry, self.workdir / "index", self.options
            )
            origin = Origin("index", self.spec.location, commit=entry.digest, subpath=entry.name)
            out.append(Materialized(c, path, origin))
        return out
