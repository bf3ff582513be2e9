"""The content scanner: instruction-level threats in a skill's files.

A skill is text that a model obeys, so the attack of a malicious skill is usually an
*instruction* — "run ``curl … | bash``", "unzip this with password X", "read
``~/.ssh``", an order hidden in an HTML comment — rather than a binary. The rules
(``rules.py``, data: a stable code, a severity, what and why) and the detectors
(``detectors.py``, what one regular expression cannot say) turn a folder into
findings with a file and a line (``scanner.py``). ``verdicts.py`` keeps the result
by content hash, so skills from roots that are not trusted are scanned once per
content and never on every discovery, and says which skills are quarantined.

Install runs :func:`scan_skill` and refuses high findings unless ``allow_risk``;
``skilldeck skills scan`` runs :func:`scan_paths`. Names load lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skilldeck._moved import load_attribute

if TYPE_CHECKING:
    from skilldeck.skills.scanning.files import skill_files
    from skilldeck.skills.scanning.findings import Finding, ScanReport
    from skilldeck.skills.scanning.rules import RULES, Rule, Severity, describe
    from skilldeck.skills.scanning.scanner import scan_file, scan_paths, scan_skill, scan_text
    from skilldeck.skills.scanning.verdicts import (
        QUARANTINE_PREFIX,
        TRUSTED_MARKER,
        install_check,
        quarantine_reason,
        quarantined,
        root_is_trusted,
    )

_HOME: dict[str, str] = {
    "Finding": "findings",
    "ScanReport": "findings",
    "RULES": "rules",
    "Rule": "rules",
    "Severity": "rules",
    "describe": "rules",
    "scan_file": "scanner",
    "scan_paths": "scanner",
    "scan_skill": "scanner",
    "scan_text": "scanner",
    "skill_files": "files",
    "QUARANTINE_PREFIX": "verdicts",
    "TRUSTED_MARKER": "verdicts",
    "quarantined": "verdicts",
    "install_check": "verdicts",
    "quarantine_reason": "verdicts",
    "root_is_trusted": "verdicts",
}

__all__ = [
    "QUARANTINE_PREFIX",
    "RULES",
    "TRUSTED_MARKER",
    "Finding",
    "Rule",
    "ScanReport",
    "Severity",
    "describe",
    "install_check",
    "quarantine_reason",
    "quarantined",
    "root_is_trusted",
    "scan_file",
    "scan_paths",
    "scan_skill",
    "scan_text",
    "skill_files",
]


def __getattr__(name: str) -> Any:
    return load_attribute(__name__, _HOME, name, globals())
