"""On the real corpus, ``validate_path`` (which builds no metadata model) reports
exactly what ``load_skill`` (which builds it) reports: every diagnostic, its line,
its path, the verdict and the name, in lenient and strict mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilldeck.skills.format import load_skill, validate_path

pytestmark = pytest.mark.corpus


@pytest.mark.parametrize("strict", [False, True])
def test_validate_path_reports_what_load_skill_reports(corpus: Path, strict: bool) -> None:
    reports = [r for r in validate_path(corpus, strict=strict) if r.path.name.lower() == "skill.md"]
    assert len(reports) > 3000
    for report in reports:
        skill, diagnostics = load_skill(report.path, strict=strict)
        assert report.diagnostics == diagnostics, report.path
        assert report.valid == (skill is not None and not any(d.is_error for d in diagnostics))
        if skill is not None:
            assert report.name == skill.name
