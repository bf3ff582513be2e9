"""The table of diagnostic codes, and the collector validators report through.

Codes are stable: users' CI scripts and ``docs/skill-format.md`` depend on them.
Never renumber; retire a code by leaving it here unused.
"""

from __future__ import annotations

import difflib
import functools

from skilldeck.skills.format.parse import ParsedFrontmatter
from skilldeck.skills.model.diagnostics import (
    Diagnostic,
    DiagnosticRow,
    Severity,
    diagnostic_from_row,
)
from skilldeck.skills.model.names import KNOWN_FIELDS

#: code → rule slug. SD0xx: the file cannot be read as frontmatter (skill skipped).
#: SD1xx: a rule about the frontmatter's content.
RULES: dict[str, str] = {
    "SD001": "no-frontmatter",
    "SD002": "unclosed-frontmatter",
    "SD003": "invalid-yaml",
    "SD004": "frontmatter-not-mapping",
    "SD005": "invalid-encoding",
    "SD006": "frontmatter-too-large",
    "SD007": "yaml-too-complex",
    "SD008": "unreadable-file",
    "SD009": "missing-skill-md",
    "SD010": "package-not-folder",
    "SD101": "name-mismatch",
    "SD102": "name-missing",
    "SD103": "name-too-long",
    "SD104": "name-not-lowercase",
    "SD105": "name-hyphens",
    "SD106": "name-invalid-characters",
    "SD107": "name-not-text",
    "SD108": "name-unsafe",
    "SD110": "description-missing",
    "SD111": "description-too-long",
    "SD112": "description-not-text",
    "SD120": "compatibility-too-long",
    "SD121": "compatibility-not-text",
    "SD130": "metadata-not-mapping",
    "SD131": "metadata-value-not-text",
    "SD150": "unknown-field",
    "SD151": "non-spec-field",
    "SD152": "duplicate-field",
    "SD160": "invalid-value",
    "SD162": "unsupported-requirement",
    "SD170": "entrypoint-missing",
    "SD171": "entrypoint-outside-skill",
    "SD180": "credential-invalid",
    "SD181": "dependencies-invalid",
    "SD190": "reference-yaml",
    "SD191": "reference-bom",
    "SD192": "reference-delimiter",
    "SD193": "reference-encoding",
}


class Collector:
    """Accumulates diagnostics for one SKILL.md; ``flag`` is a warning in lenient mode
    and an error in strict mode (the spec rules skilldeck relaxes by default).

    Problems are kept as rows (see :data:`~skilldeck.skills.model.diagnostics.DiagnosticRow`):
    discovery stores them as they are in its snapshot, and :attr:`diagnostics` builds
    the Diagnostic objects for callers that want them.
    """

    __slots__ = ("_parsed", "has_errors", "lines", "rows", "strict")

    def __init__(self, parsed: ParsedFrontmatter, *, strict: bool) -> None:
        self._parsed = parsed
        self.lines = parsed.key_lines
        self.strict = strict
        self.rows: list[DiagnosticRow] = []
        self.has_errors = False

    def add(
        self,
        code: str,
        message: str,
        severity: Severity,
        *,
        key: str | None = None,
        line: int | None = None,
    ) -> None:
        if line is None:
            line = self.lines.get(key, 1) if key is not None else 1
        self.rows.append([code, RULES[code], message, str(severity), line, "="])
        if severity is Severity.ERROR:
            self.has_errors = True

    def error(self, code: str, message: str, *, key: str | None = None,
              line: int | None = None) -> None:  # fmt: skip
        self.add(code, message, Severity.ERROR, key=key, line=line)

    def warn(self, code: str, message: str, *, key: str | None = None,
             line: int | None = None) -> None:  # fmt: skip
        self.add(code, message, Severity.WARNING, key=key, line=line)

    def flag(self, code: str, message: str, *, key: str | None = None,
             line: int | None = None) -> None:  # fmt: skip
        severity = Severity.ERROR if self.strict else Severity.WARNING
        self.add(code, message, severity, key=key, line=line)

    def in_file_order(self) -> None:
        """Sort the rows by line (stable, so rules keep their order within a line)."""
        if len(self.rows) > 1:
            self.rows.sort(key=_line_of)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        path = self._parsed.path
        return [diagnostic_from_row(row, path) for row in self.rows]


def _line_of(row: DiagnosticRow) -> int:
    return row[4] or 0


@functools.lru_cache(maxsize=512)
def suggest_field(canon: str) -> str | None:
    """The known field an unknown one most likely misspells (cached: the same few
    unknown fields, ``author``, ``tags``…, recur across thousands of skills)."""
    close = difflib.get_close_matches(canon, sorted(KNOWN_FIELDS), n=1, cutoff=0.8)
    return close[0] if close else None
