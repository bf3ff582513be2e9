"""``.skill`` packages: pack a folder, install one safely, verify and uninstall.

A ``.skill`` file is a zip in the layout Anthropic's packager writes — every file
under one ``<skill-name>/`` folder — so it uploads to Claude as is. skilldeck adds two
hidden files inside that folder:

* ``<name>/.skill-manifest.json`` — the sha256 of every other file (sorted JSON);
* ``<name>/.skill-signature`` — optional ed25519 signature over the manifest bytes
  (see :mod:`skilldeck.skills.packaging.signing`).

Packing validates the skill first and is deterministic: entries are sorted and carry
a fixed timestamp, so packing the same folder twice gives the same bytes (ed25519
signatures are deterministic too). ``__pycache__``, ``*.pyc``, ``.DS_Store``,
``node_modules`` and ``.git`` are left out.

Installing unpacks into a temp dir next to the target (:mod:`skilldeck.skills.packaging.unpack`
does the hostile-archive checks), checks every file against the manifest, verifies the
signature when a key is given, validates the skill, then renames the folder into place
— so a failure leaves nothing half-installed — and records it in ``skills.lock``
(:mod:`skilldeck.skills.packaging.lockfile`). ``--force`` moves the old copy to
``<scope dir>/backups/<name>.bak-<timestamp>`` (outside the skills root, so discovery
never sees two skills of one name).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skilldeck._atomic import atomic_write_bytes
from skilldeck.config import Settings
from skilldeck.errors import PackageError
from skilldeck.skills.model.diagnostics import warnings_of
from skilldeck.skills.packaging import hooks
from skilldeck.skills.packaging.hooks import InstallOptions, StagedCheck, StagedSkill
from skilldeck.skills.packaging.lockfile import (
    MANIFEST_NAME,
    SIGNATURE_NAME,
    LockEntry,
    Origin,
    Scope,
    VerifyProblem,
    collect_files,
    installed,
    open_file,
    tree_digest,
    verify,
)
from skilldeck.skills.packaging.placement import (
    commit_and_record,
    prepared_root,
    safe_name,
    uninstall,
)
from skilldeck.skills.packaging.signing import (
    check_manifest_name,
    check_package,
    keygen,
    load_private_key,
    load_public_key,
    sign,
    signer_of,
)
from skilldeck.skills.packaging.skillpack import is_encrypted
from skilldeck.skills.packaging.sourcelabel import source_label, validated
from skilldeck.skills.packaging.unpack import (
    MAX_BYTES,
    MAX_FILES,
    Staged,
    copy_folder,
    extract_archive,
)

__all__ = [
    "MAX_BYTES",
    "MAX_FILES",
    "InstalledSkill",
    "VerifyProblem",
    "check_output",
    "install",
    "installed",
    "keygen",
    "pack",
    "uninstall",
    "verify",
]

MANIFEST_FORMAT = "skilldeck.manifest/1"
#: 1980-01-01, the earliest zip timestamp: every entry gets it, so packs are reproducible
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
#: cap on a folder's manifest/signature read into memory (as for an archive's)
_META_CAP = 8 * 1024 * 1024
log = logging.getLogger(__name__)


# ---- pack -----------------------------------------------------------------------------


def pack(
    folder: Path,
    *,
    output: Path | None = None,
    sign_key: Path | None = None,
    warnings: list[str] | None = None,
) -> Path:
    """Validate the skill in ``folder`` and write ``<name>.skill``; returns its path.

    ``output`` is a file path or an existing directory (default: the current
    directory). ``sign_key`` is an ed25519 private key file made by :func:`keygen`.
    FIFOs, sockets and devices in the folder are left out; each is named in
    ``warnings`` (and logged).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise PackageError(f"{folder} is not a directory; pass a skill folder to pack.")
    skill = validated(folder, str(folder), local=True)  # any validation error refuses it
    key = load_private_key(sign_key) if sign_key else None
    dest = _output_path(output, safe_name(skill.name))
    check_output(dest, folder, sign_key)
    skipped: list[str] = []
    files = collect_files(folder, max_files=MAX_FILES, max_bytes=MAX_BYTES, skipped=skipped)
    _report_skipped(skipped, warnings)
    files.pop(_relative_inside(dest, folder) or "", None)  # never pack the package itself
    buf = io.BytesIO()
    hashes: dict[str, str] = {}
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel, real in files.items():
            with open_file(real) as fh:
                data = fh.read()
            hashes[rel] = hashlib.sha256(data).hexdigest()
            zf.writestr(_zip_info(f"{skill.name}/{rel}", real.stat().st_mode), data)
        manifest = manifest_bytes(skill.name, skill.version, hashes)
        zf.writestr(_zip_info(f"{skill.name}/{MANIFEST_NAME}", 0o644), manifest)
        if key is not None:
            zf.writestr(_zip_info(f"{skill.name}/{SIGNATURE_NAME}", 0o644), sign(manifest, key))
    atomic_write_bytes(dest, buf.getvalue())
    return dest


def _report_skipped(skipped: list[str], warnings: list[str] | None) -> None:
    for message in skipped:
        log.warning("%s", message)
    if warnings is not None:
        warnings.extend(skipped)


def manifest_bytes(name: str, version: str | None, files: dict[str, str]) -> bytes:
    doc = {"format": MANIFEST_FORMAT, "name": name, "version": version, "files": files}
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8")


def _zip_info(arcname: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(arcname, date_time=_ZIP_EPOCH)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3  # unix, so the mode bits below are honoured
    info.external_attr = (0o100755 if mode & 0o111 else 0o100644) << 16
    return info


def _output_path(output: Path | None, name: str) -> Path:
    if output is None:
        return Path.cwd() / f"{name}.skill"
    output = Path(output)
    return output / f"{name}.skill" if output.is_dir() else output


def check_output(dest: Path, folder: Path, sign_key: Path | None = None) -> None:
    """Refuse a package path that would destroy something: a file of the skill (``-o
    SKILL.md``; a ``.skill`` file in the folder is fine and left out of the package),
    the signing key, an existing file that is not an earlier package (notes.md, a
    .docx: any zip without a skilldeck manifest)."""
    if _relative_inside(dest, folder) is not None and dest.suffix.lower() != ".skill":
        raise PackageError(
            f"{dest} is inside the skill folder {folder}; write the package elsewhere "
            "(-o ../NAME.skill) or name it NAME.skill."
        )
    if sign_key is not None and dest.exists() and dest.resolve() == Path(sign_key).resolve():
        raise PackageError(f"{dest} is the signing key; write the package elsewhere.")
    if dest.is_file() and not (_is_skill_zip(dest) or is_encrypted(dest)):
        raise PackageError(
            f"{dest} exists and is not a skill package; remove it or choose another -o "
            "(only an earlier .skill or .skillpack is replaced)."
        )


def _is_skill_zip(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as zf:
            return any(n.rsplit("/", 1)[-1] == MANIFEST_NAME for n in zf.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def _relative_inside(path: Path, folder: Path) -> str | None:
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return None


# ---- install --------------------------------------------------------------------------


@dataclass
class InstalledSkill:
    name: str
    version: str | None
    scope: Scope
    path: Path
    source: str
    files: int
    digest: str
    #: key id of the signature checked with ``verify_key``; None when not verified
    signed_by: str | None = None
    #: key id an unverified signature claims (informational only)
    claimed_signer: str | None = None
    backup: Path | None = None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["path"] = str(self.path)
        data["backup"] = str(self.backup) if self.backup else None
        return data


def install(
    source: Path,
    *,
    scope: Scope = "workspace",
    verify_key: Path | None = None,
    force: bool = False,
    settings: Settings,
    identity: Path | None = None,
    allow_risk: bool = False,
    origin: Origin | None = None,
    checks: Sequence[StagedCheck] | None = None,
) -> InstalledSkill:
    """Install a ``.skill`` file or a skill folder into ``scope``'s skills root.

    The one install flow (remote sources fetch into a temp dir and call this with
    ``origin``): open (:data:`~skilldeck.skills.packaging.hooks.OPENERS`), stage,
    check manifest and signature, validate, run ``checks`` (default
    :data:`~skilldeck.skills.packaging.hooks.STAGED_CHECKS`), then rename into place
    and record the lock entry. Refuses hostile archives, files that do not match the
    package manifest, a missing or bad signature when ``verify_key`` is given, an
    invalid skill, and an existing skill unless ``force``. Nothing is written outside
    the scope's ``.skilldeck`` dir.
    """
    options = InstallOptions(scope, verify_key, force, identity, allow_risk, origin)
    source = Path(source)
    public = load_public_key(verify_key) if verify_key else None
    with prepared_root(settings, scope) as root:  # removed again if nothing is installed
        ready, entry, backup = _install_staged(source, options, public, root, settings, checks)
    return InstalledSkill(
        name=entry.name,
        version=entry.version,
        scope=scope,
        path=root / entry.name,
        source=entry.source,
        files=len(entry.files),
        digest=entry.digest,
        signed_by=ready.signed_by,
        claimed_signer=(
            signer_of(ready.signature) if ready.signature and not ready.signed_by else None
        ),
        backup=backup,
        warnings=[*ready.warnings, *_staged_warnings(ready)],
    )


def _install_staged(
    source: Path,
    options: InstallOptions,
    public: Any,
    root: Path,
    settings: Settings,
    checks: Sequence[StagedCheck] | None,
) -> tuple[StagedSkill, LockEntry, Path | None]:
    """Stage, check and commit one skill (``install``'s steps inside its root)."""
    staging = Path(tempfile.mkdtemp(prefix=".install-", dir=root.parent))
    try:
        staged = _stage(_opened(source, options, staging), staging, options.origin)
        signed_by = check_package(staged.manifest, staged.signature, staged.files, public)
        label = source_label(source, options.origin, staged.top)
        local = options.origin is None or options.origin.kind == "local"
        ready = StagedSkill(
            staged.folder,
            staged.files,
            validated(staged.folder, label, local=local),
            staged.manifest,
            staged.signature,
            signed_by,
            [*staged.skipped],
        )
        entry = _lock_entry(ready, source, options.origin)
        check_manifest_name(staged.manifest, entry.name)
        for check in hooks.STAGED_CHECKS if checks is None else checks:
            check(ready, options)
        entry.signed_by = ready.signed_by  # a check may have verified one
        backup = commit_and_record(
            staged, entry, root, settings=settings, scope=options.scope, force=options.force
        )
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return ready, entry, backup


#: SD101 (name differs from its folder) judged a staging folder's name; the installed
#: folder is named after the skill, so it never applies to the installed copy
_NOT_FOR_INSTALLED = frozenset({"SD101"})


def _staged_warnings(ready: StagedSkill) -> list[str]:
    """The validation warnings that hold for the installed copy."""
    return [
        str(d) for d in warnings_of(ready.skill.diagnostics) if d.code not in _NOT_FOR_INSTALLED
    ]


def _opened(source: Path, options: InstallOptions, staging: Path) -> Path:
    """``source``, or what its suffix's opener turns it into (a plain ``.skill``)."""
    opener = hooks.opener_for(source) if source.is_file() else None
    if opener is None:
        return source
    workdir = staging / ".opened"
    workdir.mkdir()
    return opener(source, options, workdir)


def _lock_entry(ready: StagedSkill, source: Path, origin: Origin | None) -> LockEntry:
    entry = LockEntry(
        name=safe_name(ready.skill.name),
        version=ready.skill.version,
        source=str(source.resolve()),
        installed_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        digest=tree_digest(ready.files),
        files=dict(sorted(ready.files.items())),
        signed_by=ready.signed_by,
    )
    if origin is not None:
        entry.source = origin.source
        entry.kind, entry.ref, entry.commit = origin.kind, origin.ref, origin.commit
        entry.subpath, entry.pinned = origin.subpath, origin.pinned
    return entry


def _member(origin: Origin | None) -> str | None:
    """The folder of the one skill to unpack from an archive holding several: a
    local or downloaded archive's ``subpath`` (a git or index skill arrives as a
    folder of its own)."""
    if origin is None or origin.kind not in ("local", "url"):
        return None
    return origin.subpath or None


def _stage(source: Path, staging: Path, origin: Origin | None = None) -> Staged:
    if source.is_dir():
        staged = copy_folder(source, staging)
        for attr, filename in (("manifest", MANIFEST_NAME), ("signature", SIGNATURE_NAME)):
            meta = source / filename
            if meta.is_file() and not meta.is_symlink():
                with open_file(meta) as fh:
                    setattr(staged, attr, fh.read(_META_CAP + 1)[:_META_CAP])
        return staged
    if source.is_file():
        # a download is named by its URL, not the temp file it was saved to
        label = origin.source if origin is not None and origin.kind == "url" else None
        return extract_archive(source, staging, _member(origin), label=label)
    raise PackageError(f"{source} does not exist; pass a .skill file or a skill folder.")
