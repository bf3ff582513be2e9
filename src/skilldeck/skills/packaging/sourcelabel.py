"""Naming what the user installed from, in place of the staging folder install reads.

Install validates a *staged copy* (``<scope dir>/.install-xxxx/<name>``), removed
before the error is shown: a message naming it points at nothing the user can open
or fix. :func:`validated` loads the staged skill and, when it is refused, rewrites
every path to where that file came from — ``./bad/SKILL.md:3`` for a folder,
``bad.skill/bad/SKILL.md:3`` for an archive member (the ``archive/member`` form of
Python's zipimport tracebacks), the repository, URL or index address for a remote
source. A folder with no SKILL.md gets advice that fits its source ("create one with
``skilldeck skills new``" means nothing for somebody else's repository).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from skilldeck.errors import SkillValidationError
from skilldeck.skills.format import load_skill
from skilldeck.skills.model.diagnostics import Diagnostic, errors_of
from skilldeck.skills.model.skill import Skill
from skilldeck.skills.packaging.lockfile import Origin

__all__ = ["source_label", "validated"]

#: SD009: the folder holds no SKILL.md
_NO_SKILL_MD = "SD009"


def source_label(source: Path, origin: Origin | None, archive_top: str | None) -> str:
    """How to name the staged skill folder: the source the user gave (plus the top
    folder of an archive, whose files sit under it)."""
    if origin is None:
        label = str(source)
    elif origin.kind == "git":
        label = origin.source + (f"/{origin.subpath}" if origin.subpath else "")
    elif origin.kind == "index":  # its files were fetched from <index folder>/<name>/
        label = f"{origin.source.rsplit('/', 1)[0]}/{origin.subpath or ''}".rstrip("/")
    elif origin.source.lower().endswith("/skill.md"):  # a raw SKILL.md: its folder
        label = origin.source[: -len("/skill.md")]
    else:
        label = origin.source
    return f"{label}/{archive_top}" if archive_top else label


def validated(folder: Path, label: str, *, local: bool) -> Skill:
    """The skill staged in ``folder``; any validation error refuses it, naming
    ``label`` (the source) instead of ``folder`` (see the module doc)."""
    skill, diagnostics = load_skill(folder)
    errors = errors_of(diagnostics)
    if skill is not None and not errors:
        return skill
    if any(d.code == _NO_SKILL_MD for d in diagnostics) or not diagnostics:
        fix = (
            "create one with `skilldeck skills new`, or point at the folder that holds it"
            if local
            else "check the path inside the source (it must name the folder holding "
            "SKILL.md), or ask the source's author"
        )
        raise SkillValidationError(
            f"{label} is not a skill: it holds no SKILL.md at its top; {fix}.",
            path=Path(label) if local else None,
            diagnostics=[_renamed(d, folder, label, local=local) for d in diagnostics],
        )
    shown = [_renamed(d, folder, label, local=local) for d in errors]
    listed = "\n".join(f"  {_line(d, folder, label)}" for d in errors)
    raise SkillValidationError(
        f"{label} is not a valid skill:\n{listed}",
        path=Path(label) if local else None,
        diagnostics=shown,
    )


def _shown_path(path: Path, folder: Path, label: str) -> str:
    """``path`` (inside the staged ``folder``) as the source names it."""
    try:
        rel = path.relative_to(folder).as_posix()
    except ValueError:
        return str(path)
    return label if rel == "." else f"{label}/{rel}"


def _renamed(d: Diagnostic, folder: Path, label: str, *, local: bool) -> Diagnostic:
    """``d`` with its path the source's (None for a remote source: no local path)."""
    message = d.message.replace(str(folder), label)
    if d.path is None:
        return dataclasses.replace(d, message=message)
    path = Path(_shown_path(d.path, folder, label)) if local else None
    return dataclasses.replace(d, message=message, path=path)


def _line(d: Diagnostic, folder: Path, label: str) -> str:
    """``d`` as :class:`Diagnostic` prints it, with the source's path (a URL too)."""
    where = ""
    if d.path is not None:
        shown = _shown_path(d.path, folder, label)
        where = f"{shown}:{d.line}: " if d.line else f"{shown}: "
    return f"{where}{d.code} {d.rule}: {d.message.replace(str(folder), label)}"
