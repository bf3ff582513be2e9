"""The snapshot's blob: each skill's validated fields and diagnostic rows as one
:mod:`marshal` chunk, decoded only when a skill is asked for more than its name.

This is one of the few homes of marshal data and positional rows (with
:mod:`.cache`, :mod:`._parallel` and :mod:`._forked`); a ``Skill`` sees it only as a
:class:`~skilldeck.skills.model.stored.FieldStore`. Justified by
``python -m bench discovery`` (figure ``warm``: a warm listing decodes nothing).
"""

from __future__ import annotations

import marshal
from typing import Any

from skilldeck.skills.discovery._sealed import unseal

__all__ = ["SnapshotBlob", "encode_stored"]


class SnapshotBlob:
    """The file of stored metadata and diagnostics written beside a snapshot: one
    :mod:`marshal` chunk ``[metadata-or-None, diagnostic rows]`` per skill, back to
    back. Plain data only (dicts, lists, strings, numbers) that this process wrote
    into its own cache, never pickle; every chunk is shape-checked when read. Read
    in one go the first time any skill of that snapshot needs more than its name,
    and never written again under that name (a new snapshot gets a new file)."""

    __slots__ = ("_data", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self._data: memoryview | None = None

    @classmethod
    def in_memory(cls, data: bytes) -> SnapshotBlob:
        """A blob that is no file: chunks a discovery worker encoded and sent back
        (see :mod:`._parallel`), read in place until a snapshot stores them."""
        blob = cls("")
        blob._data = memoryview(data)
        return blob

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Copies and pickles name the file (its bytes are read again on need); an
        in-memory blob carries its bytes."""
        if not self.path and self._data is not None:
            return SnapshotBlob.in_memory, (self._data.tobytes(),)
        return SnapshotBlob, (self.path,)

    def _load(self) -> memoryview:
        """The chunks (the payload of the sealed file); ``OSError`` when the file is
        gone (its snapshot was replaced meanwhile) or damaged."""
        data = self._data
        if data is None:
            with open(self.path, "rb") as fh:
                raw = fh.read()
            try:
                data = self._data = unseal(raw)
            except ValueError as e:
                raise OSError(f"snapshot blob {self.path}: {e}") from e
        return data

    def chunk(self, start: int, end: int) -> bytes:
        return self._load()[start:end].tobytes()

    def decode(self, start: int, end: int) -> tuple[dict[str, Any] | None, list[Any]]:
        """``(metadata fields or None, diagnostic rows)``; ValueError when that chunk
        cannot be read or is not that shape."""
        try:
            data = marshal.loads(self._load()[start:end])
        except (OSError, EOFError, TypeError, IndexError) as e:
            raise ValueError(f"unreadable snapshot record: {e}") from e
        if type(data) is not list or len(data) != 2:
            raise ValueError("damaged snapshot record")
        meta, rows = data
        if (meta is not None and type(meta) is not dict) or type(rows) is not list:
            raise ValueError("damaged snapshot record")
        if not all(type(r) is list and len(r) == 6 for r in rows):
            raise ValueError("damaged snapshot record")
        return meta, rows


def encode_stored(meta: dict[str, Any] | None, rows: list[Any]) -> bytes:
    """One skill's chunk of a :class:`SnapshotBlob`; ValueError for a value that is
    not plain data."""
    return marshal.dumps([meta, rows])
