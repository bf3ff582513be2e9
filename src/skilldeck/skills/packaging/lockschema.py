"""The shape of a ``skills.lock`` read from disk, checked before any entry is used.

A lock file is user-editable JSON (and restored from backups, merged by hand, synced
between machines): a field of the wrong type would otherwise surface far away as a
traceback (``'list' object has no attribute 'keys'`` in ``verify``) or as Python's
own words for the problem. Here every entry is checked field by field once, at read
time, so the error names the lock file, the skill entry and the field, and says how
to get a usable lock back. Unknown fields (a newer skilldeck's) are dropped, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from skilldeck.errors import PackageError

__all__ = ["entry_fields", "skills_table"]

_KINDS = ("local", "git", "url", "index")


def _text(value: object) -> bool:
    return isinstance(value, str) and bool(value)


def _text_or_null(value: object) -> bool:
    return value is None or isinstance(value, str)


def _file_table(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


#: field → (is it well-formed, what it should be, required, its value when absent)
_FIELDS: dict[str, tuple[Callable[[object], bool], str, bool, Any]] = {
    "version": (_text_or_null, "a string or null", False, None),
    "source": (_text, "a non-empty string (the path or URL installed from)", True, None),
    "installed_at": (_text, "a non-empty string (an ISO timestamp)", True, None),
    "digest": (_text, "a non-empty string (a sha256 hex digest)", True, None),
    "files": (_file_table, "a table of file path → sha256 string", True, None),
    "signed_by": (_text_or_null, "a string or null", False, None),
    "kind": (lambda v: v in _KINDS, f"one of {', '.join(_KINDS)}", False, "local"),
    "ref": (_text_or_null, "a string or null", False, None),
    "commit": (_text_or_null, "a string or null", False, None),
    "subpath": (_text_or_null, "a string or null", False, None),
    "pinned": (lambda v: isinstance(v, bool), "true or false", False, False),
}


def _kind_of(value: object) -> str:
    """What JSON calls ``value``'s type, for a message a user can act on."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "an empty string" if not value else "a string"
    if isinstance(value, list):
        return "a list"
    return "a table" if isinstance(value, dict) else type(value).__name__


def skills_table(path: Path, raw: object) -> dict[str, Any]:
    """The ``skills`` table of a lock file's parsed JSON (empty when absent)."""
    if not isinstance(raw, dict):
        raise _whole_file(path, f"it holds {_kind_of(raw)}, not a table")
    table = raw.get("skills", {})
    if not isinstance(table, dict):
        raise _whole_file(path, f'"skills" is {_kind_of(table)}, not a table of skill → entry')
    return table


def entry_fields(path: Path, name: str, data: object) -> dict[str, Any]:
    """The known fields of lock entry ``name``, each checked, absent ones defaulted."""
    if not isinstance(data, dict):
        raise _bad_entry(
            path, data, f"the entry for skill {name!r} is {_kind_of(data)}, not a table"
        )
    out: dict[str, Any] = {}
    for key, (ok, should_be, required, default) in _FIELDS.items():
        if key not in data:
            if required:
                raise _bad_entry(path, data, f"the entry for skill {name!r} has no {key!r} field")
            out[key] = default
            continue
        value = data[key]
        if not ok(value):
            problem = (
                f"in the entry for skill {name!r}, field {key!r} is {_kind_of(value)}; "
                f"it should be {should_be}"
            )
            raise _bad_entry(path, data, problem)
        out[key] = value
    return out


def _bad_entry(path: Path, data: object, problem: str) -> PackageError:
    source = data.get("source") if isinstance(data, dict) else None
    again = f"`skilldeck skills install {source if _text(source) else 'SOURCE'} --force`"
    return PackageError(
        f"{path}: malformed lock file: {problem}. Restore {path.name} from a backup, or "
        f"delete that entry from it and reinstall the skill with {again} (add `--scope "
        "user` when this is the user scope's lock)."
    )


def _whole_file(path: Path, problem: str) -> PackageError:
    return PackageError(
        f"{path}: malformed lock file: {problem}. Restore it from a backup, or delete it "
        "(skilldeck then forgets what it installed in this scope: reinstall those skills "
        "with --force)."
    )
