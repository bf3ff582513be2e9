"""What a scan reports: findings (code, severity, file, line, message) and a report.

Plain data, so the CLI renders it, install refuses on it and the verdict cache
stores it without knowing how a rule works.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from skilldeck.skills.scanning.rules import Severity

__all__ = ["Finding", "ScanReport"]

_RANK = {Severity.HIGH: 0, Severity.MEDIUM: 1, Severity.LOW: 2}


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    severity: Severity
    #: path relative to the scanned skill folder (posix)
    file: str
    line: int
    #: what was found and why it matters
    message: str
    #: the matched text, shortened and with invisible characters made visible
    excerpt: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["severity"] = self.severity.value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        return cls(
            code=str(data["code"]),
            severity=Severity(data["severity"]),
            file=str(data["file"]),
            line=int(data["line"]),
            message=str(data["message"]),
            excerpt=str(data.get("excerpt", "")),
        )

    def sort_key(self) -> tuple[int, str, int, str]:
        return (_RANK[self.severity], self.file, self.line, self.code)


@dataclass(slots=True)
class ScanReport:
    """The findings for one skill folder (or one loose file)."""

    path: Path
    findings: list[Finding] = field(default_factory=list)
    files_scanned: int = 0
    #: files not read (too large, binary, unreadable), with the reason
    skipped: list[str] = field(default_factory=list)

    @property
    def high(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.HIGH]

    def worst(self) -> Severity | None:
        return min((f.severity for f in self.findings), key=_RANK.__getitem__, default=None)

    def summary(self) -> str:
        """One line for a refusal or a quarantine reason: the high codes first."""
        picked = self.high or self.findings
        codes = sorted({f.code for f in picked})
        first = min(picked, key=Finding.sort_key) if picked else None
        if first is None:
            return "no findings"
        what = first.message.partition(": ")[0]
        more = f" (+{', '.join(c for c in codes if c != first.code)})" if len(codes) > 1 else ""
        return f"{first.code} at {first.file}:{first.line} ({what}){more}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "files_scanned": self.files_scanned,
            "worst": (w.value if (w := self.worst()) else None),
            "findings": [f.to_dict() for f in sorted(self.findings, key=Finding.sort_key)],
            "skipped": list(self.skipped),
        }
