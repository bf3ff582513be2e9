"""Diagnostics: every problem a validator finds, as data.

Validators collect all problems at once (like skills-ref's ``validate()``) instead of
stopping at the first; the CLI renders them and ``--json`` prints them as they are.
Codes are stable: tests, docs and users' CI scripts depend on them. Never renumber.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem: a stable ``code`` (``SD101``), a short ``rule`` slug, a message
    that says what and how to fix, and where (``path``, 1-based ``line``)."""

    code: str
    rule: str
    message: str
    severity: Severity = Severity.ERROR
    path: Path | None = None
    line: int | None = None

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["severity"] = str(self.severity)
        data["path"] = str(self.path) if self.path else None
        return data

    def __str__(self) -> str:
        where = (
            f"{self.path}:{self.line}: "
            if self.path and self.line
            else (f"{self.path}: " if self.path else "")
        )
        return f"{where}{self.code} {self.rule}: {self.message}"


def errors_of(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.is_error]


def warnings_of(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if not d.is_error]


# ---- diagnostics as plain rows (the snapshot's, the validator's and the JSON listing's form)

#: A diagnostic as plain data: ``[code, rule, message, severity, line, path]``, where
#: path ``"="`` means "the SKILL.md this row belongs to". Validators collect rows and
#: discovery stores them as they are; Diagnostic objects are built when asked for.
DiagnosticRow = list[Any]
_SEVERITIES = {str(s): s for s in Severity}


def diagnostic_to_row(d: Diagnostic, md: str | None) -> DiagnosticRow:
    path = None if d.path is None else ("=" if str(d.path) == md else str(d.path))
    return [d.code, d.rule, d.message, str(d.severity), d.line, path]


def diagnostic_from_row(row: DiagnosticRow, md: Path | None) -> Diagnostic:
    code, rule, message, severity, line, path = row
    where = md if path == "=" else (Path(path) if path else None)
    return Diagnostic(code, rule, message, severity=_SEVERITIES[severity], path=where, line=line)
