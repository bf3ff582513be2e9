"""Marshal data framed with a checksum, for the discovery snapshot's two files.

:mod:`marshal` is the fastest way CPython has to store and load plain data, but it
trusts its input: a damaged length field makes ``marshal.loads`` allocate (and then
free, item by item) a list of two billion entries, which takes seconds to minutes.
A CRC-32 over the payload (about 0.2 ms per MB) turns a damaged or truncated file
into a plain "not usable" before marshal ever sees it. This guards against
accidents (a torn write, a disk error, another tool touching the cache), not against
someone who can write to the user's cache folder — they could edit the user's
skills just as well.
"""

from __future__ import annotations

import zlib

__all__ = ["seal", "unseal"]

_MAGIC = b"SDK1"
_HEAD = len(_MAGIC) + 4


def seal(payload: bytes) -> bytes:
    """``payload`` (marshal bytes) framed with a magic number and its CRC-32."""
    return _MAGIC + zlib.crc32(payload).to_bytes(4, "little") + payload


def unseal(data: bytes | memoryview) -> memoryview:
    """The payload of :func:`seal`-ed ``data``; ValueError when it is not intact."""
    view = memoryview(data)
    if bytes(view[: len(_MAGIC)]) != _MAGIC or len(view) < _HEAD:
        raise ValueError("not a skilldeck snapshot file")
    payload = view[_HEAD:]
    if zlib.crc32(payload) != int.from_bytes(view[len(_MAGIC) : _HEAD], "little"):
        raise ValueError("damaged snapshot file (checksum mismatch)")
    return payload
