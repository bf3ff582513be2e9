"""ed25519 keys and package signatures.

A package's signature covers the exact bytes of its manifest (``<name>/.skill-manifest.json``),
which lists the sha256 of every file; so verifying the signature and then checking
every unpacked file against the manifest proves the whole package is what the key
holder packed. Keys are plain files: the private key is PKCS#8 PEM (mode 0600), the
public key one OpenSSH line (``ssh-ed25519 AAAA… skilldeck``) that is easy to paste
into a README; PEM and raw base64 public keys are accepted too.

The signature file is JSON::

    {"algorithm": "ed25519", "key_id": "…", "public_key": "<base64>", "signature": "<base64>"}

``key_id`` (first 16 hex digits of the sha256 of the raw public key) names a key in
messages and in ``skills.lock``. The embedded ``public_key`` is informational only:
trust comes from the key the installer passes with ``--verify``, never from the package.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from skilldeck.errors import PackageError

ALGORITHM = "ed25519"


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def keygen(out: Path, *, force: bool = False) -> tuple[Path, Path]:
    """Write a new key pair: ``out`` (private, 0600) and ``out.pub`` (public)."""
    out = Path(out)
    if not out.name or out.name == "..":
        raise PackageError(f"--out {str(out)!r} names no file; give a path such as keys/mine.")
    pub_path = out.with_name(out.name + ".pub")
    if not force:
        for path in (out, pub_path):
            if path.exists():
                raise PackageError(f"{path} already exists; refusing to overwrite a key.")
    out.parent.mkdir(parents=True, exist_ok=True)
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public = private.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | (0 if force else os.O_EXCL)
    with os.fdopen(os.open(out, flags, 0o600), "wb") as fh:
        fh.write(pem)
    out.chmod(0o600)  # an existing file keeps its old mode through O_TRUNC
    pub_path.write_bytes(public + b" skilldeck\n")
    return out, pub_path


def load_private_key(path: Path) -> Ed25519PrivateKey:
    data = _read_key(path, "private")
    key: object
    try:
        if data.lstrip().startswith(b"-----BEGIN OPENSSH PRIVATE KEY"):
            key = serialization.load_ssh_private_key(data, password=None)
        else:
            key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as e:
        raise PackageError(
            f"{path} is not an unencrypted ed25519 private key ({e}). "
            "Make one with `skilldeck skills keygen --out PATH`."
        ) from e
    if not isinstance(key, Ed25519PrivateKey):
        raise PackageError(f"{path} holds a {type(key).__name__}; an ed25519 key is needed.")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    data = _read_key(path, "public").strip()
    key: object
    try:
        if data.startswith(b"ssh-ed25519"):
            key = serialization.load_ssh_public_key(data)
        elif data.startswith(b"-----BEGIN"):
            key = serialization.load_pem_public_key(data)
        else:
            key = Ed25519PublicKey.from_public_bytes(base64.b64decode(data, validate=True))
    except (ValueError, TypeError, UnsupportedAlgorithm, binascii.Error) as e:
        raise PackageError(
            f"{path} is not an ed25519 public key ({e}). Pass the `.pub` file that "
            "`skilldeck skills keygen` wrote."
        ) from e
    if not isinstance(key, Ed25519PublicKey):
        raise PackageError(f"{path} holds a {type(key).__name__}; an ed25519 key is needed.")
    return key


def _read_key(path: Path, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise PackageError(f"Cannot read {what} key {path}: {e.strerror or e}.") from e


def sign(manifest: bytes, private: Ed25519PrivateKey) -> bytes:
    """The signature file's bytes for ``manifest``."""
    public = private.public_key()
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    doc = {
        "algorithm": ALGORITHM,
        "key_id": key_id(public),
        "public_key": base64.b64encode(raw).decode("ascii"),
        "signature": base64.b64encode(private.sign(manifest)).decode("ascii"),
    }
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8")


def signer_of(signature: bytes) -> str | None:
    """The key id a signature file claims (unverified), or None if unreadable."""
    try:
        claimed = json.loads(signature).get("key_id")
    except (ValueError, AttributeError):
        return None
    return claimed if isinstance(claimed, str) else None


def check(manifest: bytes, signature: bytes, public: Ed25519PublicKey) -> str:
    """Verify ``signature`` over ``manifest`` with ``public``; returns its key id."""
    try:
        doc = json.loads(signature)
        if doc.get("algorithm") != ALGORITHM:
            raise PackageError(f"Unsupported signature algorithm {doc.get('algorithm')!r}.")
        raw_sig = base64.b64decode(doc["signature"], validate=True)
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error) as e:
        raise PackageError(f"The package signature is malformed ({e}); refused.") from e
    try:
        public.verify(raw_sig, manifest)
    except InvalidSignature as e:
        claimed = doc.get("key_id")
        raise PackageError(
            f"Bad signature: the package does not verify with key {key_id(public)}"
            + (f" (it claims to be signed by key {claimed})" if claimed else "")
            + "; refused."
        ) from e
    return key_id(public)


def check_embedded(manifest: bytes, signature: bytes) -> str:
    """Verify ``signature`` against the public key it carries; returns its key id.

    This proves the manifest was not changed after signing by *that* key — not who
    holds the key (anyone can sign with a key of their own): that is what
    :func:`check` with a trusted key is for. Encrypted packs use it so a pack whose
    signature was damaged or forged without the key is refused even without ``--verify``.
    """
    try:
        raw = base64.b64decode(json.loads(signature)["public_key"], validate=True)
        public = Ed25519PublicKey.from_public_bytes(raw)
    except (ValueError, KeyError, TypeError, binascii.Error) as e:
        raise PackageError(f"The package signature is malformed ({e}); refused.") from e
    return check(manifest, signature, public)


# ---- the manifest of an unpacked package -----------------------------------------------


def check_package(
    manifest: bytes | None, signature: bytes | None, files: dict[str, str], public: Any
) -> str | None:
    """Every unpacked file (``files``: path → sha256) must match the manifest (when
    there is one); with a key, the signature must verify. Returns the verified key id."""
    if manifest is not None:
        try:
            listed = json.loads(manifest)["files"]
            if not isinstance(listed, dict):
                raise TypeError("'files' is not a mapping")
        except (ValueError, KeyError, TypeError) as e:
            raise PackageError(f"The package manifest is malformed ({e}); refused.") from e
        if listed != files:
            raise PackageError(f"The package does not match its manifest: {_diff(listed, files)}.")
    if public is None:
        return None
    if manifest is None or signature is None:
        raise PackageError(
            "The package is not signed (no manifest or signature), but --verify was given; refused."
        )
    return check(manifest, signature, public)


def _diff(listed: dict[str, Any], actual: dict[str, str]) -> str:
    parts = []
    if changed := sorted(k for k in listed.keys() & actual.keys() if listed[k] != actual[k]):
        parts.append(f"modified {', '.join(changed[:5])}")
    if missing := sorted(listed.keys() - actual.keys()):
        parts.append(f"missing {', '.join(missing[:5])}")
    if extra := sorted(actual.keys() - listed.keys()):
        parts.append(f"not in manifest {', '.join(extra[:5])}")
    return "; ".join(parts)


def check_manifest_name(manifest: bytes | None, name: str) -> None:
    """A manifest naming another skill than its SKILL.md does is refused."""
    if manifest is None:
        return
    claimed = json.loads(manifest).get("name")
    if claimed is not None and claimed != name:
        raise PackageError(
            f"The package manifest names skill {claimed!r} but SKILL.md says {name!r}; refused."
        )
