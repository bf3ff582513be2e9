"""Frontmatter → :class:`SkillMetadata`, with every rule violation as a Diagnostic.

The rules run on plain values (field names from ``skills/model/names.py``, the rule
table in ``_rules.py``, per-field normalisation in ``_normalize.py``), never on the
pydantic model: :func:`normalised` gives the model's keyword arguments and a
collector of every diagnostic, which is all ``skills validate`` and discovery need
(so they start without pydantic, ``python -m bench startup``, row ``validate``);
:func:`build_metadata` builds the model for callers that read it. Loading a whole
skill and validating a tree are in :mod:`skilldeck.skills.format.validate`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilldeck.skills import model
from skilldeck.skills.format import _fields as F
from skilldeck.skills.format import _normalize as N
from skilldeck.skills.format._rules import Collector, suggest_field
from skilldeck.skills.format.parse import ParsedFrontmatter
from skilldeck.skills.model.diagnostics import Diagnostic
from skilldeck.skills.model.names import (
    KNOWN_FIELDS,
    SPEC_FIELDS,
    canonical_field,
    unsafe_name_reason,
)

if TYPE_CHECKING:
    from skilldeck.skills.model.spec import SkillMetadata

__all__ = ["build_metadata", "normalised"]


def build_metadata(
    parsed: ParsedFrontmatter, *, folder: Path | str, strict: bool = False
) -> tuple[SkillMetadata | None, list[Diagnostic]]:
    """Normalise ``parsed`` into SkillMetadata and report every problem at once.

    Returns ``(None, diagnostics)`` when any diagnostic is an error. The rules are
    checked without pydantic (:func:`normalised`); only the model is built with it,
    through the ``model`` facade, which imports it on first use.
    """
    values, c = normalised(parsed, folder=os.fspath(folder), strict=strict)
    if values is None:
        return None, c.diagnostics
    try:
        metadata = model.SkillMetadata(**values)
    except ValueError as e:  # pydantic's ValidationError: a normaliser bug, not the author's
        errors = getattr(e, "errors", None)
        reason = errors()[0]["msg"] if callable(errors) else str(e)
        c.error("SD160", f"frontmatter could not be normalised: {reason}")
        return None, c.diagnostics
    return metadata, c.diagnostics


def normalised(
    parsed: ParsedFrontmatter, *, folder: str, strict: bool
) -> tuple[dict[str, Any] | None, Collector]:
    """The keyword arguments of SkillMetadata (already of the declared types) and the
    collector holding every diagnostic; None for the values when any is an error.
    ``folder`` is the skill folder's path as a string."""
    c = Collector(parsed, strict=strict)
    for key, line in parsed.duplicate_keys:
        c.flag("SD152", f"`{key}` is given more than once; the last one (line {line}) "
               "wins. Delete the other.", line=line)  # fmt: skip
    fields: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    seen: dict[str, str] = {}
    for key, value in parsed.data.items():
        canon = _CANONICAL.get(key) or _canonical(key)
        if strict and key not in SPEC_FIELDS:
            N.reject_non_spec(c, key, canon)
            continue
        if canon in seen:
            c.flag("SD152", f"`{key}` and `{seen[canon]}` are two spellings of the same "
                   "field; keep one.", key=key)  # fmt: skip
        seen[canon] = key
        if canon not in KNOWN_FIELDS:
            extra[canon] = value
            hint = suggest_field(canon)
            c.warn("SD150", f"unknown field `{key}` is ignored"
                   + (f" (did you mean `{hint}`?)" if hint else "")
                   + "; put custom data under `metadata:`.", key=key)  # fmt: skip
            continue
        if canon in ("name", "description") or value is None:
            continue
        try:
            N.normalise(parsed, key, canon, value, fields, extra, c, folder)
        except F.FieldProblem as e:
            c.flag("SD160", f"{e} (value ignored).", key=key)
    N.from_metadata(parsed, fields, c, folder, seen.get("metadata", "metadata"))
    name = N.skill_name(parsed, folder, c, seen.get("name"))
    if name is not None and not _safe_name(name, c, seen.get("name")):
        name = None
    description = N.skill_description(parsed, c, seen.get("description"))
    c.in_file_order()
    if c.has_errors or name is None or description is None:
        return None, c
    return {"name": name, "description": description, "extra": extra, **fields}, c


def _safe_name(name: str, c: Collector, key: str | None) -> bool:
    """A name that a path would read as structure (``../x``, ``a/b``, NUL…) is an
    error in every mode: the name becomes folder, file and lock-file names."""
    reason = unsafe_name_reason(name)
    if reason is None:
        return True
    slug = "-".join(re.findall(r"[a-z0-9]+", name.lower()))[:64] or "my-skill"
    c.error("SD108", f"name {name!r} cannot be used: {reason}. Skill names become folder "
            f"and file names; use lowercase letters, digits and hyphens, e.g. "
            f"`name: {slug}`.", key=key)  # fmt: skip
    return False


#: field spelling → canonical field, filled as spellings are met (a few dozen recur
#: across thousands of skills; bounded so odd keys cannot grow it without limit)
_CANONICAL: dict[str, str] = {}


def _canonical(key: str) -> str:
    canon = canonical_field(key)
    if len(_CANONICAL) < 4096:
        _CANONICAL[key] = canon
    return canon
