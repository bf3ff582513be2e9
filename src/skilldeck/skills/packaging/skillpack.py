"""Encrypted skill packs (``.skillpack``): a signed ``.skill`` encrypted with age.

A ``.skillpack`` is exactly what ``age -r RECIPIENT`` would write for the ``.skill``
archive (X25519 recipients, the binary age format, :mod:`pyrage`), so the two tools
interoperate both ways: ``age -d -i key.txt X.skillpack > X.skill`` opens a pack made
here, and a ``.skill`` encrypted with the ``age`` CLI (named ``.skillpack`` or
``.age``, binary or ``-a`` armored) installs here.

What it protects: the skill's files on the way — a mirror, a chat attachment, a
shared drive — are unreadable without one of the recipients' identities. What it
does not: whoever holds an identity can decrypt, and once installed the skill is
plain files that the user (and the model) read. Encryption is not authorship
either — anyone can encrypt to a public recipient — so the ``.skill`` inside must
carry an ed25519 signature (``skills pack --sign``). On install the signature is
checked against ``--verify KEY`` when given, and otherwise at least against the key
it names, so a pack re-signed or altered after signing is refused; only
``--verify`` says *who* signed.

Identities are age's own file format (``# public key: age1…`` then
``AGE-SECRET-KEY-1…``), written 0600, so ``age -i`` reads ours and we read theirs.
"""

from __future__ import annotations

import base64
import binascii
import io
import os
import zipfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pyrage  # type: ignore[import-untyped]
from pyrage import x25519

from skilldeck._atomic import atomic_write_bytes
from skilldeck.errors import DecryptionError, PackageError
from skilldeck.skills.packaging.lockfile import MANIFEST_NAME, SIGNATURE_NAME
from skilldeck.skills.packaging.signing import check_embedded
from skilldeck.skills.packaging.unpack import MAX_BYTES

if TYPE_CHECKING:
    from skilldeck.skills.packaging.staging import InstallOptions

__all__ = [
    "AGE_MAGIC",
    "SUFFIX",
    "age_keygen",
    "decrypt_pack",
    "encrypt_skill",
    "is_encrypted",
    "load_identities",
    "open_skillpack",
    "parse_recipients",
]

SUFFIX = ".skillpack"
AGE_MAGIC = b"age-encryption.org/v1\n"
_ARMOR_BEGIN = b"-----BEGIN AGE ENCRYPTED FILE-----"
_ARMOR_END = b"-----END AGE ENCRYPTED FILE-----"
#: a pack larger than this is refused before decrypting (the .skill cap plus room)
MAX_PACK_BYTES = MAX_BYTES + 1024 * 1024
_IDENTITY_PREFIX = "AGE-SECRET-KEY-1"
_RECIPIENT_PREFIX = "age1"


# ---- keys ---------------------------------------------------------------------------


def age_keygen(out: Path, *, force: bool = False) -> tuple[Path, str]:
    """Write a new age X25519 identity to ``out`` (0600); returns it and its recipient."""
    out = Path(out)
    if out.exists() and not force:
        raise PackageError(f"{out} already exists; refusing to overwrite an identity.")
    out.parent.mkdir(parents=True, exist_ok=True)
    identity = x25519.Identity.generate()
    recipient = str(identity.to_public())
    created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = f"# created: {created}\n# public key: {recipient}\n{identity}\n"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | (0 if force else os.O_EXCL)
    with os.fdopen(os.open(out, flags, 0o600), "w", encoding="ascii") as fh:
        fh.write(text)
    out.chmod(0o600)  # an existing file keeps its old mode through O_TRUNC
    return out, recipient


def parse_recipients(values: Sequence[str]) -> list[x25519.Recipient]:
    """``age1…`` strings, or files listing them (one a line, ``#`` comments), as
    :mod:`pyrage` recipients; an identity file gives its own public key."""
    found: list[x25519.Recipient] = []
    for value in values:
        lines = [value] if value.startswith(_RECIPIENT_PREFIX) else _recipient_lines(value)
        for line in lines:
            found.append(_recipient(line, value))
    if not found:
        raise PackageError("No recipient given: pass --encrypt-to age1… or a recipients file.")
    return found


def _recipient_lines(value: str) -> list[str]:
    path = Path(value).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise PackageError(
            f"Recipient {value!r} is neither an age1… recipient nor a readable file ({e})."
        ) from e
    lines = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(_IDENTITY_PREFIX):
            lines.append(str(_identity(line, path).to_public()))
        elif line and not line.startswith("#"):
            lines.append(line)
    if not lines:
        raise PackageError(f"{path} lists no age recipient (age1…).")
    return lines


def _recipient(line: str, where: str) -> x25519.Recipient:
    try:
        return x25519.Recipient.from_str(line)
    except pyrage.RecipientError as e:
        raise PackageError(
            f"{line[:24]!r} (from {where}) is not an age X25519 recipient ({e}); a recipient "
            "looks like age1… — print one with `skilldeck skills keygen --age`."
        ) from e


def _identity(line: str, path: Path) -> x25519.Identity:
    try:
        return x25519.Identity.from_str(line)
    except pyrage.IdentityError as e:
        raise DecryptionError(f"{path} holds a malformed age identity ({e}).") from e


def load_identities(path: Path) -> list[x25519.Identity]:
    """The ``AGE-SECRET-KEY-1…`` lines of an age identity file."""
    path = Path(path).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise DecryptionError(f"Cannot read age identity file {path}: {e}.") from e
    found = [
        _identity(line.strip(), path)
        for line in text.splitlines()
        if line.strip().startswith(_IDENTITY_PREFIX)
    ]
    if not found:
        raise DecryptionError(
            f"{path} holds no age identity (AGE-SECRET-KEY-1…). Make one with "
            "`skilldeck skills keygen --age -o FILE` or `age-keygen -o FILE`."
        )
    return found


# ---- encrypt ------------------------------------------------------------------------


def encrypt_skill(skill_archive: Path, recipients: Sequence[str], output: Path) -> Path:
    """Encrypt the ``.skill`` at ``skill_archive`` to ``recipients``; write ``output``."""
    parsed = parse_recipients(recipients)
    data = Path(skill_archive).read_bytes()
    if not _signed_inside(data):
        raise PackageError(
            f"{skill_archive} is not signed; an encrypted pack must hold a signed .skill "
            "(encryption does not say who made it). Pack with --sign KEY."
        )
    atomic_write_bytes(Path(output), pyrage.encrypt(data, parsed))
    return Path(output)


def _signed_inside(archive: bytes) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as zf:
            return any(n.endswith("/" + SIGNATURE_NAME) for n in zf.namelist())
    except zipfile.BadZipFile:
        return False


# ---- decrypt ------------------------------------------------------------------------


def decrypt_pack(pack: Path, identity: Path) -> bytes:
    """The ``.skill`` bytes inside ``pack``; refuses a wrong identity, a truncated or
    a modified file with :class:`~skilldeck.errors.DecryptionError`."""
    pack = Path(pack)
    identities = load_identities(identity)
    data = _read_pack(pack)
    try:
        return bytes(pyrage.decrypt(data, identities))
    except pyrage.DecryptError as e:
        raise DecryptionError(_decrypt_message(pack, identity, str(e))) from e


def is_encrypted(path: Path) -> bool:
    """Whether ``path`` starts with an age header (binary or armored), whatever its name."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(AGE_MAGIC) + 64)
    except OSError:
        return False
    return head.startswith(AGE_MAGIC) or head.lstrip().startswith(_ARMOR_BEGIN)


def _read_pack(pack: Path) -> bytes:
    try:
        with pack.open("rb") as fh:
            data = fh.read(MAX_PACK_BYTES + 1)
    except OSError as e:
        raise DecryptionError(f"Cannot read {pack}: {e.strerror or e}.") from e
    if len(data) > MAX_PACK_BYTES:
        raise DecryptionError(f"{pack} is larger than {MAX_PACK_BYTES} bytes; refused.")
    if data.lstrip().startswith(_ARMOR_BEGIN):
        data = _dearmor(data, pack)
    if not data.startswith(AGE_MAGIC):
        raise DecryptionError(
            f"{pack} is not an age-encrypted file (no age-encryption.org/v1 header). "
            "Install a plain .skill directly, without --identity."
        )
    return data


def _dearmor(data: bytes, pack: Path) -> bytes:
    body = data.strip()
    if not body.endswith(_ARMOR_END):
        raise DecryptionError(f"{pack}: the armored age file is truncated (no END line).")
    inner = body[len(_ARMOR_BEGIN) : -len(_ARMOR_END)]
    try:
        return base64.b64decode(b"".join(inner.split()), validate=True)
    except (binascii.Error, ValueError) as e:
        raise DecryptionError(f"{pack}: the armored age file is damaged ({e}).") from e


def _decrypt_message(pack: Path, identity: Path, reason: str) -> str:
    if "no matching keys" in reason.lower():
        return (
            f"{pack} is not encrypted to the identity in {identity} (no matching key); "
            "ask the publisher to add your recipient (skills keygen --age prints it)."
        )
    return (
        f"{pack} cannot be decrypted: the file is truncated or was modified after "
        f"encryption ({reason}); refused. Download it again."
    )


def check_inner_signature(archive: bytes, pack: Path) -> str:
    """Refuse an inner ``.skill`` with no signature or one that does not verify
    against the key it names; returns that key id. ``--verify`` (checked later by
    install) is what ties the signature to a known publisher."""
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as zf:
            names = zf.namelist()
            manifest = next((n for n in names if n.endswith("/" + MANIFEST_NAME)), None)
            signature = next((n for n in names if n.endswith("/" + SIGNATURE_NAME)), None)
            if manifest is None or signature is None:
                raise PackageError(
                    f"The .skill inside {pack} is not signed; refused (encryption alone does "
                    "not say who made a pack). The publisher must pack with --sign."
                )
            return check_embedded(zf.read(manifest)[: 8 << 20], zf.read(signature)[: 1 << 16])
    except zipfile.BadZipFile as e:
        raise PackageError(f"{pack} decrypts to something that is not a .skill ({e}).") from e


def open_skillpack(pack: Path, options: InstallOptions, workdir: Path) -> Path:
    """The install flow's opener: decrypt ``pack`` with ``options.identity`` into
    ``workdir`` (0600) and check the inner signature; returns the plain ``.skill``."""
    if options.identity is None:
        raise DecryptionError(
            f"{pack} is an encrypted skill pack; pass --identity FILE (an age identity "
            "the pack was encrypted to)."
        )
    archive = decrypt_pack(pack, options.identity)
    check_inner_signature(archive, pack)
    inner = workdir / (pack.stem.removesuffix(".skill") + ".skill")
    with os.fdopen(os.open(inner, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as fh:
        fh.write(archive)
    return inner
