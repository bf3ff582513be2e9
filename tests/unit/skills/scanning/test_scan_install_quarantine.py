"""The scanner at install (refusal, --allow-risk, warnings) and quarantine of skills
from roots that are not trusted: unavailable with the reason, listed by
``entries()``, absent from what the model is offered, verdicts cached by content."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_samples import SAMPLES, write_sample

from skilldeck.config import Settings, load_settings
from skilldeck.errors import RiskyContentError
from skilldeck.skills import scanning
from skilldeck.skills.packaging import install
from skilldeck.skills.registry import EntryStatus, SkillRegistry
from skilldeck.skills.scanning import QUARANTINE_PREFIX, TRUSTED_MARKER, quarantine_reason
from skilldeck.skills.scanning import verdicts as verdicts_mod

HOSTILE = dict((name, files) for name, _, files in SAMPLES)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    ws = tmp_path / "ws"
    ws.mkdir()
    return load_settings(workspace=ws, home=tmp_path / "home")


@pytest.fixture(autouse=True)
def _fresh_memo() -> None:
    verdicts_mod._MEMO.clear()


def clean_skill(root: Path, name: str = "tidy") -> Path:
    return write_sample(root, name, {"references/guide.md": "# Guide\nFormat tables.\n"})


def test_install_refuses_high_findings(tmp_path: Path, settings: Settings) -> None:
    folder = write_sample(tmp_path / "src", "curl-pipe-sh", HOSTILE["curl-pipe-sh"])
    with pytest.raises(RiskyContentError, match=r"(?s)SC101 SKILL\.md:6.*--allow-risk") as info:
        install(folder, settings=settings)
    assert info.value.findings
    lines = str(info.value).splitlines()
    assert lines[0].endswith("refused by the content scanner, 1 high finding:")
    assert lines[1].startswith("  SC101 SKILL.md:6 ")
    assert all(len(line) <= 80 for line in lines), lines
    assert not (settings.workspace / ".skilldeck" / "skills" / "curl-pipe-sh").exists()


def test_allow_risk_installs_and_warns(tmp_path: Path, settings: Settings) -> None:
    folder = write_sample(tmp_path / "src", "curl-pipe-sh", HOSTILE["curl-pipe-sh"])
    result = install(folder, settings=settings, allow_risk=True)
    assert result.path.is_dir()
    assert any(w.startswith("SC101 (high) SKILL.md:6") for w in result.warnings)


def test_clean_skill_installs_without_scanner_warnings(tmp_path: Path, settings: Settings) -> None:
    result = install(clean_skill(tmp_path / "src"), settings=settings)
    assert not [w for w in result.warnings if w.startswith("SC")]


def untrusted_setup(tmp_path: Path) -> tuple[Settings, Path]:
    """A user root written by other tools (~/.claude/skills): not trusted."""
    home = Path.home()
    root = home / ".claude" / "skills"
    write_sample(root, "webhook-site", HOSTILE["webhook-site"])
    clean_skill(root)
    ws = tmp_path / "ws2"
    ws.mkdir()
    return load_settings(workspace=ws, home=tmp_path / "sdhome"), root


def test_untrusted_root_skill_is_quarantined_and_hidden_from_the_model(tmp_path: Path) -> None:
    settings, _ = untrusted_setup(tmp_path)
    registry = SkillRegistry.discover(settings)
    bad = registry.get("webhook-site")
    reason = registry.why_unavailable(bad)
    assert reason is not None and reason.startswith(QUARANTINE_PREFIX) and "SC201" in reason
    offered = {s.name for s in registry.usable()}
    assert "webhook-site" not in offered and "tidy" in offered
    entry = next(e for e in registry.entries() if e.name == "webhook-site")
    assert entry.status is EntryStatus.UNAVAILABLE and "SC201" in (entry.reason or "")


def test_marker_makes_a_root_trusted(tmp_path: Path) -> None:
    settings, root = untrusted_setup(tmp_path)
    (root / TRUSTED_MARKER).write_text("", encoding="utf-8")
    registry = SkillRegistry.discover(settings)
    assert "webhook-site" in {s.name for s in registry.usable()}


def test_explicit_root_and_own_roots_are_not_scanned(tmp_path: Path) -> None:
    settings, root = untrusted_setup(tmp_path)
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True)
    assert "webhook-site" in {s.name for s in registry.usable()}


def test_verdicts_are_cached_by_content_not_rescanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, root = untrusted_setup(tmp_path)
    calls: list[Path] = []
    real = scanning.scan_skill

    def counting(folder: Path) -> object:
        calls.append(Path(folder))
        return real(folder)

    monkeypatch.setattr(scanning, "scan_skill", counting)
    SkillRegistry.discover(settings)
    assert len(calls) == 2
    verdicts_mod._MEMO.clear()  # a new process: the on-disk cache answers
    SkillRegistry.discover(settings)
    assert len(calls) == 2
    # fixing the skill changes its content: scanned again, and released
    (root / "webhook-site" / "SKILL.md").write_text(
        "---\nname: webhook-site\ndescription: Fixed now.\n---\nPlain text.\n", encoding="utf-8"
    )
    registry = SkillRegistry.discover(settings)
    assert len(calls) == 3
    assert registry.why_unavailable(registry.get("webhook-site")) is None


def test_quarantine_reason_for_a_folder(tmp_path: Path) -> None:
    bad = write_sample(tmp_path, "bidi", HOSTILE["bidi"])
    good = clean_skill(tmp_path)
    assert "SC402" in (quarantine_reason(bad) or "")
    assert quarantine_reason(good) is None
