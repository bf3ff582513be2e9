"""The shape of a ``skills.lock`` read from disk, checked before any entry is used.

A lock file is user-editable JSON (and restored from backups, merged by hand, synced
between machines): a field of the wrong type would otherwise surface far away as a
traceback (``'list' object has no attribute 'keys'`` in ``verify``) or as Python's
own words for the problem. Here every entry is checked field by field once, at read
time, so the error names the lock file, the skill entry and the field, and says how
to get a usable lock back. Unknown fields (a newer skilldeck's) are dropped, as before.
"""

from __future__ import annotations

import contextlib
import json
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from skilldeck.errors import PackageError

__all__ = ["entry_fields", "reinstall_command", "skills_table", "without_entry"]

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
            path, name, data, f"the entry for skill {name!r} is {_kind_of(data)}, not a table"
        )
    out: dict[str, Any] = {}
    for key, (ok, should_be, required, default) in _FIELDS.items():
        if key not in data:
            if required:
                problem = f"the entry for skill {name!r} has no {key!r} field"
                raise _bad_entry(path, name, data, problem)
            out[key] = default
            continue
        value = data[key]
        if not ok(value):
            problem = (
                f"in the entry for skill {name!r}, field {key!r} is {_kind_of(value)}; "
                f"it should be {should_be}"
            )
            raise _bad_entry(path, name, data, problem)
        out[key] = value
    return out


def reinstall_command(data: Mapping[str, object], *, user: bool = False) -> str:
    """The ``skills install`` command that installs a lock entry's skill again the way
    it was installed: its source, the ref asked for (git) and the skill's folder inside
    the source (``--skill``); fields of the wrong type are left out."""
    source = data.get("source")
    words = ["skilldeck skills install", _quoted(source) if _text(source) else "SOURCE"]
    ref, subpath = data.get("ref"), data.get("subpath")
    if data.get("kind") == "git" and _text(ref) and _text(source):
        words[-1] = _quoted(f"{source}@{ref}")
    if _text(subpath):
        words.append(f"--skill {_quoted(str(subpath))}")
    return " ".join([*words, *(["--scope user"] if user else []), "--force"])


def _quoted(value: object) -> str:
    return shlex.quote(str(value))


def _bad_entry(path: Path, name: str, data: object, problem: str) -> PackageError:
    fields = data if isinstance(data, dict) else {}
    return PackageError(
        f"{path}: malformed lock file: {problem}. Restore {path.name} from a backup, or "
        f"remove the skill with `skilldeck skills uninstall {_quoted(name)}` (which drops "
        f"that entry) and reinstall it with `{reinstall_command(fields)}` (add `--scope "
        "user` to both when this is the user scope's lock)."
    )


def _whole_file(path: Path, problem: str) -> PackageError:
    return PackageError(
        f"{path}: malformed lock file: {problem}. Restore it from a backup, or delete it "
        "(skilldeck then forgets what it installed in this scope: reinstall those skills "
        "with --force)."
    )


# ---- one entry out, the others untouched ------------------------------------------------


def without_entry(path: Path, text: str, name: str) -> str:
    """The lock file ``text`` with the entry of skill ``name`` taken out, whatever the
    shape of that entry or of the others: every other byte stays as it was (the
    entry's own span is cut), so an entry ``uninstall`` cannot read is neither lost
    nor rewritten. Falls back to writing the remaining entries anew if the text
    cannot be cut cleanly (a duplicated key, an unusual layout)."""
    try:
        raw = json.loads(text)
    except ValueError as e:
        raise PackageError(f"{path}: unreadable lock file ({e}). Fix or remove it.") from e
    table = skills_table(path, raw)
    expected = {**raw, "skills": {k: v for k, v in table.items() if k != name}}
    with contextlib.suppress(ValueError, IndexError):
        cut = _cut_member(text, name)
        if cut is not None and json.loads(cut) == expected:
            return cut
    return json.dumps(expected, indent=2, sort_keys=True) + "\n"


_DECODER = json.JSONDecoder()


def _cut_member(text: str, name: str) -> str | None:
    """``text`` without the member ``name`` of its top-level ``"skills"`` object (and
    the comma that joined it), or None when it is not there exactly once."""
    tables = [m for m in _members(text, _skip(text, 0)) if m[0] == "skills"]
    if not tables:
        return None
    opened = tables[-1][2]  # the last one counts, as for json.loads
    spans = _members(text, opened)
    hits = [i for i, member in enumerate(spans) if member[0] == name]
    if len(hits) != 1:
        return None
    i = hits[0]
    if len(spans) == 1:  # the only entry: leave an empty table
        return text[: opened + 1] + text[tables[-1][3] - 1 :]
    if i + 1 < len(spans):  # the entry and what follows it, up to the next entry's key
        return text[: spans[i][1]] + text[spans[i + 1][1] :]
    return text[: spans[i - 1][3]] + text[spans[i][3] :]  # from the comma before it


def _skip(text: str, i: int) -> int:
    """The index of the first non-whitespace character at or after ``i``."""
    while i < len(text) and text[i] in " \t\n\r":
        i += 1
    return i


def _members(text: str, at: int) -> list[tuple[str, int, int, int]]:
    """``(key, where the key starts, where its value starts, where it ends)`` for each
    member of the JSON object at ``at`` (a ValueError or IndexError if it is not one)."""
    if text[at] != "{":
        raise ValueError("not an object")
    out: list[tuple[str, int, int, int]] = []
    i = _skip(text, at + 1)
    while text[i] != "}":
        if text[i] != '"':
            raise ValueError("no key")
        key, after = _DECODER.raw_decode(text, i)  # a JSON string: the member's key
        colon = _skip(text, after)
        if text[colon] != ":":
            raise ValueError("no colon")
        value = _skip(text, colon + 1)
        end = _DECODER.raw_decode(text, value)[1]
        out.append((key, i, value, end))
        i = _skip(text, end)
        if text[i] == ",":
            i = _skip(text, i + 1)
        elif text[i] != "}":
            raise ValueError("no comma")
    return out
