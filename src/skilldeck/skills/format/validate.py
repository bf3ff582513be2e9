"""Frontmatter → :class:`SkillMetadata`, with every rule violation as a Diagnostic.

Two modes. **Lenient** (the default, what discovery uses) loads every skill a user
of Claude Code would expect to work: unknown fields, a name that differs from its
folder or breaks the naming rules, over-long descriptions and values of the wrong
type are *warnings* and the skill still loads; only what makes a skill unusable (no
description, unreadable YAML, a name that is not text, an entrypoint outside the
folder) is an *error* that skips it. **Strict** (``--strict``) is the Agent Skills
spec as its reference validator (skills-ref) enforces it: only the six spec fields,
every naming rule, and even the YAML subset skills-ref's parser accepts.

Codes are stable (``SD1xx`` here, ``SD0xx`` from the parser) and documented in
``docs/skill-format.md``; a test keeps that table in sync with :data:`RULES`.

This module loads skills (:func:`load_skill`, discovery's :func:`load_for_discovery`)
and validates paths and trees (:func:`validate_path`); the rules themselves run in
:mod:`skilldeck.skills.format.metadata` on plain values, never on the pydantic model:
:func:`validate_path` does not build a ``SkillMetadata`` at all, so ``skills
validate`` starts without pydantic (``python -m bench startup``, row ``validate``);
:func:`build_metadata` and ``load_skill`` build it for callers that read it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from skilldeck.errors import SkillParseError
from skilldeck.skills.discovery import TOO_DEEP, walk_tree
from skilldeck.skills.format import _fields as F
from skilldeck.skills.format import reference  # strict mode's check, loaded on first use
from skilldeck.skills.format._rules import RULES
from skilldeck.skills.format.metadata import build_metadata, normalised
from skilldeck.skills.format.parse import ParsedFrontmatter, find_skill_md, parse_skill_md
from skilldeck.skills.model.diagnostics import (
    Diagnostic,
    DiagnosticRow,
    Severity,
    diagnostic_from_row,
    diagnostic_to_row,
    errors_of,
    warnings_of,
)
from skilldeck.skills.model.skill import (
    Skill,
    SkillKind,
    SkillSource,
    declared_kind,
    declared_kind_of,
    detect_kind,
    sets_gating_field,
)

if TYPE_CHECKING:
    from skilldeck.skills.model.spec import SkillMetadata

__all__ = [
    "Discovered",
    "ValidationReport",
    "load_for_discovery",
    "load_skill",
    "validate_path",
]

# ---- load_skill ------------------------------------------------------------------


def load_skill(
    path: Path,
    *,
    strict: bool = False,
    source: SkillSource = SkillSource.ROOT,
    root: Path | None = None,
    has_code: bool | None = None,
    lazy: bool = False,
) -> tuple[Skill | None, list[Diagnostic]]:
    """Load the skill in ``path`` (a skill folder or its SKILL.md).

    The Skill is None when an error prevents loading; lenient warnings keep it.
    ``has_code`` says whether the folder holds a ``skill.py`` when the caller
    already knows (discovery's walk listed the folder); None checks the disk.
    ``lazy`` (what discovery asks for) checks every rule as usual but builds the
    metadata model only when the skill's ``metadata`` is first read, from the
    normalised values: thousands of skills are discovered, few are looked at.
    """
    path = path if isinstance(path, Path) else Path(path)
    skill, diagnostics, _name = _load(
        path, strict=strict, source=source, root=root, has_code=has_code, lazy=lazy
    )
    return skill, diagnostics


def _load(
    path: Path,
    *,
    strict: bool,
    source: SkillSource,
    root: Path | None,
    has_code: bool | None = None,
    lazy: bool = False,
) -> tuple[Skill | None, list[Diagnostic], str | None]:
    if path.name in ("SKILL.md", "skill.md") or not path.is_dir():
        md = path
    else:
        found = find_skill_md(path)
        if found is None:
            message = f"no SKILL.md in {path}; create one with `skilldeck skills new`."
            return None, [Diagnostic("SD009", RULES["SD009"], message, path=path)], None
        md = found
    folder = md.parent
    try:
        parsed = parse_skill_md(md)
    except SkillParseError as e:
        rule = RULES.get(e.code, "parse-error")
        return None, [Diagnostic(e.code, rule, e.bare_message, path=md, line=e.line)], None
    if lazy:
        skill, rows, _declared, _read_at = _lazy_skill(
            parsed, str(folder), strict=strict, source=source, root=root, has_code=has_code
        )
        diagnostics = [diagnostic_from_row(row, md) for row in rows]
        return skill, diagnostics, skill.name if skill else _raw_name(parsed)
    metadata, diagnostics = build_metadata(parsed, folder=folder, strict=strict)
    if strict:
        extra = reference.reference_diagnostics(parsed)
        if extra:
            diagnostics = sorted([*diagnostics, *extra], key=lambda d: d.line or 0)
            metadata = None
    if metadata is None:
        return None, diagnostics, _raw_name(parsed)
    skill = Skill(
        metadata=metadata,
        folder=folder,
        skill_md=md,
        source=source,
        root=root,
        body_offset=parsed.body_offset,
        kind=_kind(folder, metadata, has_code),
        diagnostics=diagnostics,
    )
    return skill, diagnostics, metadata.name


def _raw_name(parsed: ParsedFrontmatter) -> str | None:
    raw_name = parsed.data.get("name")
    return raw_name if isinstance(raw_name, str) else None


class Discovered(NamedTuple):
    """One SKILL.md as discovery takes it (and the lazy :func:`load_skill`): a skill
    and its problems, in the form the snapshot stores them."""

    #: the skill, None when it does not load
    skill: Skill | None
    #: its diagnostics as rows (see :func:`diagnostic_to_row`)
    rows: list[DiagnosticRow]
    #: its declared kind (``prompt``/``script``), None when it does not load
    declared: str | None
    #: the ``(mtime_ns, size)`` it was read at, None when it could not be read
    read_at: tuple[int, int] | None


def load_for_discovery(
    md: str, *, strict: bool, source: SkillSource, root: Path | None, has_code: bool
) -> Discovered:
    """``load_skill(md, lazy=True)`` for discovery's hot loop: ``md`` is the SKILL.md
    path as a string and the walk already knows whether a ``skill.py`` sits beside
    it. The same rules and messages; no Path or Diagnostic object is built unless a
    caller asks the skill for one, and the diagnostics come back as the rows the
    snapshot stores."""
    try:
        parsed = parse_skill_md(md)
    except SkillParseError as e:
        rule = RULES.get(e.code, "parse-error")
        return Discovered(None, [[e.code, rule, e.bare_message, "error", e.line, "="]], None, None)
    return _lazy_skill(
        parsed, os.path.dirname(md), strict=strict, source=source, root=root, has_code=has_code
    )


def _lazy_skill(
    parsed: ParsedFrontmatter,
    folder: str,
    *,
    strict: bool,
    source: SkillSource,
    root: Path | None,
    has_code: bool | None,
) -> Discovered:
    """``_load`` for ``lazy=True``: the same rules and diagnostics (as rows), a skill
    holding the normalised values instead of a SkillMetadata built from them, its
    declared kind and the stat the file was read at."""
    values, c = normalised(parsed, folder=folder, strict=strict)
    if strict:
        extra = reference.reference_diagnostics(parsed)
        if extra:
            md = parsed.path_str
            c.rows.extend(diagnostic_to_row(d, md) for d in extra)
            c.in_file_order()
            values = None
    rows = c.rows
    if values is None:
        return Discovered(None, rows, None, parsed.stamp)
    if not values["extra"]:
        del values["extra"]  # as model_dump(exclude_defaults=True) would leave it
    if has_code is None:
        has_code = os.path.isfile(os.path.join(folder, "skill.py"))
    declared = declared_kind_of(values)
    skill = Skill._from_fields(
        values["name"],
        parsed.path_str,
        values,
        rows,
        gate=sets_gating_field(values),
        source=source,
        root=root,
        body_offset=parsed.body_offset,
        kind=SkillKind.CODE if has_code else declared,
    )
    return Discovered(skill, rows, declared.value, parsed.stamp)


def _kind(folder: Path, metadata: SkillMetadata, has_code: bool | None) -> SkillKind:
    if has_code is None:
        return detect_kind(folder, metadata)
    return SkillKind.CODE if has_code else declared_kind(metadata)


# ---- validate_path ---------------------------------------------------------------


@dataclass
class ValidationReport:
    """The verdict on one SKILL.md: valid when no diagnostic is an error."""

    path: Path
    name: str | None
    valid: bool
    diagnostics: list[Diagnostic]

    @property
    def errors(self) -> list[Diagnostic]:
        return errors_of(self.diagnostics)

    @property
    def warnings(self) -> list[Diagnostic]:
        return warnings_of(self.diagnostics)

    def to_dict(self) -> dict[str, Any]:
        def row(d: Diagnostic) -> dict[str, Any]:
            return {"code": d.code, "rule": d.rule, "message": d.message, "line": d.line}

        return {
            "path": str(self.path),
            "name": self.name,
            "valid": self.valid,
            "errors": [row(d) for d in self.errors],
            "warnings": [row(d) for d in self.warnings],
        }


def _is_archive(path: Path) -> bool:
    """A .skill / .zip (zip) or .skillpack (age) given where a SKILL.md is expected."""
    try:
        with path.open("rb") as fh:
            head = fh.read(32)
    except OSError:
        return False
    return head.startswith((b"PK\x03\x04", b"age-encryption.org/", b"-----BEGIN AGE"))


def validate_path(path: Path, *, strict: bool = False) -> list[ValidationReport]:
    """Validate a skill folder, a SKILL.md, or every skill in a tree (recursively).

    A path that does not exist, or a tree without any SKILL.md, yields one invalid
    report saying so, so that ``skills validate`` never passes on a typo.
    """
    path = Path(path)
    if not path.exists():
        message = f"{path} does not exist."
        return [ValidationReport(path, None, False, [_diag("SD008", message, path)])]
    if path.is_file() and _is_archive(path):
        message = (
            f"{path} is a skill package (an archive), not a SKILL.md; validate the skill's "
            f"folder (a package is checked as it is installed: skilldeck skills install {path})."
        )
        return [ValidationReport(path, None, False, [_diag("SD010", message, path)])]
    cut: list[Diagnostic] = []
    files = [path] if path.is_file() else _skill_files(path, cut)
    if not files:
        message = f"no SKILL.md found in {path} or below it."
        return [ValidationReport(path, None, False, [_diag("SD009", message, path)])]
    reports = []
    for md in files:
        # loaded lazily: the same rules and diagnostics, no SkillMetadata built (a report does
        # not read it), so validating imports no pydantic (python -m bench startup)
        skill, diagnostics, name = _load(
            md, strict=strict, source=SkillSource.ROOT, root=None, lazy=True
        )
        diagnostics = [*diagnostics, *_requirements_file_diagnostics(md.parent)]
        valid = skill is not None and not any(d.is_error for d in diagnostics)
        reports.append(ValidationReport(md, name, valid, diagnostics))
    reports += [ValidationReport(d.path or path, None, True, [d]) for d in cut]
    return reports


def _diag(code: str, message: str, path: Path) -> Diagnostic:
    return Diagnostic(code, RULES[code], message, path=path)


def _requirements_file_diagnostics(folder: Path) -> list[Diagnostic]:
    """SD181 for each refused line of the skill's ``requirements.txt`` (an option such
    as ``--index-url``): the environment build refuses the whole file, so validate
    says so first. Read only here, never at discovery."""
    path = folder / "requirements.txt"
    try:
        text = "" if path.is_symlink() else path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        why = F.requirement_problem(line) if line and not line.startswith("#") else None
        if why:
            message = f"requirements.txt: {why}; no environment is built until it is removed"
            found.append(
                Diagnostic("SD181", RULES["SD181"], message, Severity.WARNING, path, number)
            )
    return found


def _skill_files(top: Path, cut: list[Diagnostic]) -> list[Path]:
    """Every SKILL.md (else skill.md) under ``top``, found as discovery finds them
    (the same walk: symlinks followed once, tool folders and skills' resource
    folders skipped), so ``skills validate`` checks exactly what would be loaded.
    Folders the walk did not enter for being too deep are added to ``cut``."""
    tree = walk_tree(top)
    cut.extend(d for d in tree.diagnostics if d.code == TOO_DEEP[0])
    return [top / rel for rel in tree.skill_mds]
