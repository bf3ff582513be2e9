"""Safe unpacking of a ``.skill`` archive (or copying of a skill folder) into a staging dir.

An archive is untrusted input. Before and while anything is written this refuses:
entries whose names escape (``../``, absolute paths, drive letters, NUL), symlink
entries pointing outside the skill, encrypted or duplicate entries, more than
:data:`MAX_FILES` files, and more than :data:`MAX_BYTES` unpacked — checked once on
the sizes the archive *declares* and again on the bytes actually inflated, because a
zip bomb lies about its sizes. Everything lands in ``dest`` (a fresh directory the
caller created next to the install target), so a refusal leaves nothing behind but a
folder the caller removes.

A symlink entry pointing at a file inside the skill is materialised as a copy of that
file: installed skills never contain symlinks, so nothing later can write through one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import re
import shutil
import stat
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from skilldeck.errors import PackageError
from skilldeck.skills.packaging.lockfile import (
    MANIFEST_NAME,
    MAX_DEPTH,
    PACKAGE_META_FILES,
    collect_files,
    is_excluded,
    open_file,
)

MAX_FILES = 10_000
MAX_BYTES = 100 * 1024 * 1024
#: cap on the manifest/signature files read into memory and on symlink targets
_META_CAP = 8 * 1024 * 1024
_LINK_CAP = 4096
_CHUNK = 1024 * 1024
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass
class Staged:
    """What was unpacked: the skill folder inside ``dest``, its files' hashes, and the
    package's manifest and signature bytes when it carried them."""

    folder: Path
    files: dict[str, str] = field(default_factory=dict)
    manifest: bytes | None = None
    signature: bytes | None = None
    #: special files (FIFOs, sockets, devices) left out, one message each
    skipped: list[str] = field(default_factory=list)
    #: the archive's top folder, which its members' names start with (None: a folder
    #: was copied, or SKILL.md sat at the archive's root) — for messages
    top: str | None = None


@dataclass(frozen=True)
class _Entry:
    info: zipfile.ZipInfo
    rel: str  # path inside the skill folder (top folder stripped), posix
    kind: str  # "file" | "symlink"


def safe_entry_name(raw: str) -> tuple[str, ...]:
    """The parts of an archive entry name, or PackageError if it could escape.

    Backslashes count as separators (archives made on Windows use them, and on
    Windows ``..\\`` escapes just like ``../``).
    """
    if "\x00" in raw:
        raise PackageError(f"Archive entry {raw!r} contains a NUL byte; refused.")
    name = raw.replace("\\", "/")
    if name.startswith("/") or _DRIVE.match(name):
        raise PackageError(f"Archive entry {raw!r} is an absolute path; refused.")
    parts = tuple(p for p in name.split("/") if p not in ("", "."))
    if ".." in parts:
        raise PackageError(f"Archive entry {raw!r} escapes the skill folder ('..'); refused.")
    if len(parts) > MAX_DEPTH + 2:  # the top folder and the file's own name
        raise PackageError(
            f"Archive entry {raw[:80]!r}… is nested {len(parts)} folders deep (limit "
            f"{MAX_DEPTH}); refused."
        )
    return parts


def _open_zip(archive: Path, label: str | None = None) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as e:
        shown = label or archive
        raise PackageError(f"{shown} is not a readable .skill (zip) archive: {e}") from e


def extract_archive(
    archive: Path, dest: Path, member: str | None = None, *, label: str | None = None
) -> Staged:
    """Unpack ``archive`` into ``dest/<top folder>`` after every safety check.

    ``member`` (a folder inside the archive, as :func:`archive_skills` names it)
    unpacks only the skill in that folder, of an archive holding several. ``label``
    names the archive in messages when ``archive`` is a download's temp file (its URL).
    """
    with _open_zip(archive, label) as zf:
        top, entries = _plan(zf, label or str(archive), member)
        folder = top.rsplit("/", 1)[-1] if top else "skill"
        staged = Staged(folder=dest / folder, top=top)
        staged.folder.mkdir(parents=True)
        links: list[_Entry] = []
        total = 0
        for entry in entries:
            if entry.kind == "symlink":
                links.append(entry)
            elif entry.rel in PACKAGE_META_FILES:
                data = _read_capped(zf, entry.info, _META_CAP)
                if entry.rel == MANIFEST_NAME:
                    staged.manifest = data
                else:
                    staged.signature = data
            else:
                total, staged.files[entry.rel] = _write_entry(zf, entry, staged.folder, total)
        for entry in links:
            staged.files[entry.rel] = _materialise_link(zf, entry, staged.folder, staged.files)
    return staged


_Raw = tuple[tuple[str, ...], zipfile.ZipInfo, str]


def _plan(
    zf: zipfile.ZipFile, archive: str, member: str | None = None
) -> tuple[str | None, list[_Entry]]:
    """Check names, kinds, counts and declared sizes; find the top folder to strip
    (``member``'s folder when given: only its entries are kept)."""
    raw = _checked_entries(zf, archive)
    if member:
        prefix = tuple(member.split("/"))
        raw = [r for r in raw if r[0][: len(prefix)] == prefix and len(r[0]) > len(prefix)]
        if not any(parts[len(prefix) :] in _SKILL_MD for parts, _, _ in raw):
            raise PackageError(
                f"{archive} holds no skill in {member}/ (no SKILL.md there); list what it "
                f"holds with `skilldeck skills install {archive}`."
            )
        top: str | None = member
        strip = len(prefix)
    else:
        top = _top_folder([parts for parts, _, _ in raw], archive)
        strip = 1 if top else 0
    entries = [_Entry(info, "/".join(parts[strip:]), kind) for parts, info, kind in raw]
    count = sum(1 for e in entries if e.rel not in PACKAGE_META_FILES)
    if count > MAX_FILES:
        raise PackageError(f"{archive} holds {count:,} files (limit {MAX_FILES:,}); refused.")
    declared = sum(info.file_size for _, info, _ in raw)
    if declared > MAX_BYTES:
        raise PackageError(
            f"{archive} would unpack to {declared:,} bytes (limit {MAX_BYTES:,}); refused."
        )
    return top, entries


def _checked_entries(zf: zipfile.ZipFile, archive: Path | str) -> list[_Raw]:
    """Every file and symlink entry: (its safe name's parts, its info, its kind)."""
    if len(zf.infolist()) > 2 * MAX_FILES:  # cheap early stop; the exact count is later
        raise PackageError(f"{archive} holds over {2 * MAX_FILES:,} entries; refused.")
    raw: list[_Raw] = []
    seen: set[str] = set()
    for info in zf.infolist():
        parts = safe_entry_name(info.filename)
        if not parts or info.is_dir() or is_excluded(parts):
            continue
        if info.flag_bits & 0x1:
            raise PackageError(f"Archive entry {info.filename!r} is encrypted; refused.")
        key = "/".join(parts)
        if key in seen:
            raise PackageError(f"Archive holds {info.filename!r} twice; refused.")
        seen.add(key)
        mode = info.external_attr >> 16
        kind = "symlink" if stat.S_ISLNK(mode) else "file"
        raw.append((parts, info, kind))
    return raw


_SKILL_MD = (("SKILL.md",), ("skill.md",))


@dataclass(frozen=True)
class ArchivedSkill:
    """A skill inside an archive that holds several: its folder and its SKILL.md."""

    #: the folder inside the archive, posix ("" for the archive's top)
    folder: str
    #: the SKILL.md's zip entry, to read its frontmatter from
    info: zipfile.ZipInfo


def archive_skills(archive: Path) -> list[ArchivedSkill] | None:
    """The skills ``archive`` holds, each by its folder — or None when it is a package
    of one skill in the usual layout (``<name>/SKILL.md`` or ``SKILL.md`` at its top),
    which :func:`extract_archive` takes without a ``member``. A skill's own sub-folders
    are its resources, not more skills. Hostile names are refused as when unpacking."""
    with _open_zip(archive) as zf:
        raw = _checked_entries(zf, archive)
    with contextlib.suppress(PackageError):
        _top_folder([parts for parts, _, _ in raw], archive)
        return None
    found: dict[tuple[str, ...], zipfile.ZipInfo] = {}
    for parts, info, _ in sorted(raw, key=lambda r: r[0][-1] != "SKILL.md"):
        if parts[-1:] in _SKILL_MD:  # SKILL.md wins over skill.md
            found.setdefault(parts[:-1], info)
    return [ArchivedSkill("/".join(f), found[f]) for f in _outermost(found)]


def _outermost(folders: Iterable[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The folders none of whose parents is in ``folders`` (sorted)."""
    unique = set(folders)
    return sorted(f for f in unique if not any(f[:n] in unique for n in range(len(f))))


def _top_folder(all_parts: list[tuple[str, ...]], archive: Path | str) -> str | None:
    """``<name>/SKILL.md`` layout (Anthropic's packager) → ``name``; a SKILL.md at the
    archive root → None; anything else is not a skill package."""
    firsts = {parts[0] for parts in all_parts}
    if len(firsts) == 1 and all(len(p) > 1 for p in all_parts):
        top = next(iter(firsts))
        if any(p[1:] in (("SKILL.md",), ("skill.md",)) for p in all_parts):
            return top
    if any(p in (("SKILL.md",), ("skill.md",)) for p in all_parts):
        return None
    skills = _outermost(p[:-1] for p in all_parts if p[-1:] in _SKILL_MD)
    if len(skills) > 1:
        raise PackageError(
            f"{archive} holds {len(skills)} skills; install one or all of them with "
            f"`skilldeck skills install {archive} --skill NAME` (or --all)."
        )
    raise PackageError(
        f"{archive} is not a skill package: expected <skill-name>/SKILL.md (or SKILL.md at "
        "the top) inside the archive."
    )


def _read_capped(zf: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes:
    with zf.open(info) as src:
        data = src.read(cap + 1)
    if len(data) > cap:
        raise PackageError(f"Archive entry {info.filename!r} is larger than {cap:,} bytes.")
    return data


def _write_entry(zf: zipfile.ZipFile, entry: _Entry, folder: Path, total: int) -> tuple[int, str]:
    """Inflate one file, counting real bytes against its declared size and the total."""
    target = folder / entry.rel
    target.parent.mkdir(parents=True, exist_ok=True)
    executable = bool((entry.info.external_attr >> 16) & 0o111)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    digest = hashlib.sha256()
    written = 0
    try:
        with zf.open(entry.info) as src, os.fdopen(os.open(target, flags, 0o644), "wb") as out:
            while chunk := src.read(_CHUNK):
                written += len(chunk)
                if written > entry.info.file_size or total + written > MAX_BYTES:
                    raise PackageError(
                        f"Archive entry {entry.info.filename!r} inflates beyond its declared "
                        f"size or the {MAX_BYTES // (1024 * 1024)} MiB limit (a zip bomb?); "
                        "refused."
                    )
                digest.update(chunk)
                out.write(chunk)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError) as e:
        raise PackageError(
            f"Cannot unpack {entry.info.filename!r}: the archive is corrupt or lies about its "
            f"sizes ({e}); refused."
        ) from e
    if executable:
        target.chmod(0o755)
    return total + written, digest.hexdigest()


def _materialise_link(
    zf: zipfile.ZipFile, entry: _Entry, folder: Path, files: dict[str, str]
) -> str:
    """A symlink entry → a copy of the in-package file it names (or a refusal)."""
    raw = _read_capped(zf, entry.info, _LINK_CAP).decode("utf-8", errors="replace")
    if raw.startswith(("/", "\\")) or _DRIVE.match(raw):
        raise PackageError(
            f"Archive entry {entry.info.filename!r} is a symlink to the absolute path {raw!r}; "
            "refused."
        )
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(entry.rel), raw))
    if joined == ".." or joined.startswith("../") or "\x00" in joined:
        raise PackageError(
            f"Archive entry {entry.info.filename!r} is a symlink pointing outside the skill "
            f"({raw!r}); refused."
        )
    if joined not in files:
        raise PackageError(
            f"Archive entry {entry.info.filename!r} is a symlink to {raw!r}, which is not a "
            "file in the package; refused."
        )
    target = folder / entry.rel
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(folder / joined, target)
    return files[joined]


def copy_folder(source: Path, dest: Path) -> Staged:
    """Copy a skill folder into ``dest/<folder name>`` under the same rules as an archive.
    FIFOs, sockets and devices are left out, each named in ``Staged.skipped``."""
    skipped: list[str] = []
    files = collect_files(source, max_files=MAX_FILES, max_bytes=MAX_BYTES, skipped=skipped)
    staged = Staged(folder=dest / source.resolve().name, skipped=skipped)
    staged.folder.mkdir(parents=True)
    total = 0
    for rel, real in files.items():
        target = staged.folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        with open_file(real) as src, target.open("xb") as out:
            while chunk := src.read(_CHUNK):
                total += len(chunk)
                if total > MAX_BYTES:  # the folder grew while we copied it
                    raise PackageError(f"{source} holds more than {MAX_BYTES:,} bytes; refused.")
                digest.update(chunk)
                out.write(chunk)
        if real.stat().st_mode & 0o111:
            target.chmod(0o755)
        staged.files[rel] = digest.hexdigest()
    return staged
