"""Run the rules over a skill's files: SKILL.md, references, scripts, any text.

The threat is *instructions*: a SKILL.md that tells the model (or the user) to run
``curl … | bash``, to unzip a password-protected "installer", to read ``~/.ssh`` or
to drop its permission checks. So every text file of the folder is read — binary
files (a NUL byte in the first 8 KiB) are not — up to :data:`MAX_FILE_BYTES` each
and :data:`MAX_FILES` in all; symlinks are never followed (install refuses the ones
that leave the folder anyway). Build junk (``node_modules``, ``.git``, ``__pycache__``,
virtualenvs) is skipped, as pack and install skip it.

Scanning reads files but never runs or imports anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from skilldeck.errors import ResourceAccessError
from skilldeck.skills.scanning.detectors import LineOf, detect, visible
from skilldeck.skills.scanning.files import read_text, skill_files, skill_folders
from skilldeck.skills.scanning.findings import Finding, ScanReport
from skilldeck.skills.scanning.rules import RULES, Rule

__all__ = ["scan_file", "scan_paths", "scan_skill", "scan_text"]

#: the same finding at most this many times per file (a minified blob would repeat)
_PER_FILE_CAP = 20
#: shell quoting that splits a word without changing it (``c''url``, ``w\\get``,
#: ``s""h``); removed before the rules run a second time. Never a newline, so the
#: line numbers of the squashed text are those of the file.
_SHELL_QUOTING = re.compile(r"(?<=\w)(?:''|\"\"|\\)(?=[a-z])")


def scan_text(text: str, rel: str) -> list[Finding]:
    """The findings for one file's text; ``rel`` is its path inside the skill."""

    found = _rule_findings(text, rel)
    if _SHELL_QUOTING.search(text):  # c''url, w\get, s""h: what the shell would run
        seen = {(f.code, f.line) for f in found}
        found += [f for f in _rule_findings(_squashed(text), rel) if (f.code, f.line) not in seen]

    def line_of(offset: int) -> int:
        return text.count("\n", 0, offset) + 1

    found.extend(detect(rel, text, line_of, found))
    return _capped(found)


def _squashed(text: str) -> str:
    """Only the lines that hold split words, with the quoting removed; every other
    line left empty, so line numbers stay those of the file and the rules' second
    pass reads little."""
    lines = text.split("\n")
    return "\n".join(
        _SHELL_QUOTING.sub("", line) if _SHELL_QUOTING.search(line) else "" for line in lines
    )


def _rule_findings(text: str, rel: str) -> list[Finding]:
    def line_of(offset: int) -> int:
        return text.count("\n", 0, offset) + 1

    lowered = text.lower()
    found: list[Finding] = []
    for rule in RULES:
        if not rule.needles:
            found.extend(_apply(rule, text, rel, line_of, [(0, len(text))]))
        elif spans := _needle_lines(lowered, rule.needles, rule.lines_after):
            found.extend(_apply(rule, text, rel, line_of, spans))
    return found


def _needle_lines(
    lowered: str, needles: tuple[str, ...], lines_after: int
) -> list[tuple[int, int]]:
    """The lines (as offset spans, merged) holding a needle, plus ``lines_after``
    lines each: a rule's expression runs over these only, not the whole file."""
    spans: list[tuple[int, int]] = []
    for needle in needles:
        at = lowered.find(needle)
        while at >= 0:
            begin = lowered.rfind("\n", 0, at) + 1
            end = at
            for _ in range(lines_after + 1):
                end = lowered.find("\n", end + 1)
                if end < 0:
                    end = len(lowered)
                    break
            spans.append((begin, end))
            at = lowered.find(needle, end)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for begin, end in spans:
        if merged and begin <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((begin, end))
    return merged


def _apply(
    rule: Rule, text: str, rel: str, line_of: LineOf, spans: list[tuple[int, int]]
) -> Iterator[Finding]:
    seen: set[int] = set()
    matches = (m for begin, end in spans for m in rule.pattern.finditer(text, begin, end))
    for match in matches:
        line = line_of(match.start())
        if line in seen:
            continue
        seen.add(line)
        severity = rule.severity
        if rule.benign is not None:
            begin = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            if rule.benign.search(text[begin : end if end >= 0 else len(text)]):
                severity = rule.benign_severity
        message = f"{rule.title}: {rule.why}"
        yield Finding(rule.code, severity, rel, line, message, visible(match.group()))


def _capped(found: list[Finding]) -> list[Finding]:
    counts: dict[str, int] = {}
    kept = []
    for finding in found:
        counts[finding.code] = counts.get(finding.code, 0) + 1
        if counts[finding.code] <= _PER_FILE_CAP:
            kept.append(finding)
    return kept


def scan_skill(folder: Path) -> ScanReport:
    """Scan every text file of the skill (or any folder) at ``folder``."""
    folder = Path(folder)
    report = ScanReport(path=folder)
    for rel, path in skill_files(folder, report.skipped):
        text = read_text(path, rel, report.skipped)
        if text is None:
            continue
        report.files_scanned += 1
        report.findings.extend(scan_text(text, rel))
    report.findings.sort(key=Finding.sort_key)
    return report


def scan_file(path: Path) -> ScanReport:
    """Scan one loose file (a SKILL.md or a script on its own)."""
    path = Path(path)
    report = ScanReport(path=path)
    text = read_text(path, path.name, report.skipped)
    if text is not None:
        report.files_scanned = 1
        report.findings = sorted(scan_text(text, path.name), key=Finding.sort_key)
    elif not report.skipped:  # binary: say so ("not scanned" alone reads like a bug)
        report.skipped.append(
            f"{path.name}: binary, not text (a .skill package is scanned as it is installed)"
        )
    return report


def scan_paths(paths: Sequence[Path]) -> list[ScanReport]:
    """``skills scan PATH...``: a skill folder, a folder of skills, or a single file."""
    reports: list[ScanReport] = []
    for path in paths:
        path = Path(path)
        if path.is_file():
            reports.append(scan_file(path))
        elif path.is_dir():
            folders = skill_folders(path)
            if not folders:
                raise ResourceAccessError(
                    f"No skill found in {path} (no SKILL.md in it or below); pass a skill "
                    "folder, a folder of skills, or a single file to scan."
                )
            reports.extend(scan_skill(folder) for folder in folders)
        else:
            raise ResourceAccessError(
                f"{path} does not exist; pass a skill folder or a file to scan."
            )
    return reports
